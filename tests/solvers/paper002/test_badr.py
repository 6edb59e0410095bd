"""Paper 002's solvers against its definitions: the implicit gradient against finite
differences, λ on the simplex, badr-gd against a grid search of Φ, β → ∞ against ERM, minimax
against the equalised group losses, and the single- and two-loop methods against each other."""

from __future__ import annotations

import gc

import cvxpy as cp
import numpy as np
import pytest
from solver_data import toy_prepared, two_groups

from engine.fairness.badr_measures import BADR_MEASURES
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers.budget import Budget
from engine.solvers.catalogue import solver_card
from engine.solvers.driver import solve
from engine.solvers.paper002.badr_lower import GroupLosses, project_simplex
from engine.solvers.paper002.badr_upper import UpperObjective
from engine.solvers.stepped_loop import SteppedLoop

CLASSIFICATION_MEASURES = [m for m, e in BADR_MEASURES.items() if "classification" in e.tasks]


def problem(groups: int = 2, n: int = 400, seed: int = 0) -> Problem:
    data = two_groups(n, seed, slopes=(1.0, 0.4)) if groups == 2 else toy_prepared(n, seed, groups)
    return Problem(data, ModelSpec(), None)


def phi(lower: GroupLosses, upper: UpperObjective, weights: np.ndarray, start=None) -> float:
    return upper.parts(lower.solve(weights, start))[0].value


@pytest.mark.parametrize("groups", [2, 3])
@pytest.mark.parametrize("measure", CLASSIFICATION_MEASURES)
def test_the_hypergradient_matches_finite_differences_along_the_simplex(measure, groups):
    prob = problem(groups)
    lower = GroupLosses(prob, l2=0.05)
    upper = UpperObjective(lower, measure, rho=2.0, beta=0.3)
    weights = np.linspace(1.0, 2.0, groups) / np.linspace(1.0, 2.0, groups).sum()
    w = lower.solve(weights)
    grad = lower.hypergradient(w, weights, upper).grad
    rng = np.random.default_rng(1)
    for _ in range(3):
        direction = rng.normal(size=groups)
        direction -= direction.mean()  # a direction inside the simplex's plane
        eps = 1e-5
        numeric = (
            phi(lower, upper, weights + eps * direction, w)
            - phi(lower, upper, weights - eps * direction, w)
        ) / (2 * eps)
        assert grad @ direction == pytest.approx(numeric, rel=1e-4, abs=1e-9)


def test_the_lower_level_is_the_exact_minimiser_of_the_weighted_losses():
    prob = problem()
    lower = GroupLosses(prob, l2=0.05)
    weights = np.array([0.3, 0.7])
    w = lower.solve(weights)
    assert np.linalg.norm(lower.weighted(w, weights)[1]) < 1e-9
    # the intercept carries no penalty: the gradient of the loss part alone vanishes in it
    h = lower.scores(w)
    _, slopes = lower.objective.per_sample(h, lower.y)
    assert abs(lower.row_weights(weights) @ slopes) < 1e-9
    # the closed-form Hessian against finite differences of the gradient
    v = np.random.default_rng(0).normal(size=w.size)
    numeric = lower.weighted(w + 1e-6 * v, weights)[1] - lower.weighted(w - 1e-6 * v, weights)[1]
    np.testing.assert_allclose(lower.hessian(h, weights) @ v, numeric / 2e-6, rtol=1e-5, atol=1e-8)


def test_the_simplex_projection_is_the_nearest_point_of_the_simplex():
    rng = np.random.default_rng(0)
    for size in (2, 3, 7):
        for _ in range(5):
            v = rng.normal(scale=2.0, size=size)
            x = cp.Variable(size)
            cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [x >= 0, cp.sum(x) == 1]).solve()
            np.testing.assert_allclose(project_simplex(v), x.value, atol=1e-6)


def _lambdas(solution) -> list[np.ndarray]:
    records = [r for r in solution.trajectory if r.kind == "surrogate"]
    return [np.array([v for k, v in r.state.items() if k.startswith("lambda.")]) for r in records]


@pytest.mark.parametrize("solver", ["badr_gd", "badr_sgd", "badr_implicit"])
def test_lambda_stays_on_the_simplex(solver):
    options = {"step_lambda": 50.0} if solver != "badr_implicit" else {}
    config = solver_card(solver).Config(measure="dm", **options)
    solution = solve(problem(3), solver, config, Budget(max_iterations=40))
    lambdas = _lambdas(solution)
    assert len(lambdas) >= 2
    for weights in lambdas:
        assert weights.min() >= 0.0 and weights.sum() == pytest.approx(1.0, abs=1e-9)


