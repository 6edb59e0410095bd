"""The forms of a model's parameters (`engine.model_forms`): each is recognised in the parameters
of the solver that produces it, and round-trips through a model file scoring the same."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from solver_data import two_groups, two_groups_frame

from engine.fairness.constraint_spec import ConstraintSpec
from engine.model_file import from_prepared, model_bytes, read_model
from engine.model_forms import FORMS, GROUP_MAP, MIXTURE, MODEL, THRESHOLDS, ModelForm, form_of
from engine.models import ModelSpec
from engine.objectives import LogisticLoss, Objective, PairwiseAUCLoss
from engine.problem import Problem
from engine.scoring import model_scores
from engine.solvers import Budget, solve
from engine.solvers.fairlearn.cards import (
    ExponentiatedGradientConfig,
    ThresholdOptimizerConfig,
)
from engine.solvers.paper004.cards_postprocess import PostProcessConfig
from engine.solvers.records import Solution

pytestmark = pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")
N, SEED = 600, 0
BUDGET = Budget(max_iterations=200)


@dataclass(frozen=True)
class Case:
    """The solver that produces a form, with what it needs to train."""

    solver: str
    constraint: ConstraintSpec
    config: object = None
    objective: Objective = LogisticLoss()


DP = ConstraintSpec("DP", 0.05)
CASES = {
    MODEL: Case("unconstrained", DP),
    MIXTURE: Case("exponentiated_gradient", DP, ExponentiatedGradientConfig(max_iter=10)),
    THRESHOLDS: Case("threshold_optimizer", DP, ThresholdOptimizerConfig()),
    GROUP_MAP: Case(
        "auc_postprocess",
        ConstraintSpec("auc_gap", 0.05, None, options=(("variant", "group"),)),
        PostProcessConfig(scale_step=0.25, shift_step=0.25),
        objective=PairwiseAUCLoss(),
    ),
}


@cache
def solved(form: ModelForm) -> tuple[Problem, Solution]:
    """The problem on tiny two-group data and the solution of the solver of `form`."""
    case = CASES[form]
    problem = Problem(two_groups(N, SEED), ModelSpec(), case.constraint, objective=case.objective)
    return problem, solve(problem, case.solver, case.config, budget=BUDGET, seed=SEED)


def by_name(form: ModelForm) -> str:
    return CASES[form].solver


def test_every_form_has_a_solver_that_produces_it():
    assert set(CASES) == set(FORMS) and len(FORMS) == len({form.name for form in FORMS})


@pytest.mark.parametrize("form", FORMS, ids=by_name)
def test_the_form_is_recognised_in_the_parameters_its_solver_produces(form):
    params = solved(form)[1].params
    assert form_of(params) is form
    assert set(form.keys) <= set(params)
    assert ("w" in params) is form.own_weights  # a linear model's own weights


@pytest.mark.parametrize("form", FORMS, ids=by_name)
def test_every_form_round_trips_through_a_model_file_and_scores_the_same(form):
    problem, solution = solved(form)
    exported = from_prepared(problem.data, problem.model, solution.params, problem.objective.name)
    loaded = read_model(model_bytes(exported))
    assert form_of(loaded.params) is form
    assert loaded.params.keys() == solution.params.keys()
    assert all(np.array_equal(loaded.params[k], v) for k, v in solution.params.items())
    test = problem.rows("test")  # the solver's own test scores, from the loaded parameters
    assert np.array_equal(model_scores(loaded.model, loaded.params, test), solution.test_scores)
    rows = two_groups_frame(N, SEED)
    scores = loaded.scores(rows)
    assert np.array_equal(scores, exported.scores(rows))
    assert np.isfinite(scores).all() and len(np.unique(scores)) > 1
    assert loaded.has_probabilities is (
        form.randomised or problem.objective.name == LogisticLoss.name
    )
    if form.randomised:
        assert np.array_equal(loaded.predict_proba(rows)[:, 1], np.clip(scores + 0.5, 0, 1))
