"""The gradients of paper 002's measures in the scores, against finite differences."""

from __future__ import annotations

import badr_rows
import numpy as np
import pytest

from engine.fairness import BADR_MEASURES, badr_measure

TOLERANCE = 1e-6
STEP = 1e-4
CASES = [
    (name, task)
    for name, measure in BADR_MEASURES.items()
    for task in ("classification", "regression")
    if task in measure.tasks
]


def random_rows(seed, n_groups, task):
    """60 rows in groups of sizes 1 : 2 : 3 (`badr_rows.random_rows`)."""
    sizes = [60 * k // (n_groups * (n_groups + 1) // 2) for k in range(1, n_groups + 1)]
    return badr_rows.random_rows(seed, n_groups, task, sizes)


def derivative(f, p, direction):
    """d/dt f(p + t direction) at t = 0, by the fourth-order central difference."""
    at = [f(p + k * STEP * direction) for k in (-2, -1, 1, 2)]
    return (at[0] - 8 * at[1] + 8 * at[2] - at[3]) / (12 * STEP)


def check_gradient(f, grad, p, rng):
    """Relative error <= TOLERANCE along a random direction and along the coordinates of the
    largest and of three random gradient entries, give or take the rounding of the differences,
    about eps |f| / STEP (the smoothed measures carry an offset ~ 2 ln S / rho, so |f| is O(1)
    while some entries of the gradient are 1e-6)."""
    rounding = 4 * np.finfo(float).eps * abs(f(p)) / STEP
    direction = rng.normal(size=p.size)
    numeric, analytic = derivative(f, p, direction), grad @ direction
    assert abs(numeric - analytic) <= TOLERANCE * abs(analytic) + rounding, (numeric, analytic)
    for k in [int(np.argmax(np.abs(grad))), *rng.choice(p.size, 3, replace=False)]:
        numeric = derivative(f, p, np.eye(p.size)[k])
        assert abs(numeric - grad[k]) <= TOLERANCE * abs(grad[k]) + rounding, (k, numeric, grad[k])


@pytest.mark.parametrize(("name", "task"), CASES)
@pytest.mark.parametrize("n_groups", [2, 3])
@pytest.mark.parametrize("rho", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_gradient_matches_finite_differences(name, task, n_groups, rho, seed):
    p, groups, y = random_rows(seed, n_groups, task)
    measure = badr_measure(name)
    options = {"rho": rho, "task": task}
    value, grad = measure.value_and_grad(p, groups, y, **options)
    assert grad.shape == p.shape
    assert value == measure.value(p, groups, y, **options)
    check_gradient(
        lambda q: measure.value(q, groups, y, **options), grad, p, np.random.default_rng(seed)
    )


def exponential(p, y):
    """exp(-zeta p) with zeta = 2y - 1 (AdaBoost's loss), and its slope."""
    zeta = 2.0 * y - 1.0
    loss = np.exp(-zeta * p)
    return loss, -zeta * loss


def pseudo_huber(p, y):
    """sqrt(1 + (p - y)^2) - 1, and its slope."""
    root = np.sqrt(1.0 + (p - y) ** 2)
    return root - 1.0, (p - y) / root


@pytest.mark.parametrize(
    ("task", "loss"), [("classification", exponential), ("regression", pseudo_huber)]
)
@pytest.mark.parametrize("n_groups", [2, 3])
def test_group_variance_gradient_with_a_given_loss(task, loss, n_groups):
    p, groups, y = random_rows(3, n_groups, task)
    measure = badr_measure("group_variance")
    _, grad = measure.value_and_grad(p, groups, y, task=task, loss=loss)
    check_gradient(
        lambda q: measure.value(q, groups, y, task=task, loss=loss),
        grad,
        p,
        np.random.default_rng(3),
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_individual_fairness_gradient_on_large_targets(seed):
    """Targets of size 1e3: exp(y) would overflow; ties keep some pair weights at 1."""
    p, groups, y = random_rows(seed, 3, "regression")
    y = 1e3 * y
    measure = badr_measure("individual")
    value, grad = measure.value_and_grad(p, groups, y, task="regression")
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    check_gradient(
        lambda q: measure.value(q, groups, y, task="regression"),
        grad,
        p,
        np.random.default_rng(seed),
    )


@pytest.mark.parametrize(("name", "task"), CASES)
def test_large_scores_give_finite_values_and_gradients(name, task):
    p, groups, y = random_rows(5, 3, task)
    value, grad = badr_measure(name).value_and_grad(1e6 * p, groups, y, rho=5.0, task=task)
    assert np.isfinite(value) and np.all(np.isfinite(grad))


def test_equal_opportunity_ignores_the_negatives():
    p, groups, y = random_rows(0, 3, "classification")
    _, grad = badr_measure("eopp").value_and_grad(p, groups, y)
    assert np.all(grad[y == 0] == 0.0) and np.all(grad[y == 1] != 0.0)
