"""The design matrix X̃ = [1, X] of a linear model, stored sparse when that is faster.

One-hot encoded tables are mostly zeros (Adult: about one entry in eight is non-zero), so their
products X̃·w and X̃ᵀ·r run several times faster on a CSR matrix than on a dense one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

SPARSE_BELOW_DENSITY = 0.3


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

    def dense(self) -> np.ndarray:
        return self._rows.toarray() if self.sparse else self._rows
