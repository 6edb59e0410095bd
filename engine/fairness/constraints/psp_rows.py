"""pSP's rows with the ramp (paper 003, eq. 15 and Sec. 7.1) on one batch, in closed form.

Group k's surrogate rate at θ_p is the mean over its samples of σ((h − θ_p)/τ) with the ramp
σ(x) = clip(x + ½, 0, 1). Its derivative in a score h_i of group k is 1/(τ n_k) on the ramp's
slope, θ_p − τ/2 < h_i ≤ θ_p + τ/2 (at the kinks, the subgradient that relu's autograd takes:
`surrogates.group_mean_relu`), and 0 elsewhere; its derivative in θ_p is minus their sum. So the
rows' Jacobian in the scores is sparse: a row holds only its group's samples on its slope, and
the whole Jacobian costs what those samples number, not m passes of autograd over the batch
(`AutogradRows`). Tests hold the two equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from engine.errors import UserError

from .batch_rows import NumpyAux, Pullback, RowsJacobian
from .surrogates import sorted_ramp_means


@dataclass(frozen=True)
class RampPSPRows:
    """The rows (p, group, side) of eq. 15: lower p − rate_k(θ_p), upper rate_k(θ_p) − p − band."""

    codes: np.ndarray  # each sample's group
    n_groups: int
    grid: np.ndarray  # the rank levels p of Î
    band: float  # κ(β − α)
    temperature: float  # τ

    def __post_init__(self) -> None:
        if np.any(np.bincount(self.codes, minlength=self.n_groups) == 0):
            raise UserError("A group has no samples in this batch, so its rate is undefined.")

    @property
    def m(self) -> int:
        return 2 * self.n_groups * self.grid.size

    def values(self, h: np.ndarray, aux: NumpyAux) -> np.ndarray:
        theta = np.asarray(aux["theta"], dtype=np.float64)
        cells = self._sorted_groups(h)
        rates = [sorted_ramp_means(*cell[2:], theta, self.temperature)[0] for cell in cells]
        return self._rows(np.stack(rates))

    def linearise(self, h: np.ndarray, aux: NumpyAux) -> tuple[np.ndarray, Pullback]:
        at = self.jacobian(h, aux)
        return at.values, lambda v: (at.scores.T @ v, {"theta": at.aux["theta"].T @ v})

    def jacobian(self, h: np.ndarray, aux: NumpyAux) -> RowsJacobian:
        """The rows and their Jacobian, sparse in the scores."""
        theta = np.asarray(aux["theta"], dtype=np.float64)
        n_grid = self.grid.size
        rates = np.empty((self.n_groups, n_grid))
        theta_slopes = np.empty((self.n_groups, n_grid))
        columns = np.empty((self.n_groups, n_grid), dtype=object)  # the samples on each slope
        slopes = np.empty(self.n_groups)  # 1/(τ n_k)
        for k, (members, order, ordered, prefix) in enumerate(self._sorted_groups(h)):
            rates[k], first, past = sorted_ramp_means(ordered, prefix, theta, self.temperature)
            slopes[k] = 1.0 / (self.temperature * members.size)
            theta_slopes[k] = -(past - first) * slopes[k]
            for p in range(n_grid):
                columns[k, p] = members[order[first[p] : past[p]]]
        d_theta = np.zeros((self.m, n_grid))
        cells, signs = [], []
        for p in range(n_grid):
            for k in range(self.n_groups):
                for side, sign in ((0, -1.0), (1, 1.0)):
                    row = (p * self.n_groups + k) * 2 + side
                    d_theta[row, p] = sign * theta_slopes[k, p]
                    cells.append(columns[k, p])
                    signs.append(sign * slopes[k])
        lengths = np.array([c.size for c in cells], dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        data = np.repeat(np.array(signs), lengths)
        indices = np.concatenate(cells) if cells else np.zeros(0, dtype=np.int64)
        scores = sparse.csr_matrix((data, indices, indptr), shape=(self.m, h.shape[0]))
        return RowsJacobian(self._rows(rates), scores, {"theta": d_theta})

    def _sorted_groups(self, h: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        """Per group: its samples, the order that sorts their scores, the sorted scores and
        their prefix sums."""
        cells = []
        for k in range(self.n_groups):
            members = np.flatnonzero(self.codes == k)
            order = np.argsort(h[members], kind="stable")
            ordered = h[members][order]
            cells.append((members, order, ordered, np.concatenate([[0.0], np.cumsum(ordered)])))
        return cells

    def _rows(self, rates: np.ndarray) -> np.ndarray:
        """The rows (p, group, side) from the (G, |Î|) rates."""
        lower, upper = self.grid - rates, rates - self.grid - self.band
        return np.stack([lower.T, upper.T], axis=-1).reshape(-1)
