"""The L-BFGS against known optima and scipy's, its line search against the strong Wolfe
conditions, and its chunked runs against one uninterrupted run."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize, rosen, rosen_der

from engine.solvers.lbfgs import CURVATURE, LBFGS, SUFFICIENT_DECREASE, Point


def rosenbrock(x: np.ndarray) -> tuple[float, np.ndarray]:
    return float(rosen(x)), rosen_der(x)


def logistic(features: np.ndarray, labels: np.ndarray, l2: float):
    def value_and_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
        margins = (2 * labels - 1) * (features @ w)
        value = np.logaddexp(0, -margins).mean() + 0.5 * l2 * w @ w
        weights = -(2 * labels - 1) / (1 + np.exp(margins)) / len(labels)
        return float(value), features.T @ weights + l2 * w

    return value_and_grad


@pytest.fixture
def regression():
    rng = np.random.default_rng(3)
    features = rng.normal(size=(300, 6)) * np.array([1, 10, 0.1, 3, 1, 30])  # ill-conditioned
    labels = (features @ rng.normal(size=6) + rng.normal(size=300) > 0).astype(float)
    return logistic(features, labels, l2=1e-3)


def test_it_finds_the_minimum_of_the_rosenbrock_function():
    solver = LBFGS(rosenbrock, np.array([-1.2, 1.0, -0.5, 0.8]), tolerance_change=1e-14)
    progress = solver.run(500)
    assert progress.converged and progress.iterations < 500
    np.testing.assert_allclose(solver.x, np.ones(4), atol=1e-6)


def test_it_reaches_scipys_optimum_of_a_regularised_logistic_loss(regression):
    solver = LBFGS(regression, np.zeros(6), tolerance_change=1e-14)
    assert solver.run(1000).converged
    theirs = minimize(regression, np.zeros(6), jac=True, method="L-BFGS-B", tol=1e-14)
    assert solver.value <= theirs.fun + 1e-12
    np.testing.assert_allclose(solver.x, theirs.x, rtol=1e-5, atol=1e-7)


def test_runs_in_chunks_follow_the_same_iterates_as_one_run(regression):
    whole = LBFGS(regression, np.zeros(6), tolerance_change=1e-14)
    whole.run(30)
    chunked = LBFGS(regression, np.zeros(6), tolerance_change=1e-14)
    taken = [chunked.run(chunk).iterations for chunk in (7, 7, 7, 7, 2)]
    assert taken == [7, 7, 7, 7, 2]
    np.testing.assert_array_equal(chunked.x, whole.x)
    assert chunked.iterations == whole.iterations == 30


def test_every_step_meets_the_strong_wolfe_conditions(regression):
    steps: list[tuple[Point, Point]] = []

    class Watched(LBFGS):
        def _line_search(self, direction, start, step):
            end = super()._line_search(direction, start, step)
            steps.append((start, end))
            return end

    Watched(regression, np.ones(6), tolerance_change=1e-14).run(15)
    assert len(steps) == 15
    for start, end in steps:
        assert end.value <= start.value + SUFFICIENT_DECREASE * end.step * start.slope
        assert abs(end.slope) <= -CURVATURE * start.slope


def test_a_start_at_the_optimum_takes_no_step():
    solver = LBFGS(lambda x: (float(x @ x), 2 * x), np.zeros(3))
    assert solver.run(10) == type(solver.run(10))(0, True)
    np.testing.assert_array_equal(solver.x, np.zeros(3))


def test_a_loss_that_overflows_along_the_direction_is_stepped_back_from():
    def steep(x: np.ndarray) -> tuple[float, np.ndarray]:
        with np.errstate(over="ignore"):
            return float(np.exp(x[0]) - x[0]), np.array([np.exp(x[0]) - 1.0])

    solver = LBFGS(steep, np.array([-800.0]), tolerance_change=1e-12)
    assert solver.run(200).converged
    assert np.isfinite(solver.value) and abs(solver.x[0]) < 1e-5
