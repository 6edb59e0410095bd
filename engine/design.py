"""The design matrix X̃ = [1, X] of a linear model, stored sparse when that is faster.

One-hot encoded tables are mostly zeros (Adult: about one entry in eight is non-zero), so their
products X̃·w and X̃ᵀ·r run several times faster on a CSR matrix than on a dense one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from engine.data.encoding import add_group_cross_terms
from engine.kernels import csr_rows_transpose_product

SPARSE_BELOW_DENSITY = 0.3


@dataclass(frozen=True)
class BlockForm:
    """X̃·w row by row, for compiled loops: row i scores ⟨rows_i, u_{block_i}⟩ where the block
    vectors u_b (each as long as a row of `rows`) stack into `expand`·w. A plain design has one
    block and `expand` = I; with group cross-terms each group is a block (see `CrossDesign`), so
    the loop reads the non-zeros of [1, X] once instead of those of X̃."""

    rows: sp.csr_array
    block: np.ndarray
    expand: sp.csr_array


class Design:
    """X̃ with a leading column of ones; `matvec` is X̃·w, `rmatvec` is X̃ᵀ·r."""

    def __init__(self, X: np.ndarray) -> None:
        ones = np.ones((X.shape[0], 1))
        dense = np.ascontiguousarray(np.hstack([ones, X]))
        self.shape = dense.shape
        density = np.count_nonzero(dense) / max(dense.size, 1)
        self.sparse = density < SPARSE_BELOW_DENSITY
        if self.sparse:
            self._rows = sp.csr_array(dense)
            self._columns = sp.csr_array(dense.T)  # X̃ᵀ stored by rows: a fast transpose product
        else:
            self._rows = dense
            self._columns = np.ascontiguousarray(dense.T)

    def matvec(self, w: np.ndarray) -> np.ndarray:
        return self._rows @ w

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        return self._columns @ r

    def rmatmat(self, R: np.ndarray) -> np.ndarray:
        """X̃ᵀ·R for an (n, m) matrix R, as a dense (d, m) array."""
        return np.asarray(self._columns @ R)

    def rmatvec_rows(self, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        """X̃[rows]ᵀ·values, touching only the rows with a non-zero value when sparse."""
        if self.sparse:
            m = self._rows
            return csr_rows_transpose_product(m.indptr, m.indices, m.data, rows, values, m.shape[1])
        return values @ self._rows[rows]

    def dense(self) -> np.ndarray:
        return self._rows.toarray() if self.sparse else self._rows

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

    def __init__(self, X: np.ndarray, groups: np.ndarray, n_groups: int) -> None:
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
        crossed = add_group_cross_terms(self._X, self._groups, self.n_groups)
        return np.hstack([np.ones((self.n, 1)), crossed])

    def block_form(self) -> BlockForm:
        rows = sp.csr_array(np.hstack([np.ones((self.n, 1)), self._X]))
        # column j of `expand`: the block vectors of the unit vector e_j
        expand = sp.csr_array(np.vstack(self._group_vectors(np.eye(self.shape[1]))))
        return BlockForm(rows=rows, block=self._groups.astype(np.int64), expand=expand)
