"""The design matrix X̃ = [1, X] of a linear model, stored sparse when that is faster.

One-hot encoded tables are mostly zeros (Adult: about one entry in eight is non-zero), so their
products X̃·w and X̃ᵀ·r run several times faster on a CSR matrix than on a dense one. X may come
dense (float64) or already sparse (a CSR matrix, float32 for large one-hot data): a sparse X is
never made dense here (but by `dense()`, on request), and keeps its value type; products add in
float64 and return float64 (`engine.kernels`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from engine.data.encoding import add_group_cross_terms
from engine.dense import check_dense_fits, to_dense
from engine.kernels import (
    csr_matvec,
    csr_rmatmat,
    csr_rmatvec,
    csr_rows_transpose_product,
    unsigned_csr,
)

SPARSE_BELOW_DENSITY = 0.3

Matrix = np.ndarray | sp.csr_array  # a split's X: dense float64, or CSR (float32 when large)


@dataclass(frozen=True)
class BlockForm:
    """X̃·w row by row, for compiled loops: row i scores ⟨rows_i, u_{block_i}⟩ where the block
    vectors u_b (each as long as a row of `rows`) stack into `expand`·w. A plain design has one
    block and `expand` = I; with group cross-terms each group is a block (see `CrossDesign`), so
    the loop reads the non-zeros of [1, X] once instead of those of X̃."""

    rows: sp.csr_array
    block: np.ndarray
    expand: sp.csr_array


def with_ones(X: sp.csr_array) -> sp.csr_array:
    """[1, X] in CSR, with X's value type (a column of ones is exact in any float type): each
    row's entries after a leading 1 in column 0."""
    n, d = X.shape
    starts = X.indptr[:-1]
    indices = np.insert(X.indices + 1, starts, 0)
    data = np.insert(X.data, starts, 1)
    indptr = X.indptr + np.arange(n + 1, dtype=X.indptr.dtype)
    return sp.csr_array((data, indices, indptr), shape=(n, d + 1))


def _density(X: np.ndarray) -> float:
    """The share of non-zero entries of [1, X], counted without building it."""
    n, d = X.shape
    return (n + np.count_nonzero(X)) / max(n * (d + 1), 1)