def test_badr_gd_reaches_the_grid_argmin_of_phi_with_two_groups():
    prob = problem()
    config = solver_card("badr_gd").Config(
        measure="individual", l2=0.05, step_lambda=20.0, iterations=3000, tolerance=1e-9
    )
    lower = GroupLosses(prob, l2=0.05)
    upper = UpperObjective(lower, "individual", rho=1.0, beta=0.0)
    grid = [phi(lower, upper, np.array([a, 1 - a])) for a in np.linspace(0, 1, 201)]
    solution = solve(prob, "badr_gd", config)
    reached = upper.parts(solution.params["w"])[0].value
    assert reached <= min(grid) + 1e-6 * (max(grid) - min(grid)) + 1e-9
    assert reached < np.median(grid)  # the problem is not flat


@pytest.mark.parametrize("method", ["slsqp", "frank_wolfe"])
def test_the_two_loop_method_agrees_with_the_grid_and_with_badr_gd(method):
    prob = problem()
    config = solver_card("badr_implicit").Config(measure="individual", l2=0.05, method=method)
    lower = GroupLosses(prob, l2=0.05)
    upper = UpperObjective(lower, "individual", rho=1.0, beta=0.0)
    grid = np.linspace(0, 1, 201)
    values = [phi(lower, upper, np.array([a, 1 - a])) for a in grid]
    solution = solve(prob, "badr_implicit", config)
    assert upper.parts(solution.params["w"])[0].value <= min(values) + 1e-7


def test_a_large_beta_recovers_the_erm_weights():
    prob = problem(3)
    config = solver_card("badr_implicit").Config(measure="dp", l2=0.05, beta=1e4)
    solution = solve(prob, "badr_implicit", config)
    weights = _lambdas(solution)[-1]
    sizes = np.bincount(prob.data.train.groups)
    np.testing.assert_allclose(weights, sizes / sizes.sum(), atol=2e-3)


def test_minimax_weights_equalise_the_active_group_losses():
    prob = problem(3, n=600, seed=2)
    solution = solve(prob, "minimax", solver_card("minimax").Config(l2=0.05))
    weights = _lambdas(solution)[-1]
    lower = GroupLosses(prob, l2=0.05)
    w = solution.params["w"]
    losses = lower.group_losses(lower.scores(w), w)
    active = weights > 1e-3
    assert active.sum() >= 2
    assert np.ptp(losses[active]) < 1e-4
    assert losses.max() <= losses[active].max() + 1e-6
    # no model on the front has a smaller largest group loss
    rng = np.random.default_rng(0)
    for draw in rng.dirichlet(np.ones(3), size=30):
        other = lower.solve(draw, w)
        assert lower.group_losses(lower.scores(other), other).max() >= losses.max() - 1e-6


def test_one_fit_keeps_the_vertex_of_the_lowest_measure():
    prob = problem(3)
    solution = solve(prob, "one_fit", solver_card("one_fit").Config(measure="eopp", l2=0.05))
    lower = GroupLosses(prob, l2=0.05)
    upper = UpperObjective(lower, "eopp", rho=1.0, beta=0.0)
    values = [phi(lower, upper, vertex) for vertex in np.eye(3)]
    np.testing.assert_array_equal(_lambdas(solution)[-1], np.eye(3)[np.argmin(values)])


def test_a_stepped_loop_ends_its_thread_when_nobody_steps_it():
    import threading

    before = threading.active_count()
    loop = SteppedLoop(lambda ask: [ask(np.array([float(i)])) for i in range(100)])
    assert loop.next_point()[0] == 0.0
    loop.answer(1.0)
    assert loop.next_point()[0] == 1.0
    del loop
    gc.collect()
    for _ in range(100):
        if threading.active_count() <= before:
            break
        threading.Event().wait(0.01)
    assert threading.active_count() <= before


def test_a_stepped_loop_hands_the_optimisers_error_to_the_stepper():
    def optimise(ask):
        ask(np.zeros(1))
        raise ValueError("bad")

    loop = SteppedLoop(optimise)
    loop.next_point()
    loop.answer(0.0)
    with pytest.raises(ValueError, match="bad"):
        loop.next_point()


