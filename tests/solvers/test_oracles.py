"""The minibatch interface: numpy networks against torch, the oracles against full-data
definitions and finite differences, closed-form batch rows against autograd, variable boxes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from solver_data import toy_prepared

from engine.fairness.constraints import ConstraintSpec
from engine.mlp import make_mlp
from engine.models import ModelSpec
from engine.networks import LinearNetwork, MLPNetwork
from engine.oracles import MinibatchOracles
from engine.problem import Problem
from engine.variables import NONNEGATIVE, Box, Kind, Layout

MODELS = {
    "linear": ModelSpec(),
    "cross": ModelSpec(cross_terms=True),
    "mlp": ModelSpec(kind="mlp", hidden=(5, 3)),
    "mlp-sigmoid": ModelSpec(kind="mlp", hidden=(4,), activation="sigmoid"),
}


@pytest.mark.parametrize("activation", ["relu", "sigmoid"])
def test_the_numpy_mlp_is_the_torch_module_forward_and_backward(activation):
    module = make_mlp(6, (7, 3), seed=2, activation=activation)
    network = MLPNetwork(6, (7, 3), activation)
    params = {k: v.detach().numpy() for k, v in module.named_parameters()}
    w = network.flatten(params)
    X = np.random.default_rng(0).normal(size=(11, 6))
    g = np.random.default_rng(1).normal(size=11)
    h, tape = network.forward(w, X)
    torch_h = module(torch.from_numpy(X))
    np.testing.assert_allclose(h, torch_h.detach().numpy(), rtol=1e-12, atol=1e-12)
    (torch_h @ torch.from_numpy(g)).backward()
    expected = network.flatten({k: v.grad.numpy() for k, v in module.named_parameters()})
    np.testing.assert_allclose(network.backward(w, tape, g), expected, rtol=1e-10, atol=1e-12)
    for name, value in network.unflatten(w).items():
        np.testing.assert_array_equal(value, params[name])


def test_the_linear_network_is_the_design_product():
    X = np.random.default_rng(0).normal(size=(9, 4))
    w = np.arange(5.0)
    network = LinearNetwork(4)
    h, tape = network.forward(w, X)
    np.testing.assert_allclose(h, np.hstack([np.ones((9, 1)), X]) @ w)
    g = np.linspace(-1, 1, 9)
    np.testing.assert_allclose(network.backward(w, tape, g), np.hstack([np.ones((9, 1)), X]).T @ g)


def _central_difference(f, x: np.ndarray, step: float = 1e-6) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = step
        out[i] = (f(x + e) - f(x - e)) / (2 * step)
    return out


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("family", ["group_loss_gap", "pSP", "EO"])
def test_the_oracles_on_every_row_are_the_full_problem_and_their_gradients_are_derivatives(
    model, family
):
    prepared = toy_prepared(n=240, groups=3)
    constraint = ConstraintSpec(family, 0.4, interval=(0.0, 0.5) if family == "pSP" else None)
    problem = Problem(prepared, MODELS[model], constraint)
    oracles = MinibatchOracles(problem, seed=1)
    x = oracles.start() + 0.05 * np.random.default_rng(2).normal(size=oracles.layout.size)
    every = np.arange(len(prepared.train))
    params = oracles.params(x)
    h = problem.scores(params)
    # on all rows, the batch oracles are the full objective and the full surrogate rows
    value, grad = oracles.objective(x, every)
    assert value == pytest.approx(problem.loss(h), rel=1e-12)
    aux = {k[4:]: torch.from_numpy(v) for k, v in params.items() if k.startswith("aux.")}
    full = problem.bound.surrogate(torch.from_numpy(h), aux).numpy()
    np.testing.assert_allclose(oracles.constraint(x, every), full, rtol=1e-10, atol=1e-12)
    # gradients against central differences, on a batch
    rows = np.r_[every[prepared.train.groups == 0][:9], every[prepared.train.groups != 0][:21]]
    v = np.random.default_rng(3).normal(size=problem.bound.m)
    values, pullback = oracles.constraint_linearised(x, rows)
    np.testing.assert_allclose(
        pullback(v),
        _central_difference(lambda z: oracles.constraint(z, rows) @ v, x),
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        oracles.objective(x, rows)[1],
        _central_difference(lambda z: oracles.objective_value(z, rows), x),
        rtol=1e-5,
        atol=1e-7,
    )
    _, jacobian = oracles.constraint_jacobian(x, rows)
    np.testing.assert_allclose(jacobian.T @ v, pullback(v), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("pairs", ["vs_mean", "all"])
def test_the_closed_form_group_loss_rows_equal_autograd_on_the_family(pairs):
    from engine.fairness.constraints.batch_rows import AutogradRows, GroupLossRows

    prepared = toy_prepared(n=300, groups=3)
    problem = Problem(prepared, ModelSpec(), ConstraintSpec("group_loss_gap", 0.03, pairs=pairs))
    rng = np.random.default_rng(5)
    rows = rng.choice(len(prepared.train), 40, replace=False)
    ids, y = prepared.train.groups[rows], prepared.train.y[rows]
    closed = problem.bound.batch_rows(ids, y)
    generic = AutogradRows(problem.bound.with_ids(ids, y))
    assert isinstance(closed, GroupLossRows) and closed.m == generic.m == problem.bound.m
    h = rng.normal(size=40)
    v = rng.normal(size=closed.m)
    c1, pull1 = closed.linearise(h, {})
    c2, pull2 = generic.linearise(h, {})
    np.testing.assert_allclose(c1, c2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(closed.values(h, {}), c2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(pull1(v)[0], pull2(v)[0], rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("width", [1.0, 0.05])
def test_the_closed_form_ramp_psp_rows_and_sparse_jacobian_equal_autograd(width):
    """Values, pullbacks and the Jacobian, with tied scores and scores on the ramp's kinks."""
    from scipy import sparse

    from engine.fairness.constraints.batch_rows import AutogradRows, rows_jacobian
    from engine.fairness.constraints.psp_rows import RampPSPRows

    prepared = toy_prepared(n=400, groups=3)
    spec = ConstraintSpec("pSP", 0.2, (0.1, 0.6), temperature=width)
    problem = Problem(prepared, ModelSpec(), spec, interval=(0.1, 0.6))
    rng = np.random.default_rng(8)
    rows = rng.choice(len(prepared.train), 120, replace=False)
    ids = prepared.train.groups[rows]
    closed = problem.bound.batch_rows(ids)
    generic = AutogradRows(problem.bound.with_ids(ids))
    assert isinstance(closed, RampPSPRows) and closed.m == generic.m == problem.bound.m
    theta = np.sort(rng.normal(scale=0.5, size=problem.bound.grid.size))
    h = np.round(rng.normal(size=120), 1)  # ties
    h[:6] = np.r_[theta[:3] - width / 2, theta[:3] + width / 2]  # on the kinks
    aux = {"theta": theta}
    v = rng.normal(size=closed.m)
    c1, pull1 = closed.linearise(h, aux)
    c2, pull2 = generic.linearise(h, aux)
    np.testing.assert_allclose(c1, c2, rtol=1e-12, atol=1e-13)
    (d_h1, d_aux1), (d_h2, d_aux2) = pull1(v), pull2(v)
    np.testing.assert_allclose(d_h1, d_h2, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(d_aux1["theta"], d_aux2["theta"], rtol=1e-10, atol=1e-13)
    sparse_form = rows_jacobian(closed, h, aux)
    dense_form = rows_jacobian(generic, h, aux)
    assert sparse.issparse(sparse_form.scores) and not sparse.issparse(dense_form.scores)
    np.testing.assert_allclose(sparse_form.scores.toarray(), dense_form.scores, atol=1e-13)
    np.testing.assert_allclose(sparse_form.aux["theta"], dense_form.aux["theta"], atol=1e-13)
    # a row holds only its group's samples on its slope: a narrow ramp leaves few
    if width < 0.1:
        assert sparse_form.scores.nnz < 0.1 * closed.m * len(h)


def test_a_batch_missing_a_group_is_refused_in_words():
    from engine.errors import UserError

    prepared = toy_prepared(n=200, groups=2)
    problem = Problem(prepared, ModelSpec(), ConstraintSpec("group_loss_gap", 0.03))
    rows = np.flatnonzero(prepared.train.groups == 0)[:5]
    with pytest.raises(UserError, match="No samples of group"):
        problem.bound.batch_rows(prepared.train.groups[rows], prepared.train.y[rows])


def test_the_oracles_count_gradients_and_data_passes(toy):
    problem = Problem(
        toy, ModelSpec(kind="mlp", hidden=(4,)), ConstraintSpec("group_loss_gap", 0.02)
    )
    oracles = MinibatchOracles(problem, seed=0)
    x = oracles.start()
    oracles.objective(x, np.arange(10))
    _, pullback = oracles.constraint_linearised(x, np.arange(30))
    pullback(np.ones(problem.bound.m))
    oracles.constraint_jacobian(x, np.arange(20))
    state = oracles.counts.state(len(toy.train))
    assert state["oracle.objective_gradients"] == 1
    assert state["oracle.constraint_values"] == 2
    assert state["oracle.constraint_gradients"] == 1 + problem.bound.m
    assert state["oracle.data_passes"] == pytest.approx(60 / len(toy.train))


def test_psp_declares_its_thresholds_and_the_layout_boxes_and_signs_blocks(toy):
    problem = Problem(toy, ModelSpec(), ConstraintSpec("pSP", 0.2, interval=(0.0, 0.5)))
    oracles = MinibatchOracles(problem, seed=0)
    block = oracles.layout.blocks["aux.theta"]
    assert block.kind is Kind.MINIMISED and not block.box.bounded
    assert set(oracles.params(oracles.start())) == {"w", "aux.theta"}
    layout = Layout()
    layout.add("w", Kind.WEIGHTS, (2,))
    layout.add("s", Kind.SLACK, (2,), NONNEGATIVE)
    layout.add("u", Kind.MAXIMISED, (1,), Box(-1.0, 1.0))
    x = layout.project(np.array([-3.0, 3.0, -0.5, 0.5, 4.0]))
    np.testing.assert_array_equal(x, [-3.0, 3.0, 0.0, 0.5, 1.0])
    np.testing.assert_array_equal(layout.descent(np.ones(5)), [1, 1, 1, 1, -1])
