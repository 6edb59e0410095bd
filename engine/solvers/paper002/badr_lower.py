"""The lower level of paper 002 for a linear model: the group losses F_s, their weighted sum
f(w, λ) = Σ_s λ_s F_s(w), its exact minimiser w*(λ), and the implicit gradient of an upper-level
objective H(w*(λ)).

    F_s(w) = (1/n_s) Σ_{i∈s} ℓ(x̃_iᵀw, y_i) + (μ/2)‖w‖²_⋆          (paper 002, Sec. 2)

‖·‖_⋆ leaves out the intercept (the first column of X̃ = [1, X]). The score x̃ᵀw includes it, in
the fit, in the derivatives and in the measures alike: the package that accompanies the paper
fits an intercept its hypergradient ignores, which flips the gradient's sign (spec 002 §4,
defects 2 and 3); here one parameterisation and one loss serve everything.

Because Σ_s λ_s = 1, f(w, λ) = Σ_i r_i ℓ_i + (μ/2)‖w‖²_⋆ with row weights r_i = λ_{a_i}/n_{a_i},
so its gradient, Hessian and Hessian-vector products are the objective's per-row derivatives
weighted by r: ∇²f = X̃ᵀ diag(r ℓ″) X̃ + μ I_⋆ (closed form, spec 002 §4). With it,

    ∂w*/∂λ_s = −H⁻¹ ∇F_s(w*),   ∂Φ/∂λ_s = −∇F_s(w*)ᵀ H⁻¹ ∇H(w*)         (paper 002, Sec. 3)

needs one Cholesky factorisation and one solve, whatever the number of groups.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from engine.design import SPARSE_BELOW_DENSITY
from engine.errors import UserError
from engine.numerics import top_eigenvalue
from engine.problem import Problem

# stop when half the squared Newton decrement, ≈ f − f*, is below this: with μ ≥ 1e-4 the
# solution is then within about 1e-8 of w*, accurate enough for finite differences of Φ
NEWTON_TOLERANCE = 1e-20
# below this decrease f − f* is lost in rounding: the full Newton step is taken, unchecked,
# in the region where Newton's method converges quadratically
LINE_SEARCH_ABOVE = 1e-10
NEWTON_STEPS = 100  # a damped Newton method from a warm start needs a handful
ARMIJO = 1e-4  # sufficient decrease of the backtracking line search
POWER_ITERATIONS = 60  # for the largest eigenvalue of the curvature bound (a few digits suffice)

# a differentiable upper-level objective H(w): its value and ∇_w H
Upper = Callable[[np.ndarray], tuple[float, np.ndarray]]


@dataclass(frozen=True)
class Hypergradient:
    """Φ at w*(λ), ∂Φ/∂λ, and the parts the records show."""

    value: float
    grad: np.ndarray  # (S,)
    group_losses: np.ndarray  # F_s(w*), (S,)


class GroupLosses:
    """F_1..F_S of a linear model on a Problem's training split, with l2 weight `l2` = μ."""

    def __init__(self, problem: Problem, l2: float) -> None:
        if not problem.model.affine:
            raise UserError("paper 002's lower level is a linear model (ℓ2-regularised GLM)")
        if not (np.isfinite(l2) and l2 > 0):
            raise UserError(
                "paper 002 needs l2 = μ > 0: each F_s must be strongly convex (Sec. 2, Prop. 2)"
            )
        train = problem.data.train
        self.problem, self.l2 = problem, float(l2)
        self.objective = problem.objective
        self.design = problem.design("train")
        self.y = train.y
        self.groups = train.groups
        self.n_groups = problem.data.n_groups
        self.sizes = np.bincount(self.groups, minlength=self.n_groups).astype(np.float64)
        self.dimension = self.design.shape[1]
        self.penalised = np.ones(self.dimension)
        self.penalised[0] = 0.0  # the intercept (paper 002's code: not penalised)
        dense = self.design.dense()  # X̃ itself, with the group cross-terms if the model has them
        sparse = np.count_nonzero(dense) < SPARSE_BELOW_DENSITY * dense.size
        self.rows = sp.csr_array(dense) if sparse else dense  # X̃, for Hessians and batches
        self._members = sp.csr_array(
            (np.ones(len(self.y)), (np.arange(len(self.y)), self.groups)),
            shape=(len(self.y), self.n_groups),
        )

    # ---- values and derivatives -----------------------------------------------------------
    def scores(self, w: np.ndarray) -> np.ndarray:
        return self.design.matvec(w)

    def row_weights(self, weights: np.ndarray) -> np.ndarray:
        """r_i = λ_{a_i} / n_{a_i}: f(w, λ) = Σ_i r_i ℓ_i + (μ/2)‖w‖²_⋆ when Σλ = 1."""
        return (weights / self.sizes)[self.groups]

    def penalty(self, w: np.ndarray) -> float:
        return 0.5 * self.l2 * float(np.sum(self.penalised * w * w))

    def group_losses(self, h: np.ndarray, w: np.ndarray) -> np.ndarray:
        """F_s(w) of every group, from the scores h = X̃w."""
        losses, _ = self.objective.per_sample(h, self.y)
        return np.bincount(self.groups, weights=losses, minlength=self.n_groups) / self.sizes + (
            self.penalty(w)
        )

    def group_gradients(self, h: np.ndarray, w: np.ndarray) -> np.ndarray:
        """∇F_s(w) of every group as the rows of an (S, d) array."""
        _, slopes = self.objective.per_sample(h, self.y)
        per_row = self._members.multiply(slopes[:, None]).toarray() / self.sizes
        return self.design.rmatmat(per_row).T + self.l2 * self.penalised * w

    def weighted(self, w: np.ndarray, weights: np.ndarray) -> tuple[float, np.ndarray]:
        """f(w, λ) and ∇_w f."""
        h = self.scores(w)
        losses, slopes = self.objective.per_sample(h, self.y)
        r = self.row_weights(weights)
        value = float(r @ losses) + self.penalty(w)
        return value, self.design.rmatvec(r * slopes) + self.l2 * self.penalised * w

    def hessian(self, h: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """∇²_w f(w, λ) = X̃ᵀ diag(r ℓ″) X̃ + μ I_⋆ at the scores h = X̃w (dense, d × d)."""
        c = self.row_weights(weights) * self.objective.second_derivative(h, self.y)
        if sp.issparse(self.rows):
            gram = (self.rows.T @ self.rows.multiply(c[:, None])).toarray()
        else:
            gram = self.rows.T @ (self.rows * c[:, None])
        return gram + np.diag(self.l2 * self.penalised)

    def smoothness(self) -> float:
        """A bound on the largest eigenvalue of ∇²_w f(·, λ) for every λ on the simplex:
        ℓ″ ≤ c/n per row of a mean (the objective's `curvature`), and r_i ≤ 1/n_{a_i}, so
        L ≤ c·λ_max(X̃ᵀ diag(1/n_{a_i}) X̃) + μ. 1/L is a safe step for the w- and v-steps."""
        n = len(self.y)
        bound = self.objective.curvature(self.y) * n  # the per-row bound on ℓ″
        inverse_sizes = 1.0 / self.sizes[self.groups]
        top = top_eigenvalue(
            lambda v: self.design.rmatvec(inverse_sizes * self.design.matvec(v)),
            self.dimension,
            POWER_ITERATIONS,
        )
        return bound * top * 1.05 + self.l2  # 5 %: the power iteration approaches from below

    # ---- the exact lower-level solution ------------------------------------------------
    def solve(self, weights: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
        """w*(λ) by a damped Newton method from `start` (a warm start: the last λ's solution).
        f(·, λ) is μ-strongly convex, so it converges quadratically near w*."""
        w = np.zeros(self.dimension) if start is None else np.array(start, dtype=np.float64)
        value, grad = self.weighted(w, weights)
        for _ in range(NEWTON_STEPS):
            h = self.scores(w)
            direction = -scipy.linalg.solve(
                self.hessian(h, weights), grad, assume_a="pos", check_finite=False
            )
            decrease = -float(grad @ direction)
            if decrease / 2.0 <= NEWTON_TOLERANCE:
                break
            step = 1.0
            while True:
                trial = w + step * direction
                trial_value, trial_grad = self.weighted(trial, weights)
                enough = trial_value <= value - ARMIJO * step * decrease
                if enough or decrease <= LINE_SEARCH_ABOVE or step < 1e-10:
                    break
                step /= 2.0
            w, value, grad = trial, trial_value, trial_grad
        return w

    def hypergradient(self, w: np.ndarray, weights: np.ndarray, upper: Upper) -> Hypergradient:
        """Φ(λ) = H(w) and ∂Φ/∂λ_s = −∇F_s(w)ᵀ H⁻¹ ∇_w H(w) at w = w*(λ) (paper 002, Sec. 3):
        one Cholesky factorisation, one adjoint solve u = H⁻¹∇H, S inner products."""
        h = self.scores(w)
        value, grad_w = upper(w)
        adjoint = scipy.linalg.cho_solve(
            scipy.linalg.cho_factor(self.hessian(h, weights), check_finite=False),
            grad_w,
            check_finite=False,
        )
        gradients = self.group_gradients(h, w)
        return Hypergradient(value, -gradients @ adjoint, self.group_losses(h, w))


def project_simplex(v: np.ndarray) -> np.ndarray:
    """The Euclidean projection onto the simplex {λ ≥ 0, Σλ = 1}, by sorting (Held et al. 1974;
    the Proj_Δ of paper 002, Alg. 1)."""
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - 1.0
    k = np.arange(1, len(v) + 1)
    last = np.flatnonzero(u - cumulative / k > 0)[-1]
    return np.maximum(v - cumulative[last] / (last + 1), 0.0)
