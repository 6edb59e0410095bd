"""The objective component: value and score-space gradient against their definitions, on a
split and on a batch, and its torch form; and the loss every report now carries."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.objectives import LogisticLoss


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
    dataset = Dataset(name="toy", frame=frame, label=label, numeric=("x",), categorical=(),
                      protected=("g",), label_name="y")  # fmt: skip
    problem = Problem(prepare(dataset, PrepareOptions(grouping=(GroupingSpec("g"),))), ModelSpec(),
                      None)  # fmt: skip
    w = np.array([0.2, 1.5])
    report = problem.report({"w": w})
    for split, values in report.items():
        part = problem.data.split(split)
        h = w[0] + part.X @ w[1:]
        assert values["loss"] == pytest.approx(np.mean(np.logaddexp(0, -(2.0 * part.y - 1) * h)))
