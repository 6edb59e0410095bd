"""IDCA (paper 003, Alg. 1–2) on small data: feasibility of the iterates, effect, guards."""

import dataclasses

import numba
import numpy as np
import pytest
import torch
from solver_data import toy_prepared

from engine.errors import UserError
from engine.fairness import psp
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, solve
from engine.solvers.paper003.cards import IDCAConfig
from engine.solvers.paper003.idca import IDCA
from engine.solvers.paper003.idca_linearization import ramp_psp_minus_linearization
from engine.threads import use_threads

INTERVAL = (0.1, 0.5)


CROSS = ModelSpec(cross_terms=True)


def psp_problem(toy, kappa=0.1, family="pSP", model=CROSS):
    return Problem(toy, model, ConstraintSpec(family, kappa, INTERVAL), interval=INTERVAL)


def surrogate_rows(problem, params):
    h = torch.from_numpy(problem.scores(params))
    aux = {"theta": torch.from_numpy(params["aux.theta"])} if "aux.theta" in params else {}
    return problem.bound.surrogate(h, aux).numpy()


@pytest.mark.parametrize("family", ["pSP", "pDP"])
def test_every_outer_iterate_is_nearly_feasible_for_the_surrogate(toy, family):
    problem = psp_problem(toy, family=family)
    config = IDCAConfig(outer_iterations=15, inner_iterations=60, epsilon=1e-3, patience=0)
    solver = IDCA(problem, config, np.random.default_rng(0))
    worst = []
    while True:
        outer = solver.outer
        info = solver.step()
        if solver.outer != outer or info.done:
            worst.append(surrogate_rows(problem, solver.candidate()).max())
        if info.done:
            break
    assert len(worst) == 15
    assert max(worst) <= config.epsilon + 1e-12  # the inner approximation keeps f ≤ g ≤ ε


def test_subproblem_constraints_majorise_the_surrogate(toy):
    problem = psp_problem(toy)
    solver = IDCA(problem, IDCAConfig(), np.random.default_rng(0))
    for _ in range(300):  # move away from w = 0 first
        solver.step()
    sub, rng = solver.sub, np.random.default_rng(1)
    dc = problem.bound.dc
    for _ in range(20):
        v = sub.w + rng.normal(scale=0.5, size=sub.w.shape)
        theta = sub.theta + rng.normal(scale=0.5, size=sub.theta.shape)
        h = torch.from_numpy(problem.design().matvec(v))
        aux = {"theta": torch.from_numpy(theta)}
        exact_rows = problem.bound.surrogate(h, aux).numpy()
        g = dc.plus(h, aux).numpy() - (
            sub.minus + sub.d_w @ (v - sub.w) + sub.d_theta @ (theta - sub.theta)
        )
        assert np.all(g >= exact_rows - 1e-10)  # eq. 31–32: f_i ≤ g_i


@pytest.mark.filterwarnings("ignore::engine.fairness.constraints.TinyBandWarning")
def test_constrained_training_lowers_train_psp_far_below_unconstrained(toy):
    unconstrained = solve(
        Problem(toy, ModelSpec(cross_terms=True), None, interval=INTERVAL), "unconstrained"
    )
    constrained = solve(
        psp_problem(toy, kappa=0.05),
        "idca",
        IDCAConfig(outer_iterations=60, inner_iterations=100, select="last"),
    )
    before, after = unconstrained.metrics["train"]["psp"], constrained.metrics["train"]["psp"]
    assert before > 0.3
    assert after < 0.5 * before
    h = constrained.test_scores
    assert constrained.metrics["test"]["psp"] == pytest.approx(psp(h, toy.test.groups, *INTERVAL))


def test_validation_selection_picks_the_best_snapshot(toy):
    solution = solve(
        psp_problem(toy),
        "idca",
        IDCAConfig(outer_iterations=40, inner_iterations=30, snapshot_every=10),
    )
    accuracies = [s["metrics"]["val"]["accuracy"] for s in solution.snapshots]
    assert [s["outer"] for s in solution.snapshots] == [10, 20, 30, 40]
    assert solution.metrics["val"]["accuracy"] == pytest.approx(max(accuracies))


def test_early_stop_when_the_objective_stalls(toy):
    """The run stops at the first outer iteration whose f0 is within the tolerance of the f0
    `patience` outer iterations before: the same run without the stop shows where that is."""
    full = IDCAConfig(
        outer_iterations=300, inner_iterations=5, epsilon=1e-9, snapshot_every=1, patience=0
    )
    objectives = []
    original = IDCA._start_outer

    def recording(self, w, theta):
        original(self, w, theta)
        objectives.append(self.sub.objective)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(IDCA, "_start_outer", recording)
        solve(psp_problem(toy), "idca", full)
    f0 = np.array(objectives)  # f0 at w⁰, w¹, ..., from w⁰ = 0 every outer iterate is feasible
    patience, tolerance = 4, 1e-3
    stalled = [
        k
        for k in range(patience + 1, len(f0))
        if f0[k - patience] - f0[k] <= tolerance * max(1.0, abs(f0[k]))
    ]
    assert stalled, "the toy run should stall within 300 outer iterations"
    config = dataclasses.replace(full, patience=patience, stop_tolerance=tolerance)
    solution = solve(psp_problem(toy), "idca", config)
    assert solution.status == "converged"
    assert f"stopped at outer iteration {stalled[0]} of 300" in solution.reason


