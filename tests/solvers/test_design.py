import numpy as np
import pytest

from engine.data.encoding import add_group_cross_terms
from engine.design import CrossDesign, Design


@pytest.mark.parametrize("density", [0.05, 0.9])
def test_design_products_match_the_dense_matrix(density):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 12)) * (rng.random((200, 12)) < density)
    design = Design(X)
    full = np.hstack([np.ones((200, 1)), X])
    w, r, R = rng.normal(size=13), rng.normal(size=200), rng.normal(size=(200, 4))
    assert design.sparse == (density < 0.3)
    np.testing.assert_allclose(design.matvec(w), full @ w)
    np.testing.assert_allclose(design.rmatvec(r), full.T @ r)
    np.testing.assert_allclose(design.rmatmat(R), full.T @ R)
    np.testing.assert_array_equal(design.dense(), full)
    assert_block_form_scores_as_the_matrix(design, full, rng)


@pytest.mark.parametrize("n_groups", [2, 3, 5])
def test_cross_design_equals_the_materialised_cross_terms(n_groups):
    rng = np.random.default_rng(n_groups)
    X = rng.normal(size=(300, 7)) * (rng.random((300, 7)) < 0.2)
    groups = rng.integers(0, n_groups, 300)
    full = np.hstack([np.ones((300, 1)), add_group_cross_terms(X, groups, n_groups)])
    design = CrossDesign(X, groups, n_groups)
    assert design.shape == full.shape
    w, r, R = rng.normal(size=full.shape[1]), rng.normal(size=300), rng.normal(size=(300, 3))
    np.testing.assert_allclose(design.matvec(w), full @ w)
    np.testing.assert_allclose(design.rmatvec(r), full.T @ r)
    np.testing.assert_allclose(design.rmatmat(R), full.T @ R)
    np.testing.assert_array_equal(design.dense(), full)
    assert_block_form_scores_as_the_matrix(design, full, rng)


@pytest.mark.parametrize("cross", [False, True])
def test_products_over_a_subset_of_rows_match_the_dense_matrix(cross):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(240, 6)) * (rng.random((240, 6)) < 0.3)
    groups = rng.integers(0, 3, 240)
    if cross:
        design = CrossDesign(X, groups, 3)
        full = np.hstack([np.ones((240, 1)), add_group_cross_terms(X, groups, 3)])
    else:
        design, full = Design(X), np.hstack([np.ones((240, 1)), X])
    one_group = np.flatnonzero(groups == 1)
    mixed = rng.choice(240, size=50, replace=False)
    for rows in (one_group, mixed, np.zeros(0, dtype=np.int64)):
        values = rng.normal(size=len(rows))
        np.testing.assert_allclose(design.rmatvec_rows(rows, values), full[rows].T @ values)


def assert_block_form_scores_as_the_matrix(design, full, rng):
    form = design.block_form()
    w = rng.normal(size=full.shape[1])
    vectors = (form.expand @ w).reshape(-1, form.rows.shape[1])
    rows = form.rows.toarray()
    scores = np.einsum("ij,ij->i", rows, vectors[form.block])
    np.testing.assert_allclose(scores, full @ w)
    r = rng.normal(size=full.shape[0])
    block_sums = np.zeros_like(vectors)
    np.add.at(block_sums, form.block, r[:, None] * rows)
    np.testing.assert_allclose(form.expand.T @ block_sums.reshape(-1), full.T @ r)
