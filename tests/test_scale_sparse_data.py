"""Problems whose X is a CSR float32 matrix (large one-hot data) against the same data dense:
the same scores, minibatch oracles, IDCA run and exact metrics; a dense copy that would not fit
is refused with the numbers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from engine import dense, scoring
from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.data.prepared import Prepared
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.mlp import init_mlp_params
from engine.models import ModelSpec
from engine.oracles import MinibatchOracles
from engine.problem import Problem
from engine.scoring import Rows, model_scores
from engine.solvers import solve
from engine.solvers.paper003.cards import IDCAConfig
from engine.solvers.paper003.idca import IDCA
from engine.solvers.paper003.idca_kernel import _valued_prefix

INTERVAL = (0.1, 0.5)
MODELS = {
    "linear": ModelSpec(),
    "cross": ModelSpec(cross_terms=True),
    "mlp": ModelSpec(kind="mlp", hidden=(4,)),
}


def one_hot_prepared(n: int = 900, seed: int = 0) -> Prepared:
    """Three groups, two categorical columns and one numeric one (standardised: not exact in
    float32)."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, n)
    job = rng.integers(0, 6, n)
    school = rng.integers(0, 4, n)
    age = rng.normal(size=n)
    logit = 0.6 * job - 1.5 + 0.4 * school + 0.8 * age + 0.7 * group - 0.5
    frame = pd.DataFrame(
        {
            "job": job.astype(str),
            "school": school.astype(str),
            "age": age,
            "g": np.array(["a", "b", "c"])[group],
        }
    )
    label = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    dataset = Dataset(
        name="one-hot",
        frame=frame,
        label=label,
        numeric=("age",),
        categorical=("job", "school"),
        protected=("g",),
        label_name="y",
    )
    return prepare(dataset, PrepareOptions(grouping=(GroupingSpec("g"),)))


def as_float32(X: np.ndarray) -> np.ndarray:
    return X.astype(np.float32).astype(np.float64)


def with_X(prepared: Prepared, change) -> Prepared:
    """`prepared` with every split's X replaced by change(X)."""
    splits = {
        name: dataclasses.replace(prepared.split(name), X=change(prepared.split(name).X))
        for name in ("train", "val", "test")
    }
    return dataclasses.replace(prepared, **splits)


@pytest.fixture(scope="module")
def pair() -> tuple[Prepared, Prepared]:
    """The same numbers (rounded to float32) in X dense float64 and CSR float32."""
    dense_data = with_X(one_hot_prepared(), as_float32)
    return dense_data, with_X(dense_data, lambda X: sp.csr_array(X.astype(np.float32)))


def problems(pair, model: ModelSpec, constraint: ConstraintSpec | None = None):
    return tuple(Problem(data, model, constraint, interval=INTERVAL) for data in pair)


