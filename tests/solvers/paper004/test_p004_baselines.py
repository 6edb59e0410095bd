"""Paper 004's proxy-Lagrangian and correlation-penalty baselines (App. E.2): the hinge proxies
and batch AUCs by brute force over pairs, the λ-player's stationary distribution, the penalty's
gradient, both solvers against the unconstrained AUC model, and the refusal of Ex. 2 for the
penalty."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from solver_data import toy_prepared, two_groups, two_groups_flags, two_groups_frame

from engine.cli import main
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.models import ModelSpec
from engine.objectives import PairwiseAUCLoss
from engine.problem import Problem
from engine.solvers import Budget, solve, solver_card
from engine.solvers.paper004.corr_penalty import abs_correlation
from engine.solvers.paper004.proxy_lagrangian import (
    batch_pair,
    batch_rows,
    stationary,
    swap_regret_step,
)

KAPPA = 0.05


def _brute(h: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """AUC (ties ½), mean max(0, 1 + d) and mean 1 − max(0, 1 − d) over the pairs, one by one."""
    pairs = [(h[i], h[j]) for i, j in itertools.product(a, b)]
    auc = np.mean([1.0 if x > y else 0.5 if x == y else 0.0 for x, y in pairs])
    upper = np.mean([max(0.0, 1.0 + x - y) for x, y in pairs])
    lower = np.mean([1.0 - max(0.0, 1.0 - (x - y)) for x, y in pairs])
    return auc, upper, lower


@pytest.mark.parametrize("seed", range(5))
def test_the_hinge_proxies_bound_the_batch_auc_over_every_pair(seed):
    rng = np.random.default_rng(seed)
    h = np.round(rng.normal(scale=1.5, size=30), 1)  # rounded: ties across and within sets
    a = np.flatnonzero(rng.random(30) < 0.4)
    b = np.flatnonzero(rng.random(30) < 0.6)  # overlapping with a: self-pairs are ties
    pair = batch_pair(h, a, b)
    auc, upper, lower = _brute(h, a, b)
    assert pair.auc == pytest.approx(auc) and pair.upper == pytest.approx(upper)
    assert pair.lower == pytest.approx(lower)
    assert lower <= auc <= upper
    # the gradients, by central differences where no pair sits on a kink (|d| = 1)
    h = rng.normal(size=30)
    pair = batch_pair(h, a, b)
    for which, grads in (("upper", pair.upper_grads), ("lower", pair.lower_grads)):
        numeric = np.zeros(30)
        for i in range(30):
            e = np.zeros(30)
            e[i] = 1e-6
            plus = getattr(batch_pair(h + e, a, b), which)
            minus = getattr(batch_pair(h - e, a, b), which)
            numeric[i] = (plus - minus) / 2e-6
        analytic = np.zeros(30)
        analytic[a] += grads[0]
        analytic[b] += grads[1]
        assert np.allclose(analytic, numeric, atol=1e-6), which


def test_each_rows_proxy_bounds_its_indicator_and_all_all_is_one_half():
    rng = np.random.default_rng(7)
    h = rng.normal(size=40)
    sets = [np.flatnonzero(rng.random(40) < p) for p in (0.3, 0.4, 0.3, 0.5)]
    rows = batch_rows(h, [tuple(sets), (sets[0], sets[1], None, None)], KAPPA)
    assert rows.seen.all() and np.all(rows.proxy >= rows.indicator)
    first, second = _brute(h, sets[0], sets[1])[0], _brute(h, sets[2], sets[3])[0]
    assert rows.indicator[:2] == pytest.approx([first - second - KAPPA, second - first - KAPPA])
    assert rows.indicator[2:] == pytest.approx([first - 0.5 - KAPPA, 0.5 - first - KAPPA])
    assert np.all(rows.jacobian[2:, np.setdiff1d(np.arange(40), np.r_[sets[0], sets[1]])] == 0)
    # a set with no batch member: both rows of its pair are unseen, with nothing to step on
    empty = batch_rows(h, [(sets[0], np.zeros(0, int), sets[2], sets[3])], KAPPA)
    assert not empty.seen.any() and not empty.indicator.any() and not empty.jacobian.any()


def test_lambda_is_the_stationary_distribution_and_follows_a_lasting_violation():
    rng = np.random.default_rng(0)
    size = 3
    log_m = np.full((size, size), -np.log(size))
    lam = stationary(np.exp(log_m))
    assert lam == pytest.approx(np.full(size, 1 / size))
    for _ in range(300):
        noise = rng.normal(scale=0.05, size=2)
        violations = np.r_[0.0, 0.1 + noise[0], -0.1 + noise[1]]  # row 1 violated, row 2 met
        log_m = swap_regret_step(log_m, violations, lam, 1.0)
        lam = stationary(np.exp(log_m))
        M = np.exp(log_m)
        assert np.allclose(M.sum(axis=0), 1.0)
        assert np.allclose(M @ lam, lam, atol=1e-12)
        assert np.all(lam >= 0) and lam.sum() == pytest.approx(1.0)
    assert lam[1] / lam[0] > 3.0 and lam[2] / lam[0] < 0.3, lam


def test_the_stationary_distribution_is_exact_for_a_chain_close_to_the_identity():
    a, b = 1e-14, 3e-14  # Pr(0 → 1), Pr(1 → 0): M = I up to 1e-14
    M = np.array([[1 - a, b], [a, 1 - b]])
    assert stationary(M) == pytest.approx([0.75, 0.25], rel=1e-9)


def test_the_correlation_penalty_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    h, gamma = rng.normal(size=12), (rng.random(12) < 0.4).astype(float)
    value, grad = abs_correlation(h, gamma)
    assert value == pytest.approx(abs(np.corrcoef(h, gamma)[0, 1]))
    numeric = np.array(
        [
            (abs_correlation(h + e, gamma)[0] - abs_correlation(h - e, gamma)[0]) / 2e-6
            for e in 1e-6 * np.eye(12)
        ]
    )
    assert np.allclose(grad, numeric, atol=1e-7)
    # undefined: constant scores (w = 0) or one group only; nothing added
    assert abs_correlation(np.zeros(12), gamma)[0] == 0.0
    assert not abs_correlation(h, np.ones(12))[1].any()


def _problem(variant: str, prepared=None) -> Problem:
    constraint = ConstraintSpec("auc_gap", KAPPA, None, options=(("variant", variant),))
    return Problem(
        prepared or two_groups(n=2000), ModelSpec(), constraint, objective=PairwiseAUCLoss()
    )


@pytest.mark.parametrize(
    ("solver", "variant"),
    [("proxy_lagrangian", "group"), ("proxy_lagrangian", "inter"), ("corr_penalty", "group")],
)
def test_each_baseline_closes_the_gap_of_the_unconstrained_auc_model(solver, variant):
    problem = _problem(variant)
    free = solve(problem, "unconstrained", budget=Budget(max_iterations=200), seed=0).metrics
    assert free["test"]["constraint"] > 0.3  # two_groups has a real gap
    solution = solve(problem, solver, budget=Budget(max_iterations=5000), seed=0)
    metrics = solution.metrics
    assert metrics["val"]["constraint"] <= KAPPA  # the selection found an iterate within κ
    assert metrics["test"]["constraint"] < free["test"]["constraint"] / 3
    assert metrics["test"]["auc"] > 0.7


@pytest.mark.parametrize("solver", ["proxy_lagrangian", "corr_penalty"])
def test_each_baseline_runs_with_three_groups_and_reports_a_lambda_per_row(solver):
    problem = _problem("group", toy_prepared(n=900, groups=3))
    solution = solve(problem, solver, budget=Budget(max_iterations=300), seed=0)
    assert solution.status in ("budget", "converged")
    state = solution.last_surrogate().state
    if solver == "proxy_lagrangian":
        duals = [state[f"dual.{row}"] for row in problem.bound.rows]
        assert len(duals) == 6 and sum(duals) + state["lambda0"] == pytest.approx(1.0)
    else:
        assert 0.0 <= state["batch_penalty"] <= 3.0  # three pairs, |Corr| ≤ 1 each


@pytest.mark.parametrize("solver", ["proxy_lagrangian", "corr_penalty"])
def test_a_seed_reproduces_a_run_of_a_network(solver):
    constraint = ConstraintSpec("auc_gap", KAPPA)
    problem = Problem(
        two_groups(n=400), ModelSpec("mlp", hidden=(6,)), constraint, objective=PairwiseAUCLoss()
    )
    runs = [solve(problem, solver, budget=Budget(max_iterations=200), seed=s) for s in (3, 3, 4)]
    for name, value in runs[0].params.items():
        np.testing.assert_array_equal(value, runs[1].params[name])
    assert not np.array_equal(runs[2].params["layers.0.weight"], runs[0].params["layers.0.weight"])
    assert runs[0].metrics["test"]["auc"] > 0.5


def test_the_correlation_penalty_is_refused_for_the_inter_group_gap(tmp_path, capsys):
    card = solver_card("corr_penalty")
    reason = card.refusal(ModelSpec(), "auc_gap", variant="inter")
    assert reason == (
        "corr_penalty applies to the AUC gaps group only (paper 004, App. E.2: "
        "only Ex. 1 can be written as a penalty on the correlation of scores and "
        "group), not inter"
    )
    assert card.refusal(ModelSpec(), "auc_gap", variant="group") is None
    with pytest.raises(UserError, match="corr_penalty applies to the AUC gaps group only"):
        solve(
            _problem("inter", two_groups(n=400)),
            "corr_penalty",
            budget=Budget(max_iterations=5),
            seed=0,
        )
    table = tmp_path / "two_groups.csv"
    two_groups_frame().to_csv(table, index=False)
    code = main(
        [
            "run",
            *two_groups_flags(table),
            "--constraint",
            "auc_gap",
            "--auc-variant",
            "inter",
            "--kappa",
            "0.05",
            "--solver",
            "corr_penalty",
            "--iterations",
            "5",
            "--quiet",
            "--out",
            str(tmp_path / "r.json"),
        ]
    )
    printed = capsys.readouterr()
    assert code == 2 and printed.err.strip() == f"error: {reason}"
    assert "Traceback" not in printed.err + printed.out
