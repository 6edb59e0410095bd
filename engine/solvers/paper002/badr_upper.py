"""The upper level of paper 002 with its trade-off knob (spec 002 §5(b)):

    Φ_β(w) = Fair(X̃w) + β·L(w),   L(w) = Σ_s (n_s/n) F_s(w), the ERM objective,

so β = 0 is badr's Φ (eq. 8), and as β grows the minimiser over λ tends to the ERM weights
λ_s = n_s/n, where w*(λ) minimises L itself. Every λ keeps w*(λ) Pareto-efficient in the group
losses, so a sweep of β traces the front from the fairest efficient model to ERM.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import UserError
from engine.fairness.badr_measures import BadrMeasure, badr_measure
from engine.solvers.paper002.badr_lower import GroupLosses


@dataclass(frozen=True)
class UpperValue:
    """Φ_β(w) and its parts: the measure and the ERM objective."""

    value: float
    fair: float
    erm: float


class UpperObjective:
    """Φ_β of a measure (engine.fairness.badr_measures) on the training split."""

    def __init__(self, lower: GroupLosses, measure: str, rho: float, beta: float) -> None:
        if not (np.isfinite(beta) and beta >= 0):
            raise UserError(f"the trade-off β must be a finite number ≥ 0, not {beta}")
        self.lower, self.rho, self.beta = lower, float(rho), float(beta)
        self.measure: BadrMeasure = badr_measure(measure)
        self.task = lower.problem.data.task  # the measure refuses a task it has no form for

    def parts(self, w: np.ndarray) -> tuple[UpperValue, np.ndarray]:
        """Φ_β(w), its parts, and ∇_w Φ_β."""
        lower = self.lower
        h = lower.scores(w)
        losses, slopes = lower.objective.per_sample(h, lower.y)
        values, grad_h = self.at_scores(w, h, losses, slopes)
        return values, lower.design.rmatvec(grad_h) + self.ridge_part(w)

    def at_scores(
        self, w: np.ndarray, h: np.ndarray, losses: np.ndarray, slopes: np.ndarray
    ) -> tuple[UpperValue, np.ndarray]:
        """Φ_β's parts and its gradient in the scores at h = X̃w, given the rows' losses and
        slopes there: ∇_w Φ_β = X̃ᵀ(that gradient) + `ridge_part(w)`, so a caller with other
        products to take shares its pass over X̃. L's row weights are all 1/n."""
        lower = self.lower
        fair, grad_h = self.measure.value_and_grad(
            h,
            lower.groups,
            lower.y,
            rho=self.rho,
            task=self.task,
            loss=lower.objective.per_sample,
        )
        erm = float(np.mean(losses)) + lower.penalty(w)
        values = UpperValue(float(fair + self.beta * erm), float(fair), erm)
        return values, grad_h + self.beta * slopes / len(h)

    def ridge_part(self, w: np.ndarray) -> np.ndarray:
        """β times the gradient of L's ridge term, the part of ∇_w Φ_β outside X̃ᵀ(·)."""
        return self.beta * self.lower.l2 * self.lower.penalised * w

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """Φ_β(w) and ∇_w Φ_β (the `Upper` of engine.solvers.paper002.badr_lower)."""
        values, grad = self.parts(w)
        return values.value, grad