def test_a_beta_front_runs_from_badr_to_erm():
    prob = problem(2)
    config = solver_card("badr_front").Config(measure="dp", l2=0.05, knob="beta", points=5)
    solution = solve(prob, "badr_front", config)
    assert [m["coordinates"]["beta"] for m in solution.front] == [0.0, 1e-3, 0.1, 10.0, 1e3]
    lambdas = [
        np.array([m["coordinates"][f"lambda.{g}"] for g in prob.data.group_names])
        for m in solution.front
    ]
    sizes = np.bincount(prob.data.train.groups)
    np.testing.assert_allclose(lambdas[-1], sizes / sizes.sum(), atol=2e-3)  # β = 1000: ERM
    lower = GroupLosses(prob, l2=0.05)
    upper = UpperObjective(lower, "dp", rho=1.0, beta=0.0)
    fair = [upper.parts(lower.solve(weights))[0].fair for weights in lambdas]
    badr = solve(prob, "badr_implicit", solver_card("badr_implicit").Config(measure="dp", l2=0.05))
    assert fair[0] == pytest.approx(upper.parts(badr.params["w"])[0].fair, abs=1e-7)  # β = 0
    assert fair[0] <= min(fair) + 1e-9


def regression_problem(n: int = 300, seed: int = 0) -> Problem:
    import pandas as pd

    from engine.data.dataset import Dataset
    from engine.data.grouping import GroupingSpec
    from engine.data.prepare import PrepareOptions, prepare
    from engine.objectives import SquaredLoss
    from engine.task import Task

    rng = np.random.default_rng(seed)
    group = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + 0.5 * group[:, None]
    target = X @ np.array([1.0, -2.0, 0.5]) + 1.5 * group + rng.normal(size=n)
    frame = pd.DataFrame(
        {"x0": X[:, 0], "x1": X[:, 1], "x2": X[:, 2], "g": np.array(["a", "b"])[group]}
    )
    dataset = Dataset(
        name="toy",
        frame=frame,
        label=target,
        numeric=("x0", "x1", "x2"),
        categorical=(),
        protected=("g",),
        label_name="t",
        task=Task.REGRESSION,
    )
    data = prepare(dataset, PrepareOptions(grouping=(GroupingSpec("g"),), seed=seed))
    return Problem(data, ModelSpec(), None, objective=SquaredLoss())


def test_the_ridge_lower_level_is_scikit_learns_weighted_ridge():
    from sklearn.linear_model import Ridge

    prob = regression_problem()
    lower = GroupLosses(prob, l2=0.1)
    weights = np.array([0.8, 0.2])
    w = lower.solve(weights)
    # Σ r_i ½(h_i − y_i)² + (μ/2)‖w‖²_⋆, times 2: sklearn's Σ r_i (h_i − y_i)² + μ‖w‖²
    ridge = Ridge(alpha=0.1).fit(
        prob.data.train.X, prob.data.train.y, sample_weight=lower.row_weights(weights)
    )
    np.testing.assert_allclose(w, np.concatenate([[ridge.intercept_], ridge.coef_]), atol=1e-8)


def test_the_squared_hinge_lower_level_is_the_direct_minimiser():
    import scipy.optimize

    from engine.objectives import SquaredHingeLoss

    data = two_groups(300, 1)
    prob = Problem(data, ModelSpec(), None, objective=SquaredHingeLoss())
    lower = GroupLosses(prob, l2=0.05)
    weights = np.array([0.35, 0.65])
    X = np.column_stack([np.ones(len(data.train.y)), data.train.X])
    zeta, r = 2.0 * data.train.y - 1.0, lower.row_weights(weights)

    def direct(w):
        margin = np.maximum(0.0, 1.0 - zeta * (X @ w))
        return r @ margin**2 + 0.025 * w[1:] @ w[1:]

    best = scipy.optimize.minimize(
        direct, np.zeros(X.shape[1]), method="BFGS", options={"gtol": 1e-10}
    )
    w = lower.solve(weights)
    assert lower.weighted(w, weights)[0] == pytest.approx(direct(w))
    assert direct(w) <= best.fun + 1e-10
    np.testing.assert_allclose(w, best.x, atol=1e-4)


