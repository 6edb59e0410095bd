"""The KKT measure of an MLP without m backward passes: a rows' Jacobian whose columns take few
directions is factored (`engine.networks.shared_columns`), and with a solver's multipliers only
the Lagrangian's gradient is taken. Both must give what the m passes give."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from engine.fairness.constraints import ConstraintSpec
from engine.fairness.constraints.batch_rows import rows_jacobian
from engine.models import ModelSpec
from engine.networks import MLPNetwork, shared_columns
from engine.oracles import WEIGHTS, MinibatchOracles
from engine.problem import Problem
from engine.solvers.kkt import kkt_of, kkt_terms

INTERVAL = (0.1, 0.5)


@pytest.fixture(scope="module")
def mlp_psp(data):
    problem = Problem(
        data,
        ModelSpec(kind="mlp", hidden=(6, 3)),
        ConstraintSpec("pSP", 0.05, INTERVAL),
        interval=INTERVAL,
    )
    oracles = MinibatchOracles(problem, seed=1)
    x = oracles.start()
    shift = np.random.default_rng(2).normal(scale=0.3, size=problem.network.size)
    x[oracles.layout[WEIGHTS]] += shift  # away from the start, so that scores spread
    return problem, oracles, x


def row_by_row(network, w, tape, G) -> np.ndarray:
    dense = G.toarray() if sp.issparse(G) else np.asarray(G)
    return np.array([network.backward(w, tape, g) for g in dense])


def test_psp_rows_factor_into_few_directions_and_give_the_rows_backward_passes(mlp_psp):
    problem, oracles, x = mlp_psp
    rows = np.arange(len(problem.data.train))
    h, tape = oracles._forward(x, rows)
    at = rows_jacobian(oracles._rows(rows), h, oracles.aux(x))
    factors = shared_columns(at.scores)
    assert factors is not None
    directions, weights, segment = factors
    assert directions.shape[1] <= 4 * len(at.values)
    assert directions.shape[1] < len(h) / 4  # about one backward pass, not m of them
    dense = at.scores.toarray()
    kept = segment >= 0
    np.testing.assert_allclose(dense[:, kept], directions[:, segment[kept]] * weights[kept])
    assert not dense[:, ~kept].any()
    w = x[oracles.layout[WEIGHTS]]
    expected = row_by_row(problem.network, w, tape, at.scores)
    np.testing.assert_allclose(
        problem.network.backward_many(w, tape, at.scores), expected, atol=1e-12
    )


def test_columns_that_differ_even_slightly_are_not_merged():
    rng = np.random.default_rng(0)
    network = MLPNetwork(3, (4,))
    w = rng.normal(size=network.size)
    _, tape = network.forward(w, rng.normal(size=(50, 3)))
    pattern = np.array([[1.0], [-1.0], [0.0]])
    G = np.repeat(pattern, 50, axis=1)
    G[0, 7] += 1e-6  # one sample's column is not the others'
    factors = shared_columns(sp.csr_array(G))
    assert factors is not None and factors[0].shape[1] == 2
    np.testing.assert_allclose(
        network.backward_many(w, tape, sp.csr_array(G)), row_by_row(network, w, tape, G), atol=1e-12
    )
    assert shared_columns(rng.normal(size=(3, 50))) is None  # every column its own direction


@pytest.mark.parametrize("multipliers", [None, np.linspace(-0.5, 2.0, 40)])
def test_the_measure_of_an_mlp_is_the_formula_from_its_rows_backward_passes(mlp_psp, multipliers):
    problem, oracles, x = mlp_psp
    params = oracles.params(x)
    rows = np.arange(len(problem.data.train))
    _, gradient = oracles.objective(x, rows)
    h, tape = oracles._forward(x, rows)
    at = rows_jacobian(oracles._rows(rows), h, oracles.aux(x))
    jacobian = np.zeros((len(at.values), oracles.layout.size))
    jacobian[:, oracles.layout[WEIGHTS]] = row_by_row(
        problem.network, x[oracles.layout[WEIGHTS]], tape, at.scores
    )
    jacobian[:, oracles.layout["aux.theta"]] = at.aux["theta"]
    lam = multipliers
    assert lam is None or len(lam) == len(at.values)  # a row per group, rank and side
    expected = kkt_of(gradient, jacobian, at.values, lam)
    found = kkt_terms(problem, params, lam)
    assert found.total == pytest.approx(expected.total, rel=1e-9)
    assert found.stationarity == pytest.approx(expected.stationarity, rel=1e-9)
    np.testing.assert_allclose(found.multipliers, expected.multipliers, atol=1e-9)
