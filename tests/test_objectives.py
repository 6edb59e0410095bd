"""The objective component: value and score-space gradient against their definitions, on a
split and on a batch, and its torch form; and the loss every report now carries."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.capabilities import Capability, objective_offers
from engine.errors import UserError
from engine.objectives import (
    OBJECTIVE_TYPES,
    LogisticLoss,
    SquaredHingeLoss,
    SquaredLoss,
    check_objective_task,
    objective_from_dict,
    objective_to_dict,
)
from engine.task import Task


def data(n: int = 50, seed: int = 0, scale: float = 30.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(scale=scale, size=n), rng.integers(0, 2, n).astype(np.int8)


def test_logistic_value_is_the_mean_binary_cross_entropy():
    h, y = data(scale=3.0)  # moderate scores, where the naive formula below is accurate
    p = 1.0 / (1.0 + np.exp(-h))
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p))  # paper 000, eq. 12
    assert LogisticLoss().value(h, y) == pytest.approx(bce.mean(), rel=1e-12)


def test_logistic_gradient_matches_central_differences_and_is_finite_for_large_scores():
    h, y = data(20, seed=1)
    loss = LogisticLoss()
    value, grad = loss.value_and_grad(h, y)
    assert value == pytest.approx(loss.value(h, y))
    assert np.all(np.isfinite(grad))
    step = 1e-6
    for i in range(len(h)):
        up, down = h.copy(), h.copy()
        up[i] += step
        down[i] -= step
        numeric = (loss.value(up, y) - loss.value(down, y)) / (2 * step)
        assert grad[i] == pytest.approx(numeric, abs=1e-8)


def test_a_batch_is_the_mean_over_its_rows_and_torch_agrees():
    h, y = data(40, seed=2)
    loss = LogisticLoss()
    rows = np.array([3, 7, 7, 19])
    value, grad = loss.value_and_grad(h[rows], y[rows])
    per_row = np.logaddexp(0.0, -(2.0 * y[rows] - 1.0) * h[rows])
    assert value == pytest.approx(per_row.mean())
    tensor = torch.tensor(h[rows], requires_grad=True)
    signed = 2.0 * torch.from_numpy(y[rows]).to(tensor.dtype) - 1.0
    torch_value = torch.nn.functional.softplus(-signed * tensor).mean()  # BCE-with-logits
    torch_value.backward()
    assert float(torch_value) == pytest.approx(value)
    np.testing.assert_allclose(tensor.grad.numpy(), grad, rtol=1e-9, atol=1e-15)


def test_every_split_reports_the_exact_loss_of_the_model():
    import pandas as pd

    from engine.data.dataset import Dataset
    from engine.data.grouping import GroupingSpec
    from engine.data.prepare import PrepareOptions, prepare
    from engine.models import ModelSpec
    from engine.problem import Problem

    rng = np.random.default_rng(3)
    x = rng.normal(size=300)
    frame = pd.DataFrame({"x": x, "g": rng.choice(["a", "b"], 300)})
    label = (x + rng.normal(size=300) > 0).astype(np.int8)
    dataset = Dataset(
        name="toy",
        frame=frame,
        label=label,
        numeric=("x",),
        categorical=(),
        protected=("g",),
        label_name="y",
    )
    problem = Problem(
        prepare(dataset, PrepareOptions(grouping=(GroupingSpec("g"),))), ModelSpec(), None
    )
    w = np.array([0.2, 1.5])
    report = problem.report({"w": w})
    for split, values in report.items():
        part = problem.data.split(split)
        h = w[0] + part.X @ w[1:]
        assert values["loss"] == pytest.approx(np.mean(np.logaddexp(0, -(2.0 * part.y - 1) * h)))


MEAN_LOSSES = [LogisticLoss(), SquaredHingeLoss(), SquaredLoss()]


def labels_for(loss, n: int, seed: int) -> np.ndarray:
    """0/1 labels for a classifier's loss, real numbers for a regression's."""
    rng = np.random.default_rng(seed)
    if loss.task is Task.REGRESSION:
        return rng.normal(scale=2.0, size=n)
    return rng.integers(0, 2, n).astype(np.int8)


def central_difference(f, h: np.ndarray, i: int, step: float = 1e-6) -> float:
    up, down = h.copy(), h.copy()
    up[i] += step
    down[i] -= step
    return (f(up) - f(down)) / (2 * step)


@pytest.mark.parametrize("loss", MEAN_LOSSES, ids=lambda loss: loss.name)
def test_gradient_and_second_derivative_match_central_differences(loss):
    rng = np.random.default_rng(4)
    h = rng.normal(scale=2.0, size=30)
    y = labels_for(loss, 30, seed=5)
    if loss.name == "squared_hinge":  # ℓ″ jumps at the margin ζh = 1: stay away from it
        h = np.where(np.abs((2.0 * y - 1.0) * h - 1.0) < 0.05, h + 0.2, h)
    value, grad = loss.value_and_grad(h, y)
    assert value == pytest.approx(loss.value(h, y))
    losses, slopes = loss.per_sample(h, y)
    assert value == pytest.approx(losses.mean())
    curvature = loss.second_derivative(h, y)
    for i in range(len(h)):
        assert grad[i] == pytest.approx(
            central_difference(lambda v: loss.value(v, y), h, i), abs=1e-8
        )
        slope = central_difference(lambda v: loss.per_sample(v, y)[1][i], h, i)  # noqa: B023
        assert curvature[i] == pytest.approx(slope, abs=1e-6)
    # curvature(y) bounds the largest eigenvalue of ∇²_h f = diag(ℓ″)/n
    assert curvature.max() / len(h) <= loss.curvature(y) + 1e-15


def test_the_squared_hinge_and_squared_losses_are_their_formulas():
    h = np.array([2.0, 0.5, -0.3, -2.0])
    y = np.array([1, 1, 0, 1])
    zeta = 2.0 * y - 1.0
    assert SquaredHingeLoss().value(h, y) == pytest.approx(
        np.mean(np.maximum(0, 1 - zeta * h) ** 2)
    )
    np.testing.assert_array_equal(SquaredHingeLoss().second_derivative(h, y), [0, 2, 2, 2])
    targets = np.array([1.5, -0.2, 0.0, 3.0])
    assert SquaredLoss().value(h, targets) == pytest.approx(np.mean(0.5 * (h - targets) ** 2))
    assert SquaredLoss().curvature(targets) == 0.25 and SquaredHingeLoss().curvature(y) == 0.5


def test_each_objective_says_its_task_and_is_registered_with_its_capabilities():
    assert {name: kind.task for name, kind in OBJECTIVE_TYPES.items()} == {
        "logistic": Task.CLASSIFICATION,
        "pairwise_auc": Task.CLASSIFICATION,
        "squared_hinge": Task.CLASSIFICATION,
        "squared": Task.REGRESSION,
    }
    for name in ("squared_hinge", "squared"):
        assert objective_offers(name) == {
            Capability.SMOOTH,
            Capability.CONVEX,
            Capability.MINIBATCH_LOSS,
        }
        assert objective_from_dict(objective_to_dict(OBJECTIVE_TYPES[name]())).name == name


def test_an_objective_of_another_task_is_refused_in_a_sentence():
    with pytest.raises(UserError) as error:
        check_objective_task("squared", Task.CLASSIFICATION, "data set Law's label 'bar'")
    assert str(error.value) == (
        "the squared objective, the squared loss (ridge regression, paper 002), is for a "
        "real-valued label; data set Law's label 'bar' is binary: choose the objective "
        "logistic, pairwise_auc or squared_hinge"
    )
    with pytest.raises(UserError, match="is for a binary label; .* choose the objective squared$"):
        check_objective_task("logistic", Task.REGRESSION, "the data's label")
    check_objective_task("squared_hinge", Task.CLASSIFICATION, "the data's label")