@pytest.mark.parametrize("measure", ["dp", "individual", "group_variance", "hsic"])
def test_badr_runs_on_ridge_regression_with_the_regression_measures(measure):
    prob = regression_problem()
    config = solver_card("badr_implicit").Config(measure=measure, l2=0.1)
    solution = solve(prob, "badr_implicit", config)
    lower = GroupLosses(prob, l2=0.1)
    upper = UpperObjective(lower, measure, rho=1.0, beta=0.0)
    grid = [phi(lower, upper, np.array([a, 1 - a])) for a in np.linspace(0, 1, 101)]
    assert upper.parts(solution.params["w"])[0].value <= min(grid) + 1e-7
    assert solution.metrics["test"]["rmse"] > 0


def test_the_minimax_dual_and_the_conic_epigraph_agree():
    prob = problem(3, n=300, seed=4)
    runs = {
        method: solve(prob, "minimax", solver_card("minimax").Config(l2=0.05, method=method))
        for method in ("dual", "epigraph")
    }
    np.testing.assert_allclose(
        _lambdas(runs["dual"])[-1], _lambdas(runs["epigraph"])[-1], atol=2e-3
    )
    np.testing.assert_allclose(runs["dual"].params["w"], runs["epigraph"].params["w"], atol=1e-4)


def test_badr_sgd_estimates_are_unbiased_for_badr_gd_directions():
    prob = problem(2, n=300)
    card = solver_card("badr_sgd")
    config = card.Config(measure="dp", l2=0.05, batch_size=8, clip=1e9)
    stochastic = card.load()(prob, config, np.random.default_rng(0))
    full = solver_card("badr_gd").load()(
        prob, solver_card("badr_gd").Config(measure="dp", l2=0.05), np.random.default_rng(0)
    )
    for solver in (stochastic, full):  # the same point (w, v, λ) away from the start
        solver.w = solver.w + 0.1
        solver.v = np.linspace(-1.0, 1.0, solver.w.size)
        solver.weights = np.array([0.3, 0.7])
    expected = full.directions()[:3]
    draws = [stochastic.directions()[:3] for _ in range(3000)]
    for k, target in enumerate(expected):
        mean = np.mean([d[k] for d in draws], axis=0)
        spread = np.std([d[k] for d in draws], axis=0) / np.sqrt(len(draws))
        assert np.all(np.abs(mean - target) <= 5 * spread + 1e-12)
        assert np.any(spread > 0)  # the estimates are random, not the full-data values


def test_a_badr_run_draws_its_weights_group_losses_measure_and_stationarity_live():
    from engine.plots.trajectory import SHARED_PANELS, TrajectoryRun, trajectory_figure

    prob = problem(3)
    config = solver_card("badr_gd").Config(measure="dp", l2=0.05, step_lambda=5.0, iterations=200)
    solution = solve(prob, "badr_gd", config)
    records = [r.to_dict() for r in solution.trajectory]
    panels = solver_card("badr_gd").state_panels
    fig = trajectory_figure([TrajectoryRun("badr_gd", records, panels=SHARED_PANELS + panels)])
    titles = [fig.layout[key].title.text for key in fig.layout if key.startswith("yaxis")]
    assert [panel.key for panel in panels] == ["lambda", "group_loss", "fair", "stationarity"]
    assert all(panel.title in titles for panel in panels)
    weights = [t for t in fig.data if t.name and t.name.startswith("lambda ")]
    assert sorted(t.name for t in weights) == [f"lambda {g}" for g in sorted(prob.data.group_names)]
    totals = np.sum([np.asarray(t.y, dtype=float) for t in weights], axis=0)
    np.testing.assert_allclose(totals, 1.0, atol=1e-9)  # the weights drawn lie on the simplex


def test_a_badr_runs_trajectory_shows_its_measures_exact_counterpart_whatever_the_page_holds():
    import dataclasses

    from engine.data.prepare import PrepareOptions
    from engine.fairness.constraint_spec import ConstraintSpec
    from engine.plots.trajectory import trajectory_run
    from engine.runs.spec import RunSpec

    spec = RunSpec(
        data=None,
        prepare=PrepareOptions(grouping=()),
        model=ModelSpec(),
        constraint=None,
        interval=(0.05, 0.3),
        solver="badr_gd",
        config={"measure": "eopp"},
    )
    page_view = ConstraintSpec("pSP", 0.05, (0.05, 0.3))
    badr = trajectory_run("badr_gd", spec, [], page_view)
    assert (badr.quantity, badr.metric) == ("EOpp gap", "eopp")
    unconstrained = dataclasses.replace(spec, solver="unconstrained", config={})
    reference = trajectory_run("unconstrained", unconstrained, [], page_view)
    assert reference.quantity == "pSP"
