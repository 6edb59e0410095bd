"""The projection of projected gradient (paper 003, eqs. 108–110): a convex QCQP in cvxpy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import cvxpy as cp
import numpy as np

if TYPE_CHECKING:
    from engine.solvers.paper003.quadratic_baselines import QuadraticRows

EIGEN_CUTOFF = 1e-12  # relative: directions of P_i below this are numerically flat


def _square_root(matrix: np.ndarray) -> np.ndarray:
    """F with F Fᵀ = matrix (symmetric PSD up to rounding), dropping flat directions."""
    values, vectors = np.linalg.eigh(matrix)
    keep = values > EIGEN_CUTOFF * max(values.max(), 1.0)
    return vectors[:, keep] * np.sqrt(values[keep])


class Projection:
    """argmin_w ½‖w − z‖² s.t. the rows ≤ 0 (eqs. 108–110), compiled once for every z.

    The QCQP is posed in the eigenbasis V of the first row's Hessian (v = Vᵀw; the objective is
    unchanged by the rotation). Rows (k, k') and (k', k) have the same Hessian, so with two groups
    every row is diagonal there and the conic problem stays sparse: about fifteen times faster
    than dense second-order cones on Adult. Rows with another Hessian keep a dense factor.
    """

    def __init__(self, rows: QuadraticRows) -> None:
        self.rows = rows
        _, self.basis = np.linalg.eigh(rows.hessians[0])
        self.v = cp.Variable(self.basis.shape[1])
        self.z = cp.Parameter(self.basis.shape[1])
        constraints = [
            0.5 * self._square_norm(self.basis.T @ hessian @ self.basis)
            + (self.basis.T @ q) @ self.v
            + r
            <= 0
            for hessian, q, r in zip(rows.hessians, rows.linear, rows.constant, strict=True)
        ]
        self.problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(self.v - self.z)), constraints)

    def _square_norm(self, rotated: np.ndarray) -> cp.Expression:
        """vᵀ R v for a rotated Hessian R, as a diagonal form when R is diagonal."""
        diagonal = np.diag(rotated)
        scale = max(np.abs(rotated).max(), 1.0)
        if np.abs(rotated - np.diag(diagonal)).max() <= EIGEN_CUTOFF**0.5 * scale:
            return cp.sum_squares(cp.multiply(np.sqrt(np.clip(diagonal, 0.0, None)), self.v))
        return cp.sum_squares(_square_root(rotated).T @ self.v)

    def __call__(self, z: np.ndarray) -> tuple[np.ndarray, str]:
        """The projection of z and how it was found ("inside", or the solver's status)."""
        if self.rows.values(z).max() <= 0:
            return z, "inside"
        self.z.value = self.basis.T @ z
        try:
            self.problem.solve(solver=cp.CLARABEL, warm_start=True)
        except cp.error.SolverError as error:
            return z, f"failed: {error}"
        if self.v.value is None or self.problem.status not in (
            cp.OPTIMAL,
            cp.OPTIMAL_INACCURATE,
        ):
            return z, f"failed: {self.problem.status}"
        return self._pull_inside(self.basis @ self.v.value), self.problem.status

    def _pull_inside(self, w: np.ndarray) -> np.ndarray:
        """t·w with the largest t ≤ 1 that convexity guarantees feasible: row(tw) ≤ t·row(w) +
        (1 − t)·row(0), and row(0) = −κ < 0."""
        values = self.rows.values(w)
        if values.max() <= 0:
            return w
        margin = -self.rows.constant  # κ
        return w * float(np.min(margin / (margin + np.maximum(values, 0.0))))
