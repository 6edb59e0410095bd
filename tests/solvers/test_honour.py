"""Honouring κ: re-solving with a tighter inner κ′ until the exact value meets κ on the chosen
split (`engine.solvers.honour`), on a sample of Adult whose ramp surrogate is loose."""

from __future__ import annotations

import pytest
from adult_sample import adult_sample

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.fairness.noise import value_noise
from engine.models import ModelSpec
from engine.problem import Problem
from engine.runs.honour_search import honour_search
from engine.solvers import solve
from engine.solvers.honour import (
    BRACKET,
    HONOUR,
    LEAST_STEP,
    MAX_SOLVES,
    MOST_STEP,
    RESOLVES,
    chosen_solve,
    next_kappa_prime,
    solve_honouring,
)
from engine.solvers.options import Budget

INTERVAL = (0.05, 0.3)


@pytest.fixture(scope="module")
def data():
    return adult_sample(3000)


def _problem(data, kappa: float) -> Problem:
    return Problem(data, ModelSpec(cross_terms=True), ConstraintSpec("pSP", kappa, INTERVAL),
                   interval=INTERVAL)  # fmt: skip


def _search(solution) -> list:
    return [r for r in solution.trajectory if r.kind == HONOUR]


def test_the_search_stops_at_once_when_kappa_itself_is_met_and_tightens_while_it_is_missed():
    assert next_kappa_prime(0.1, [(0.1, 0.09)]) is None
    first = next_kappa_prime(0.1, [(0.1, 0.125)])
    assert first == pytest.approx(0.1 * 0.1 / 0.125)  # by the ratio it missed by
    assert next_kappa_prime(0.1, [(0.1, 10.0)]) == pytest.approx(0.1 * LEAST_STEP)
    assert next_kappa_prime(0.1, [(0.1, 0.1001)]) == pytest.approx(0.1 * MOST_STEP)
    # two misses: where their line crosses κ
    secant = next_kappa_prime(0.1, [(0.1, 0.15), (0.06, 0.12)])
    assert secant == pytest.approx(0.06 + (0.1 - 0.12) / ((0.15 - 0.12) / 0.04))


def test_once_a_kappa_prime_meets_kappa_the_search_bisects_for_the_loosest_that_does():
    tried = [(0.1, 0.15), (0.05, 0.08)]
    assert next_kappa_prime(0.1, tried) == pytest.approx(0.075)
    tried += [(0.075, 0.11)]
    assert next_kappa_prime(0.1, tried) == pytest.approx(0.0625)
    narrow = [(0.1, 0.15), (0.05, 0.08), (0.05 + 0.9 * BRACKET * 0.1, 0.11)]
    assert next_kappa_prime(0.1, narrow) is None


def test_with_sigma_the_search_stops_tightening_when_a_resolve_gains_no_more_than_sigma():
    tried = [(0.05, 0.084), (0.03, 0.065)]  # 0.019 lower: less than σ = 0.043
    assert next_kappa_prime(0.05, tried, sigma=0.043) is None
    assert next_kappa_prime(0.05, tried, sigma=0.01) == next_kappa_prime(0.05, tried) < 0.03
    # measured against the best before, not the last: a solve that only wins back a loss stops
    wandering = [(0.2, 0.5), (0.1, 0.3), (0.08, 0.4), (0.06, 0.28)]
    assert next_kappa_prime(0.05, wandering, sigma=0.05) is None
    assert next_kappa_prime(0.05, wandering[:2], sigma=0.05) is not None


def test_with_sigma_the_bisection_stops_once_its_two_ends_are_within_sigma():
    tried = [(0.1, 0.113), (0.088, 0.095)]
    assert next_kappa_prime(0.1, tried) == pytest.approx(0.094)
    assert next_kappa_prime(0.1, tried, sigma=0.043) is None
    assert next_kappa_prime(0.1, tried, sigma=0.01) == pytest.approx(0.094)


def test_with_sigma_the_loosest_model_within_sigma_of_the_lowest_is_reported():
    none_helped = [(0.05, 0.084), (0.03, 0.065), (0.02, 0.06)]
    assert chosen_solve(0.05, none_helped, sigma=0.043) == 0  # κ′ = κ kept
    assert chosen_solve(0.05, none_helped, sigma=None) == 2  # without σ: the lowest
    one_helped = [(0.1, 0.3), (0.05, 0.15), (0.03, 0.13)]
    assert chosen_solve(0.01, one_helped, sigma=0.043) == 1  # 0.15 is within σ of 0.13
    met = [(0.1, 0.13), (0.05, 0.08), (0.075, 0.09)]
    assert chosen_solve(0.1, met, sigma=0.043) == 2  # the loosest that meets κ, σ or not


