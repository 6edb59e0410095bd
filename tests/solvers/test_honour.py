"""Honouring κ on validation: from the model that holds κ on the training data, re-solving with
a tighter inner κ′ until the exact value meets κ there (`engine.solvers.honour`), on a sample
of Adult whose ramp surrogate is loose."""

from __future__ import annotations

import pytest
from adult_sample import adult_sample

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.fairness.noise import value_noise
from engine.models import ModelSpec
from engine.problem import Problem
from engine.runs.honour_search import honour_search
from engine.solvers.honour import (
    BRACKET,
    LEAST_STEP,
    MOST_STEP,
    RESOLVES,
    chosen_solve,
    next_kappa_prime,
    solve_honouring,
)

INTERVAL = (0.05, 0.3)


@pytest.fixture(scope="module")
def data():
    return adult_sample(3000)


def _problem(data, kappa: float) -> Problem:
    return Problem(
        data, ModelSpec(cross_terms=True), ConstraintSpec("pSP", kappa, INTERVAL), interval=INTERVAL
    )


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


def test_on_a_validation_split_too_small_for_kappa_the_search_keeps_the_held_model(data):
    kappa = 0.2
    honoured = solve_honouring(_problem(data, kappa), "idca", "val")
    search = honour_search(honoured.trajectory)
    sigma = value_noise(_problem(data, kappa).constraint, data.val.groups, data.val.y)
    assert search.sigma == pytest.approx(sigma) and kappa < RESOLVES * sigma
    assert search.split == "val" and search.split_rows == len(data.val)
    held = [row for row in search.rows if row.train_value <= kappa]
    # the model that first holds κ on train (or its solve run on at the same κ′, when
    # holding's share cut it short), kept
    first, chosen = held[0], search.chosen
    assert chosen is first or (
        chosen.solve == first.solve + 1 and chosen.kappa_prime == first.kappa_prime
    )
    assert chosen.train_value <= kappa
    assert search.chosen.value > kappa  # validation misses κ by less than it can resolve
    later = search.rows[search.rows.index(chosen) + 1 :]
    assert len(later) <= 2  # it stopped tightening early
    assert honoured.metrics["train"]["constraint"] <= kappa
    assert f"validation ({len(data.val):,} rows) cannot tell pSP apart below about " in (
        honoured.reason
    )
    assert f"σ ≈ {sigma:.2g}" in honoured.reason
    assert "(the model that holds κ on train)" in honoured.reason


def test_the_search_on_validation_stops_within_its_solves(data):
    few = solve_honouring(_problem(data, 0.1), "idca", "val", max_solves=1)
    search = honour_search(few.trajectory)
    held = next(i for i, row in enumerate(search.rows) if row.train_value <= 0.1)
    assert len(search.rows) <= held + 2  # the held model and one solve on validation


def test_honouring_is_refused_where_there_is_no_kappa_or_no_such_split(data):
    with pytest.raises(UserError, match="'val' \\(validation\\) or 'train'"):
        solve_honouring(_problem(data, 0.1), "idca", "test")
    free = Problem(data, ModelSpec(), None)
    with pytest.raises(UserError, match="no κ to honour"):
        solve_honouring(free, "unconstrained", "val")
