"""A solver started from a neighbouring κ's model (`Problem.start`): the same kind of result as
from its paper's start, in far fewer iterations."""

from __future__ import annotations

import numpy as np
import pytest
from adult_sample import adult_sample

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import solve
from engine.solvers.catalogue import solver_card, solver_names
from engine.solvers.paper003.cards import IDCAConfig

INTERVAL = (0.05, 0.3)
EPSILON = IDCAConfig().epsilon  # the surrogate rows of a finished run are within it


@pytest.fixture(scope="module")
def data():
    return adult_sample(3000)


def _problem(data, kappa: float, start=None, model=None) -> Problem:
    constraint = ConstraintSpec("pSP", kappa, INTERVAL)
    return Problem(
        data, model or ModelSpec(cross_terms=True), constraint, interval=INTERVAL, start=start
    )


def test_a_start_replaces_the_initial_model_and_leaves_the_given_one_untouched(data):
    cold = _problem(data, 0.1).init_params()
    start = {"w": np.arange(cold["w"].size, dtype=float), "aux.theta": np.ones(3)}
    params = _problem(data, 0.1, start).init_params()
    assert set(params) == {"w"}  # the start's auxiliary variables belong to its own κ and I
    assert np.array_equal(params["w"], start["w"])
    params["w"][0] = 99.0
    assert start["w"][0] == 0.0


def test_a_start_of_another_model_is_refused_in_words(data):
    start = {"w": np.zeros(3)}
    with pytest.raises(UserError, match=r"warm start does not fit this model: .*parameter w"):
        _problem(data, 0.1, start).init_params()
    mlp = ModelSpec(kind="mlp", hidden=(4,))
    with pytest.raises(UserError, match="warm start does not fit"):
        _problem(data, 0.1, start, model=mlp).init_params()


def test_only_solvers_whose_cards_say_why_take_a_warm_start():
    warm = {name for name in solver_names() if solver_card(name).warm_start}
    assert {"idca", "ssg", "ssw", "ssl_alm", "alm", "plada"} <= warm
    assert not {"unconstrained", "exponentiated_gradient", "badr_gd"} & warm


@pytest.mark.slow
def test_a_warm_kappa_sweep_matches_the_cold_one_in_far_fewer_iterations(data):
    """Continuation from tight to loose κ: every warm point as feasible for the surrogate as its
    cold twin, its exact train pSP and test accuracy within sampling noise (3,000 rows), and the
    warm points together in well under the cold runs' iterations (about 55 % of them)."""
    start, cold_iterations, warm_iterations = None, 0, 0
    for kappa in (0.08, 0.15, 0.3):
        cold = solve(_problem(data, kappa), "idca")
        warm = solve(_problem(data, kappa, start), "idca")
        for run in (cold, warm):
            last = [r for r in run.trajectory if r.kind == "surrogate"][-1]
            assert last.max_violation <= EPSILON  # the surrogate constraint holds
        assert abs(warm.metrics["train"]["constraint"] - cold.metrics["train"]["constraint"]) < 0.03
        assert abs(warm.metrics["test"]["accuracy"] - cold.metrics["test"]["accuracy"]) < 0.015
        if start is not None:
            cold_iterations += cold.iterations
            warm_iterations += warm.iterations
        start = warm.params
    assert warm_iterations < 0.6 * cold_iterations


@pytest.mark.slow
@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_a_start_outside_a_tight_kappas_feasible_set_is_led_back_to_feasibility(data, scale):
    """The unconstrained model (and a larger one, whose scores saturate the ramps) lies far
    outside κ = 0.02's feasible set, so IDCA's first subproblems have no nearly-feasible
    iterate: it follows their constraint steps, and where they cannot move, heads for w⁰ = 0,
    until it reaches one, instead of stopping early on an unmoved infeasible iterate."""
    tight = _problem(data, 0.02)
    start = {"w": scale * solve(tight, "unconstrained").params["w"]}
    warm = solve(_problem(data, 0.02, start), "idca")
    last = [r for r in warm.trajectory if r.kind == "surrogate"][-1]
    assert last.max_violation <= EPSILON
    exact = tight.report(start, splits=("train",))["train"]["constraint"]
    assert warm.metrics["train"]["constraint"] < exact / 2