def test_idca_needs_a_linear_model_and_a_dc_family(toy):
    with pytest.raises(UserError, match="trains linear models only"):
        solve(psp_problem(toy, model=ModelSpec(kind="mlp", hidden=(4,))), "idca")
    problem = Problem(toy, ModelSpec(), ConstraintSpec("quad_inter", 0.05), interval=INTERVAL)
    with pytest.raises(UserError, match="difference-of-convex parts .*, not quad_inter"):
        solve(problem, "idca")


def test_idca_keeps_the_dp_gap_of_a_family_with_dc_parts_on_train(toy):
    """Any family with DC parts works: the subproblem's rows bound the surrogate rows, so the
    last record of the solver's own view is feasible within ε."""
    problem = Problem(toy, ModelSpec(), ConstraintSpec("DP", 0.1), interval=INTERVAL)
    solution = solve(problem, "idca", IDCAConfig(outer_iterations=5, inner_iterations=50))
    assert solution.status in ("converged", "budget")
    assert solution.last_surrogate().max_violation <= IDCAConfig().epsilon


@pytest.mark.parametrize("solver", ["idca", "ssg"])
def test_a_vacuous_psp_constraint_gives_objective_steps_only(toy, solver):
    """κ = 1 leaves pSP without rows (Lemma 5.1 has no grid point): nothing is violated, so every
    step is an objective step and the run ends like the unconstrained one would."""
    problem = psp_problem(toy, kappa=1.0)
    assert problem.bound.m == 0
    solution = solve(problem, solver, budget=Budget(max_iterations=60))
    assert solution.status == "budget" and solution.metrics["test"]["accuracy"] > 0.6
    assert {r.state.get("branch") for r in solution.trajectory if r.kind == "surrogate"} == {
        "objective"
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"outer_iterations": 0}, "option outer_iterations must be > 0, not 0"),
        ({"epsilon": -1.0}, "option epsilon must be > 0, not -1"),
        ({"select": "best"}, "option select must be one of validation, last, not 'best'"),
        ({"proximal": -0.1}, "option proximal must be ≥ 0, not -0.1"),
    ],
)
def test_bad_configs_are_explained(kwargs, message):
    with pytest.raises(UserError, match=message):
        IDCAConfig(**kwargs)


def test_budget_stops_the_run(toy):
    solution = solve(psp_problem(toy), "idca", budget=Budget(max_iterations=37))
    assert solution.status == "budget" and solution.iterations == 37


@pytest.mark.parametrize(
    ("groups", "model", "proximal"),
    [(2, CROSS, 0.0), (3, CROSS, 0.1), (3, ModelSpec(), 0.0)],
)
def test_compiled_steps_follow_the_generic_steps(groups, model, proximal):
    problem = psp_problem(toy_prepared(seed=3, groups=groups), model=model)
    config = IDCAConfig(outer_iterations=4, inner_iterations=60, proximal=proximal, patience=0)
    generic = IDCA(problem, dataclasses.replace(config, compiled=False), np.random.default_rng(0))
    compiled = IDCA(problem, config, np.random.default_rng(0))
    assert generic._ramp_psp is None and compiled._ramp_psp is not None
    branches = {"generic": set(), "compiled": set()}
    while True:
        info = generic.step()
        branches["generic"].add(info.state["branch"])
        if info.done:
            break
    while True:
        info = compiled.advance(7)
        assert info.iterations <= 7
        branches["compiled"].add(info.state["branch"])
        if info.done:
            break
    assert branches["generic"] == branches["compiled"] == {"objective", "constraint"}
    assert compiled.total == generic.total and compiled.outer == generic.outer == 4
    for key, value in generic.candidate().items():
        np.testing.assert_allclose(compiled.candidate()[key], value, rtol=1e-9, atol=1e-12)
    assert compiled.objective == pytest.approx(generic.objective, rel=1e-12)


def test_compiled_steps_are_the_same_on_any_number_of_threads():
    problem = psp_problem(toy_prepared(seed=4, groups=3))
    config = IDCAConfig(outer_iterations=3, inner_iterations=80, patience=0)
    candidates, before = [], numba.get_num_threads()
    try:
        for threads in (1, 2, 1):
            use_threads(threads)
            solver = IDCA(problem, config, np.random.default_rng(0))
            while not solver.advance(50).done:
                pass
            candidates.append(solver.candidate())
    finally:
        use_threads(before)
    for other in candidates[1:]:
        for key, value in candidates[0].items():
            np.testing.assert_array_equal(other[key], value)


def test_compiled_run_keeps_the_iteration_budget(toy):
    solution = solve(psp_problem(toy), "idca", budget=Budget(max_iterations=61))
    assert solution.status == "budget" and solution.iterations == 61


@pytest.mark.parametrize(("groups", "model"), [(2, CROSS), (3, CROSS), (3, ModelSpec())])
def test_compiled_linearisation_equals_the_generic_one(groups, model):
    problem = psp_problem(toy_prepared(seed=5, groups=groups), model=model)
    solver = IDCA(problem, IDCAConfig(), np.random.default_rng(0))
    rng = np.random.default_rng(1)
    w = rng.normal(scale=0.7, size=problem.design().shape[1])
    scores = problem.design().matvec(w)
    theta = np.quantile(scores, 1 - problem.bound.grid)  # cuts spread across the scores
    compiled = ramp_psp_minus_linearization(solver._ramp_psp, w, theta, solver._workspace)
    value, d_w, d_theta, h = solver._minus_linearization(w, theta)
    assert (scores > theta.max() + 0.5).any() and (scores < theta.min() - 0.5).any()
    np.testing.assert_allclose(compiled.scores, h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compiled.value, value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compiled.d_w, d_w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(compiled.d_theta, d_theta, rtol=1e-12, atol=1e-12)
