"""fairlearn's GridSearch as a front: every model of its grid is one point, placed by its Lagrange
multipliers, and is fairlearn's model of that grid point; the run reports the most accurate model
within κ on the training split (or the one of the smallest gap that beats the majority class),
so that κ now chooses among the
grid, where fairlearn's own rule gives the same model whatever κ."""

from __future__ import annotations

import numpy as np
import pytest
from adult_sample import adult_sample
from fairlearn.reductions import DemographicParity, GridSearch
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Solution, solve
from engine.solvers.fairlearn.cards import GridSearchConfig
from engine.solvers.fairlearn.fairlearn_reductions import kappa_pick as grid_kappa_pick
from engine.solvers.fairlearn.fairlearn_reductions import multiplier_labels

pytestmark = pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")
LOOSE, TIGHT, UNREACHABLE = 0.2, 0.08, 0.02  # κ on the sample's DP gaps of the grid models
GRID = GridSearchConfig()


@pytest.fixture(scope="module")
def data():
    return adult_sample()


@pytest.fixture(scope="module")
def solutions(data) -> dict[tuple[float, str], Solution]:
    """Runs by (κ, select)."""
    return {
        (kappa, select): solve(
            Problem(data, ModelSpec(), ConstraintSpec("DP", kappa)),
            "grid_search",
            GridSearchConfig(select=select),
        )
        for kappa in (LOOSE, TIGHT, UNREACHABLE)
        for select in ("kappa", "fairlearn")
    }


def kappa_pick(front: list[dict], kappa: float) -> int:
    """By brute force over the front: of the models with a training gap ≤ κ, the first of the
    highest training accuracy; without one, the first of the smallest training gap among those
    more accurate than the majority class (among all when none is)."""
    train = [member["metrics"]["train"] for member in front]
    within = [i for i, m in enumerate(train) if m["constraint"] <= kappa]
    if within:
        return max(within, key=lambda i: (train[i]["accuracy"], -i))
    useful = [i for i, m in enumerate(train) if m["accuracy"] > m["majority"]]
    return min(useful or range(len(front)), key=lambda i: (train[i]["constraint"], i))


@pytest.mark.parametrize("kappa", [LOOSE, TIGHT, UNREACHABLE])
def test_the_reported_model_is_the_kappa_rules_pick_over_the_front(solutions, kappa):
    solution = solutions[kappa, "kappa"]
    pick = solution.front[kappa_pick(solution.front, kappa)]
    assert solution.metrics == pick["metrics"]  # the same model, measured on every split
    assert f"reported {pick['label']}" in solution.stop.text
    reachable = any(m["metrics"]["train"]["constraint"] <= kappa for m in solution.front)
    assert reachable == (kappa != UNREACHABLE)
    assert ("no model of the grid has a training gap within" in solution.stop.text) != reachable


def test_a_tight_and_a_loose_kappa_report_different_models_fairlearns_rule_the_same(solutions):
    def params(kappa, select):
        return solutions[kappa, select].params["w"]

    assert not np.allclose(params(LOOSE, "kappa"), params(TIGHT, "kappa"))
    assert solutions[TIGHT, "kappa"].metrics["train"]["constraint"] <= TIGHT
    assert (
        solutions[LOOSE, "kappa"].metrics["train"]["accuracy"]
        > (solutions[TIGHT, "kappa"].metrics["train"]["accuracy"])
    )
    np.testing.assert_array_equal(params(LOOSE, "fairlearn"), params(UNREACHABLE, "fairlearn"))


def test_the_front_is_fairlearns_grid_of_models(data, solutions):
    """Each point is the grid's model at its multiplier: the same error rate and multiplier as
    fairlearn's own run, and its exact gap is fairlearn's γ (a group's rate minus everyone's)
    divided by 1 − the group's share, as `difference_bound` takes it."""
    problem = Problem(data, ModelSpec(), ConstraintSpec("DP", LOOSE))
    train = data.train
    with threadpool_limits(limits=1):
        direct = GridSearch(
            LogisticRegression(),
            DemographicParity(),
            grid_size=GRID.grid_size,
            grid_limit=GRID.grid_limit,
        ).fit(problem.features("train"), train.y, sensitive_features=train.groups)
    front = solutions[LOOSE, "kappa"].front
    assert len(front) == GRID.grid_size == len({m["label"] for m in front})
    (name,) = {key for m in front for key in m["coordinates"]}  # one group's multiplier
    group = data.group_names.index(name.removeprefix("lambda."))
    signed = (
        direct.lambda_vecs_.loc[("+", "all", group)] - direct.lambda_vecs_.loc[("-", "all", group)]
    )
    np.testing.assert_allclose([m["coordinates"][name] for m in front], signed, atol=1e-12)
    assert [m["label"] for m in front] == [f"λ = {v:.3g}" for v in signed + 0.0]
    errors = [1.0 - m["metrics"]["train"]["accuracy"] for m in front]
    np.testing.assert_allclose(errors, direct.objectives_, atol=1e-12)
    share = np.bincount(train.groups)[group] / len(train)
    gamma = direct.gammas_.loc[("+", "all", group)].abs()
    gaps = [m["metrics"]["train"]["constraint"] for m in front]
    np.testing.assert_allclose(gaps, gamma / (1.0 - share), atol=1e-12)


def test_labels_take_the_digits_that_keep_them_distinct():
    assert multiplier_labels([{"a": 1.9996}, {"a": 2.0}]) == ["λ = 1.9996", "λ = 2"]
    assert multiplier_labels([{"a": 0.4, "b": -1.2}]) == ["λ = (0.4, -1.2)"]


def test_without_a_model_within_kappa_a_degenerate_grid_model_is_passed_over():
    """With κ out of reach, the smallest gap among the models that beat the majority class; the
    smallest of all only when none does."""
    gaps = np.array([0.90, 0.95, 0.97, 0.99])
    accuracy = np.array([0.52, 0.60, 0.71, 0.69])
    majority = np.full(4, 0.55)
    index, reason = grid_kappa_pick(gaps, accuracy, majority, 0.05)
    assert index == 1 and "among those more accurate there than always predicting" in reason
    index, reason = grid_kappa_pick(gaps, accuracy, np.full(4, 0.8), 0.05)
    assert index == 0 and "though none is more accurate" in reason
    index, reason = grid_kappa_pick(gaps, accuracy, majority, 0.98)
    assert index == 2 and "the most accurate on the training split of the 3 of 4" in reason