@pytest.mark.parametrize("model", MODELS)
def test_scores_and_exact_metrics_are_those_of_the_dense_data(pair, model):
    on_dense, on_sparse = problems(pair, MODELS[model], ConstraintSpec("pSP", 0.1, INTERVAL))
    params = on_dense.init_params(seed=3)
    if "w" in params:
        params["w"] = np.random.default_rng(3).normal(size=params["w"].shape)
    for split in ("train", "test"):
        np.testing.assert_allclose(
            on_sparse.scores(params, split), on_dense.scores(params, split), rtol=1e-10, atol=1e-12
        )
    expected, report = on_dense.report(params), on_sparse.report(params)
    for split, metrics in expected.items():
        assert report[split].keys() == metrics.keys()
        for name, value in metrics.items():
            if value is None:
                assert report[split][name] is None, name
            else:
                assert report[split][name] == pytest.approx(value, rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize("dense_batches", [True, False])
@pytest.mark.parametrize("model", MODELS)
def test_minibatch_oracles_on_sparse_rows_are_those_on_dense_rows(
    pair, model, dense_batches, monkeypatch
):
    if not dense_batches:  # batches of more rows than this stay sparse, as a full-data pass does
        monkeypatch.setattr(scoring, "DENSE_BATCH_ROWS", 16)
    on_dense, on_sparse = problems(pair, MODELS[model], ConstraintSpec("pSP", 0.1, INTERVAL))
    dense_oracles, sparse_oracles = (MinibatchOracles(p, seed=1) for p in (on_dense, on_sparse))
    vars(on_sparse.rows("train")).pop("features", None)  # an MLP's start may have made them
    x = dense_oracles.start() + np.random.default_rng(0).normal(
        scale=0.1, size=dense_oracles.layout.size
    )
    batch = np.random.default_rng(1).choice(len(pair[0].train), size=50, replace=False)
    value, grad = dense_oracles.objective(x, batch)
    sparse_value, sparse_grad = sparse_oracles.objective(x, batch)
    assert sparse_value == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(sparse_grad, grad, rtol=1e-10, atol=1e-12)
    rows, jacobian = dense_oracles.constraint_jacobian(x, batch)
    sparse_rows, sparse_jacobian = sparse_oracles.constraint_jacobian(x, batch)
    np.testing.assert_allclose(sparse_rows, rows, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse_jacobian, jacobian, rtol=1e-10, atol=1e-12)
    full = np.arange(len(pair[0].train))
    np.testing.assert_allclose(
        sparse_oracles.objective(x, full)[1],
        dense_oracles.objective(x, full)[1],
        rtol=1e-10,
        atol=1e-12,
    )
    assert "features" not in vars(on_sparse.rows("train"))  # no dense copy of the whole split


@pytest.mark.parametrize("cross", [False, True])
def test_idca_on_sparse_float32_data_is_the_run_on_dense_data(pair, cross):
    constraint = ConstraintSpec("pSP", 0.1, INTERVAL)
    config = IDCAConfig(outer_iterations=8, inner_iterations=40, patience=0)
    runs = [
        solve(problem, "idca", config)  # no time budget: its compile time is not the point
        for problem in problems(pair, ModelSpec(cross_terms=cross), constraint)
    ]
    on_dense, on_sparse = runs
    assert on_sparse.iterations == on_dense.iterations == 8 * 40
    np.testing.assert_allclose(on_sparse.params["w"], on_dense.params["w"], rtol=1e-9, atol=1e-12)
    for split, metrics in on_dense.metrics.items():
        for name, value in metrics.items():
            assert on_sparse.metrics[split][name] == pytest.approx(value, rel=1e-7, abs=1e-10)


@pytest.mark.parametrize("cross", [False, True])
def test_compiled_idca_steps_on_one_hot_rows_follow_the_generic_steps(pair, cross):
    """The compiled step reads the values of each row's leading entries only (the rest are the
    one-hot 1s): it takes the generic step's iterates."""
    problem = problems(pair, ModelSpec(cross_terms=cross), ConstraintSpec("pSP", 0.1, INTERVAL))[1]
    config = IDCAConfig(outer_iterations=3, inner_iterations=40, patience=0)
    compiled = IDCA(problem, config, np.random.default_rng(0))
    generic = IDCA(problem, dataclasses.replace(config, compiled=False), np.random.default_rng(0))
    assert 0 < compiled._ramp_psp.valued < problem.design().shape[1]
    while not compiled.advance(7).done:
        pass
    while not generic.step().done:
        pass
    np.testing.assert_allclose(
        compiled.candidate()["w"], generic.candidate()["w"], rtol=1e-9, atol=1e-12
    )


def test_the_valued_prefix_covers_every_value_other_than_one():
    X = sp.csr_array(
        np.array([[1.0, 0.5, 1.0, 0.0, 1.0], [0.0, 1.0, 1.0, 2.0, 0.0], [1.0, 0.0, 0.0, 0.0, 1.0]])
    )
    assert _valued_prefix(X.indptr, X.data) == 3  # row 1: its third entry is 2
    assert _valued_prefix(X.indptr, np.ones_like(X.data)) == 0


def test_idca_on_data_rounded_to_float32_stays_close_to_the_float64_run():
    """Storing X in float32 rounds its numeric values (by about 6e-8): the run moves by about
    that much, not more."""
    exact = one_hot_prepared()
    rounded = with_X(exact, lambda X: sp.csr_array(X.astype(np.float32)))
    assert not np.array_equal(as_float32(exact.train.X), exact.train.X)
    constraint = ConstraintSpec("pSP", 0.1, INTERVAL)
    config = IDCAConfig(outer_iterations=4, inner_iterations=30, patience=0)
    on_dense, on_rounded = (
        solve(p, "idca", config) for p in problems((exact, rounded), ModelSpec(), constraint)
    )
    assert on_rounded.metrics["test"]["accuracy"] == pytest.approx(
        on_dense.metrics["test"]["accuracy"], abs=0.01
    )
    np.testing.assert_allclose(on_rounded.params["w"], on_dense.params["w"], rtol=1e-6, atol=1e-8)


def test_a_dense_copy_that_would_not_fit_is_refused_with_its_size(pair, monkeypatch):
    sparse_data = pair[1]
    rows = Rows(sparse_data.train.X, sparse_data.train.groups, 3, cross_terms=True)
    monkeypatch.setattr(dense, "available_bytes", lambda: 10_000)
    sizes = rf"{len(rows)} rows × {rows.n_inputs} columns \(0\.0 GB of float64\)"
    with pytest.raises(UserError, match=rf"{sizes}, more than the 0\.0 GB that can be spared"):
        _ = rows.features
    assert rows.batch(np.arange(5)).shape == (5, rows.n_inputs)  # a batch is still made
    mlp = ModelSpec(kind="mlp", hidden=(3,))
    params = init_mlp_params(rows.n_inputs, mlp.hidden, seed=0)
    assert model_scores(mlp, params, rows).shape == (len(rows),)  # scored on the sparse rows
