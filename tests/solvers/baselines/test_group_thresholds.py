"""Equal-selection-rate thresholds: each group's cuts, the range maxima and the choice of cuts
against brute force on small data; the run's exact training gap within κ; accuracy that only
grows as κ loosens, on the frontier of a κ sweep; and the estimator (the matrix walk runs it from
the page and the CLI)."""

from __future__ import annotations

import importlib
import itertools
import warnings

import numpy as np
import pytest
from solver_data import two_groups, two_groups_flags, two_groups_frame

from engine.cli import main
from engine.estimator import FairFrontClassifier
from engine.fairness.constraint_spec import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.runs import Store
from engine.runs.frontier import frontier
from engine.runs.results import sweep_results
from engine.runs.worker import execute_run
from engine.solvers import solve, solver_card
from engine.solvers.baselines.group_thresholds import GroupCuts, equal_rate_cuts, range_argmax


@pytest.fixture(scope="module")
def data():
    return two_groups(n=1500)


def _tied_scores(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.round(rng.normal(size=n), 1), (rng.random(n) < 0.4).astype(np.int8)


@pytest.mark.parametrize("seed", range(5))
def test_a_groups_cuts_are_every_threshold_decision_with_its_rate_and_correct_count(seed):
    h, y = _tied_scores(np.random.default_rng(seed), 30)
    cuts = GroupCuts.of(h, y)
    assert len(cuts.rates) == len(np.unique(h)) + 1  # one per distinct score, and none selected
    assert np.all(np.diff(cuts.rates) > 0)
    for rate, correct, t in zip(cuts.rates, cuts.correct, cuts.thresholds, strict=True):
        selected = h - t > 0  # the reported map h − t_g at the threshold 0
        assert selected.mean() == rate
        assert np.sum(selected == (y == 1)) == correct


@pytest.mark.parametrize("seed", range(5))
def test_range_argmax_finds_the_largest_value_of_every_range(seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 6, 37).astype(float)  # many ties
    lo = rng.integers(0, 37, 200)
    hi = lo + 1 + rng.integers(0, 37 - lo)
    found = range_argmax(values, lo, hi)
    assert np.all((lo <= found) & (found < hi))
    assert np.array_equal(values[found], [values[a:b].max() for a, b in zip(lo, hi, strict=True)])


@pytest.mark.parametrize(("seed", "kappa"), itertools.product(range(6), (0.0, 0.1, 0.25)))
def test_the_chosen_cuts_are_the_best_of_all_within_kappa(seed, kappa):
    rng = np.random.default_rng(seed)
    cuts = [GroupCuts.of(*_tied_scores(rng, n)) for n in (5, 7, 8)]
    picks = equal_rate_cuts(cuts, kappa)
    rates = [c.rates[i] for c, i in zip(cuts, picks, strict=True)]
    assert max(rates) - min(rates) <= kappa + 1e-12
    best = max(
        sum(c.correct[i] for c, i in zip(cuts, choice, strict=True))
        for choice in itertools.product(*(range(len(c.rates)) for c in cuts))
        if np.ptp([c.rates[i] for c, i in zip(cuts, choice, strict=True)]) <= kappa + 1e-12
    )
    assert sum(c.correct[i] for c, i in zip(cuts, picks, strict=True)) == best


@pytest.mark.parametrize("model", [ModelSpec(), ModelSpec("mlp")], ids=["linear", "mlp"])
def test_the_runs_exact_training_gap_is_within_kappa_and_says_its_thresholds(data, model):
    problem = Problem(data, model, ConstraintSpec("DP", 0.02, None))
    free = solve(problem, "unconstrained").metrics["train"]
    solution = solve(problem, "group_thresholds")
    train = solution.metrics["train"]
    assert free["constraint"] > 0.2 and train["constraint"] <= 0.02
    assert train["constraint"] == pytest.approx(train["dp"])  # the exact gap
    assert "thresholds per group: F " in solution.reason
    assert train["accuracy"] > train["majority"]


def test_a_kappa_sweep_gives_training_accuracy_that_grows_as_kappa_loosens(tmp_path, monkeypatch):
    table = tmp_path / "two_groups.csv"
    two_groups_frame().to_csv(table, index=False)
    home = tmp_path / "runs"
    monkeypatch.setenv("FAIRFRONT_HOME", str(home))  # queued runs stay queued: run here
    monkeypatch.setattr(
        importlib.import_module("engine.runs.submit"), "ensure_runner", lambda *a, **k: None
    )
    kappas = (0.0, 0.02, 0.05, 0.1, 0.2, 0.5)
    argv = [
        "sweep",
        *two_groups_flags(table),
        "--constraint",
        "dp",
        "--solvers",
        "group_thresholds",
        "--kappas",
        *map(str, kappas),
    ]
    assert main(argv) == 0
    store = Store(home)
    (sweep,) = store.sweeps()
    for row in store.runs(sweep_id=sweep["id"]):
        assert execute_run(str(home), row.id) == "converged"
    points = frontier(sweep_results(store, sweep["id"]), metric="constraint", split="train")
    by_kappa = {p.kappa: p for p in points.points}
    assert sorted(by_kappa) == sorted(kappas)
    accuracy = [by_kappa[k].score for k in sorted(kappas)]
    assert all(a <= b for a, b in itertools.pairwise(accuracy))  # a looser κ never costs
    assert all(by_kappa[k].constraint <= k + 1e-12 for k in kappas)


def test_the_estimator_applies_each_groups_threshold_when_predicting():
    frame = two_groups_frame(n=800)
    X, y = frame.drop(columns="y"), frame["y"]
    clf = FairFrontClassifier(
        solver="group_thresholds",
        constraint="DP",
        kappa=0.03,
        validation_fraction=0.0,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y, sensitive_features="sex")
    predicted = clf.predict(X, sensitive_features=X["sex"])
    rates = [np.mean(predicted[X["sex"] == g]) for g in ("F", "M")]
    assert abs(rates[0] - rates[1]) <= 0.03 + 1e-12  # every row was a training row
    assert clf.metrics_["train"]["dp"] <= 0.03


def test_it_thresholds_classifiers_under_dp_only():
    card = solver_card("group_thresholds")
    assert card.families() == ["DP"]
    assert "selection rate" in card.refusal(ModelSpec(), "pSP")
