"""The design X̃ on a sparse float32 X (large one-hot data) against the same X dense in float64:
the same products, block form and dense matrix, and no dense copy made on the way."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import engine.dense
from engine.data.encoding import add_group_cross_terms
from engine.design import CrossDesign, Design
from engine.errors import UserError


def one_hot_like(n: int, seed: int) -> np.ndarray:
    """Rows of three one-hot blocks and one numeric column (values exact in float32)."""
    rng = np.random.default_rng(seed)
    blocks = [np.eye(k)[rng.integers(0, k, n)] for k in (4, 6, 3)]
    numeric = np.round(rng.normal(size=(n, 1)), 3).astype(np.float32).astype(np.float64)
    return np.hstack([*blocks, numeric])


def designs(X: np.ndarray, groups: np.ndarray, n_groups: int, cross: bool):
    """(design on dense float64 X, design on CSR float32 X, X̃ itself)."""
    sparse_X = sp.csr_array(X.astype(np.float32))
    if cross:
        full = np.hstack([np.ones((len(X), 1)), add_group_cross_terms(X, groups, n_groups)])
        return CrossDesign(X, groups, n_groups), CrossDesign(sparse_X, groups, n_groups), full
    return Design(X), Design(sparse_X), np.hstack([np.ones((len(X), 1)), X])


@pytest.mark.parametrize(("n_groups", "cross"), [(1, False), (3, False), (2, True), (4, True)])
def test_products_on_sparse_float32_equal_those_on_dense_float64(n_groups, cross):
    rng = np.random.default_rng(n_groups)
    n = 500
    X, groups = one_hot_like(n, n_groups), rng.integers(0, n_groups, n)
    dense, sparse, full = designs(X, groups, n_groups, cross)
    w, r, R = rng.normal(size=full.shape[1]), rng.normal(size=n), rng.normal(size=(n, 3))
    rows = rng.choice(n, size=60, replace=False)
    values = rng.normal(size=60)
    for design in (dense, sparse):
        assert design.shape == full.shape
        np.testing.assert_allclose(design.matvec(w), full @ w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(design.rmatvec(r), full.T @ r, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(design.rmatmat(R), full.T @ R, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(
            design.rmatvec_rows(rows, values), full[rows].T @ values, rtol=1e-12, atol=1e-12
        )
        dense_matrix = design.dense()
        assert dense_matrix.dtype == np.float64
        np.testing.assert_array_equal(dense_matrix, full)
    assert sparse.matvec(w).dtype == sparse.rmatvec(r).dtype == np.float64


@pytest.mark.parametrize("cross", [False, True])
def test_block_form_keeps_float32_values_and_scores_as_the_matrix(cross):
    rng = np.random.default_rng(7)
    X, groups = one_hot_like(300, 7), rng.integers(0, 3, 300)
    dense, sparse, full = designs(X, groups, 3, cross)
    form, reference = sparse.block_form(), dense.block_form()
    assert form.rows.dtype == np.float32
    np.testing.assert_array_equal(form.rows.toarray(), reference.rows.toarray())
    np.testing.assert_array_equal(form.block, reference.block)
    w = rng.normal(size=full.shape[1])
    vectors = (form.expand @ w).reshape(-1, form.rows.shape[1])
    scores = np.einsum("ij,ij->i", form.rows.toarray(), vectors[form.block])
    np.testing.assert_allclose(scores, full @ w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cross", [False, True])
def test_a_sparse_design_is_built_without_a_dense_copy(cross):
    n, d = 100_000, 60  # dense float64 X̃: about 49 MB; the CSR about 4 MB
    rng = np.random.default_rng(0)
    X = sp.csr_array(one_hot_columns(rng, n, d))
    groups = rng.integers(0, 2, n)

    def build_and_use(X, groups):
        design = CrossDesign(X, groups, 2) if cross else Design(X)
        design.block_form()
        design.rmatvec(design.matvec(np.ones(design.shape[1])))

    build_and_use(X[:10], groups[:10])  # the compiled products load once, outside the count
    tracemalloc.start()
    build_and_use(X, groups)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * n * (d + 1) / 3


def one_hot_columns(rng: np.random.Generator, n: int, d: int) -> sp.csr_array:
    """n rows of 5 ones each among d columns, float32, as one-hot encodings are stored."""
    columns = np.sort(rng.choice(d, size=(n, 5), replace=True), axis=1)
    indptr = np.arange(0, 5 * n + 1, 5, dtype=np.int32)
    X = sp.csr_array(
        (np.ones(5 * n, dtype=np.float32), columns.ravel().astype(np.int32), indptr), shape=(n, d)
    )
    X.sum_duplicates()
    return X


def test_an_empty_sparse_split_has_an_empty_design():
    design = Design(sp.csr_array((0, 5), dtype=np.float32))
    assert design.shape == (0, 6)
    assert design.matvec(np.ones(6)).shape == (0,)
    np.testing.assert_array_equal(design.rmatvec(np.zeros(0)), np.zeros(6))


@pytest.mark.parametrize("cross", [False, True])
def test_a_dense_design_that_would_not_fit_is_refused(cross, monkeypatch):
    X = sp.csr_array(one_hot_like(400, 1).astype(np.float32))
    groups = np.arange(400) % 2
    design = CrossDesign(X, groups, 2) if cross else Design(X)
    design.dense()  # fits
    monkeypatch.setattr(engine.dense, "available_bytes", lambda: 8 * 400 * design.shape[1])
    with pytest.raises(UserError, match=rf"400 rows × {design.shape[1]} columns"):
        design.dense()