def test_on_a_validation_split_too_small_for_kappa_the_search_keeps_kappa_and_says_why(data):
    kappa = 0.2
    honoured = solve_honouring(_problem(data, kappa), "idca", "val")
    plain = solve(_problem(data, kappa), "idca")
    search = honour_search(honoured.trajectory)
    sigma = value_noise(_problem(data, kappa).constraint, data.val.groups, data.val.y)
    assert search.sigma == pytest.approx(sigma) and kappa < RESOLVES * sigma
    assert search.split_rows == len(data.val)
    assert 1 < len(search.rows) < MAX_SOLVES  # it stopped tightening early
    assert all(row.value > kappa for row in search.rows)
    assert search.rows[0].value - min(row.value for row in search.rows) <= sigma
    assert search.chosen.kappa_prime == kappa
    assert honoured.metrics["val"]["constraint"] == plain.metrics["val"]["constraint"]
    assert f"validation ({len(data.val):,} rows) cannot tell pSP apart below about " in (
        honoured.reason
    )
    assert f"σ ≈ {sigma:.2g}" in honoured.reason and "(κ itself)" in honoured.reason


@pytest.mark.slow
def test_the_honoured_model_meets_kappa_on_train_where_the_plain_one_does_not(data):
    kappa = 0.1
    plain = solve(_problem(data, kappa), "idca")
    honoured = solve_honouring(_problem(data, kappa), "idca", "train")
    assert plain.metrics["train"]["constraint"] > kappa
    assert honoured.metrics["train"]["constraint"] <= kappa
    search = _search(honoured)
    chosen = [r for r in search if r.state["chosen"] == "yes"]
    assert len(chosen) == 1 and chosen[0].values["kappa_prime"] < kappa
    assert chosen[0].values["value"] == honoured.metrics["train"]["constraint"]
    assert search[0].values["kappa_prime"] == kappa  # the first solve is at κ itself
    final = honoured.trajectory[-1]
    assert final.kind == "final" and final.values["train.constraint"] == chosen[0].values["value"]
    assert honoured.iterations == sum(r.values["iterations"] for r in search)
    steps = [r.iteration for r in honoured.trajectory if r.kind == "surrogate"]
    assert steps == sorted(steps)  # the solves' records run on, one after the other
    assert f"κ′ = {chosen[0].values['kappa_prime']:.4g}" in honoured.reason
    # each re-solve starts from the model before it: a fraction of a cold solve's iterations
    cold = solve(_problem(data, search[1].values["kappa_prime"]), "idca")
    assert search[1].values["iterations"] < cold.iterations / 2


@pytest.mark.slow
def test_a_tighter_kappa_is_honoured_by_a_tighter_kappa_prime(data):
    loose = _search(solve_honouring(_problem(data, 0.15), "idca", "train"))
    tight = _search(solve_honouring(_problem(data, 0.1), "idca", "train"))
    chosen = [next(r.values["kappa_prime"] for r in s if r.state["chosen"] == "yes")
              for s in (loose, tight)]  # fmt: skip
    assert chosen[0] > chosen[1]


@pytest.mark.slow
def test_the_search_stops_within_its_solves_and_budget_and_says_how_close_it_came(data):
    few = solve_honouring(_problem(data, 0.1), "idca", "train", max_solves=2)
    assert len(_search(few)) == 2
    assert "κ not honoured on train after 2 solves, the most allowed" in few.reason
    values = [r.values["value"] for r in _search(few)]
    assert f"pSP {min(values):.4f} > κ = 0.1" in few.reason  # the closest one is reported
    first = solve(_problem(data, 0.1), "idca").iterations
    budget = Budget(max_iterations=first + 100)
    spent = solve_honouring(_problem(data, 0.1), "idca", "train", budget=budget)
    assert spent.iterations <= budget.max_iterations
    assert "the run's budget is spent" in spent.reason


def test_honouring_is_refused_where_there_is_no_kappa_or_no_such_split(data):
    with pytest.raises(UserError, match="'val' \\(validation\\) or 'train'"):
        solve_honouring(_problem(data, 0.1), "idca", "test")
    free = Problem(data, ModelSpec(), None)
    with pytest.raises(UserError, match="no κ to honour"):
        solve_honouring(free, "unconstrained", "val")