class Design:
    """X̃ with a leading column of ones; `matvec` is X̃·w, `rmatvec` is X̃ᵀ·r."""

    def __init__(self, X: Matrix) -> None:
        self.shape = (X.shape[0], X.shape[1] + 1)
        self.sparse = sp.issparse(X) or _density(X) < SPARSE_BELOW_DENSITY
        if self.sparse:
            self._rows = with_ones(sp.csr_array(X))
            self._parts = unsigned_csr(self._rows)
        else:
            self._rows = np.ascontiguousarray(np.hstack([np.ones((X.shape[0], 1)), X]))
            self._columns = np.ascontiguousarray(self._rows.T)

    def matvec(self, w: np.ndarray) -> np.ndarray:
        if not self.sparse:
            return self._rows @ w
        out = np.empty(self.shape[0])
        csr_matvec(*self._parts, np.ascontiguousarray(w, dtype=np.float64), out)
        return out

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        if not self.sparse:
            return self._columns @ r
        out = np.empty(self.shape[1])
        csr_rmatvec(*self._parts, np.ascontiguousarray(r, dtype=np.float64), out)
        return out

    def rmatmat(self, R: np.ndarray) -> np.ndarray:
        """X̃ᵀ·R for an (n, m) matrix R, as a dense (d, m) array."""
        if not self.sparse:
            return np.asarray(self._columns @ R)
        out = np.empty((self.shape[1], R.shape[1]))
        csr_rmatmat(*self._parts, np.ascontiguousarray(R, dtype=np.float64), out)
        return out

    def rmatvec_rows(self, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        """X̃[rows]ᵀ·values, touching only the rows with a non-zero value when sparse."""
        if self.sparse:
            return csr_rows_transpose_product(*self._parts, rows, values, self.shape[1])
        return values @ self._rows[rows]

    def dense(self) -> np.ndarray:
        """X̃ as a dense float64 array (refused, with the sizes, when it would not fit)."""
        return to_dense(self._rows, "this solver's design matrix X̃") if self.sparse else self._rows

    def block_form(self) -> BlockForm:
        return BlockForm(
            rows=self._rows if self.sparse else sp.csr_array(self._rows),
            block=np.zeros(self.shape[0], dtype=np.int64),
            expand=sp.identity(self.shape[1], format="csr"),
        )


class CrossDesign:
    """X̃ = [1, x, γ, γ·x] (paper 003, Sec. 7.1) without storing the products γ·x.

    A row of group g > 0 scores ⟨[1, x], u_g⟩ with u_g = (w_1 + w_γg, w_x + w_γx,g): each group
    multiplies its own rows of [1, X] by its own vector, so a product touches the non-zeros of
    [1, X] once instead of those of X̃ (about 40 % fewer on Adult by sex). The parameter layout is
    that of `add_group_cross_terms` after the intercept: [1, x, γ_1..γ_{G−1}, γ_1·x, …].
    """

    def __init__(self, X: Matrix, groups: np.ndarray, n_groups: int) -> None:
        self.n, self.d = X.shape[0], X.shape[1] + 1  # d counts the intercept
        self.n_groups = n_groups
        self.shape = (self.n, self.d + (n_groups - 1) * self.d)
        self.rows = [np.flatnonzero(groups == g) for g in range(n_groups)]
        self.blocks = [Design(X[r]) for r in self.rows]
        self._X, self._groups = X, groups
        self._position = np.empty(self.n, dtype=np.int64)  # each row's place in its group's block
        for rows in self.rows:
            self._position[rows] = np.arange(len(rows))

    def _group_vectors(self, w: np.ndarray) -> list[np.ndarray]:
        """Each group's vector u_g for the parameters w, shape (D,); or for each column of a
        (D, m) matrix of parameters, shape (d, m) per group."""
        base, d, g = w[: self.d], self.d, self.n_groups
        gamma = w[d : d + g - 1]
        products = w[d + g - 1 :].reshape(g - 1, d - 1, *w.shape[1:])
        vectors = [base]
        for k in range(1, g):
            shift = np.concatenate([gamma[k - 1][None], products[k - 1]])
            vectors.append(base + shift)
        return vectors

    def matvec(self, w: np.ndarray) -> np.ndarray:
        h = np.empty(self.n)
        for rows, block, u in zip(self.rows, self.blocks, self._group_vectors(w), strict=True):
            h[rows] = block.matvec(u)
        return h

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        return self.rmatmat(r[:, None])[:, 0]

    def rmatmat(self, R: np.ndarray) -> np.ndarray:
        sums = [block.rmatmat(R[rows]) for rows, block in zip(self.rows, self.blocks, strict=True)]
        return self._combine(sums)

    def rmatvec_rows(self, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        """X̃[rows]ᵀ·values, with products only over the blocks of the groups the rows are in: a
        single-group constraint row (pSP, paper 003 eq. 15) costs that group's non-zeros alone."""
        row_groups = self._groups[rows]
        sums = [np.zeros((self.d, 1)) for _ in self.blocks]
        for g, block in enumerate(self.blocks):
            mine = row_groups == g
            if mine.any():
                sums[g] = block.rmatvec_rows(self._position[rows[mine]], values[mine])[:, None]
        return self._combine(sums)[:, 0]

    def _combine(self, sums: list[np.ndarray]) -> np.ndarray:
        """X̃ᵀ·R from each group block's [1, X]ᵀ·R_g, (d, m) each."""
        total = np.sum(sums, axis=0)  # (d, m): gradient of the shared [1, x] weights
        gammas = [s[:1] for s in sums[1:]]  # Σ over group k of R: the γ_k weights
        products = [s[1:] for s in sums[1:]]  # group k's Xᵀ R: the γ_k·x weights
        return np.vstack([total, *gammas, *products])

    def dense(self) -> np.ndarray:
        """X̃ as a dense float64 array (refused, with the sizes, when it would not fit)."""
        check_dense_fits(*self.shape, "this solver's design matrix X̃")
        X = to_dense(self._X, "this solver's design matrix X̃")
        crossed = add_group_cross_terms(X, self._groups, self.n_groups)
        return np.hstack([np.ones((self.n, 1)), crossed])

    def block_form(self) -> BlockForm:
        rows = with_ones(sp.csr_array(self._X))
        # column j of `expand`: the block vectors of the unit vector e_j
        expand = sp.csr_array(np.vstack(self._group_vectors(np.eye(self.shape[1]))))
        return BlockForm(rows=rows, block=self._groups.astype(np.int64), expand=expand)
