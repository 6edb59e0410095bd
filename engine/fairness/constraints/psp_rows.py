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
        return self.jacobian(h, aux).values

    def linearise(self, h: np.ndarray, aux: NumpyAux) -> tuple[np.ndarray, Pullback]:
        at = self.jacobian(h, aux)
        return at.values, lambda v: (at.scores.T @ v, {"theta": at.aux["theta"].T @ v})

    def jacobian(self, h: np.ndarray, aux: NumpyAux) -> RowsJacobian:
        """The rows and their Jacobian, sparse in the scores."""
        theta = np.asarray(aux["theta"], dtype=np.float64)
        tau, n_grid = self.temperature, self.grid.size
        rates = np.empty((self.n_groups, n_grid))
        theta_slopes = np.empty((self.n_groups, n_grid))
        columns = np.empty((self.n_groups, n_grid), dtype=object)  # the samples on each slope
        slopes = np.empty(self.n_groups)  # 1/(τ n_k)
        for k in range(self.n_groups):
            members = np.flatnonzero(self.codes == k)
            order = np.argsort(h[members], kind="stable")
            ordered = h[members][order]
            prefix = np.concatenate([[0.0], np.cumsum(ordered)])
            first = np.searchsorted(ordered, theta - 0.5 * tau, side="right")
            past = np.searchsorted(ordered, theta + 0.5 * tau, side="right")
            on_slope = past - first
            slopes[k] = 1.0 / (tau * members.size)
            # Σ σ: 1 above the slope, (h − θ)/τ + ½ on it
            ramp = (prefix[past] - prefix[first] - on_slope * theta) / tau + 0.5 * on_slope
            rates[k] = (members.size - past + ramp) / members.size
            theta_slopes[k] = -on_slope * slopes[k]
            for p in range(n_grid):
                columns[k, p] = members[order[first[p] : past[p]]]
        lower, upper = self.grid - rates, rates - self.grid - self.band
        values = np.stack([lower.T, upper.T], axis=-1).reshape(-1)  # rows (p, group, side)
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
        return RowsJacobian(values, scores, {"theta": d_theta})
