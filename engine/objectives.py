"""The training objective as a component of a Problem: a mean loss over samples, with its value
and gradient in score space, on a whole split or on any batch of its rows.

Solvers see the objective only through scores h (any model: the model's own backward pass turns
∂f/∂h into parameter gradients), so one objective serves linear models, cross-terms and MLPs,
full-batch and minibatch solvers alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


class Objective(Protocol):
    """f(h) = mean_i ℓ(h_i, y_i) over the rows given (a split, or a batch of it)."""

    name: str

    def value(self, h: np.ndarray, y: np.ndarray) -> float: ...

    def value_and_grad(self, h: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        """f and ∂f/∂h (each entry is ℓ′(h_i, y_i)/n), sharing the work."""
        ...

    def per_sample(self, h: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """ℓ(h_i, y_i) and ℓ′(h_i, y_i) of every row (for means over groups of rows)."""
        ...


@dataclass(frozen=True)
class LogisticLoss:
    """mean ln(1 + exp(−ζ h)), ζ = 2y − 1 ∈ {−1, +1}: the logistic loss of paper 003 (eq. 79,
    Sec. 2) and the BCE-with-logits of paper 000 (eq. 12), which are the same function."""

    name: str = "logistic"

    def value(self, h: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(np.logaddexp(0.0, -_signed(y) * h)))

    def value_and_grad(self, h: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        losses, slopes = self.per_sample(h, y)
        return float(np.mean(losses)), slopes / len(h)

    def per_sample(self, h: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        zeta = _signed(y)
        z = -zeta * h
        e = np.exp(-np.abs(z))  # one exp for both: stable for large |z|
        sigma_z = np.where(z >= 0, 1.0, e) / (1.0 + e)
        return np.maximum(z, 0.0) + np.log1p(e), -zeta * sigma_z


def _signed(y: np.ndarray) -> np.ndarray:
    """ζ = 2y − 1 for labels y ∈ {0, 1}."""
    return 2.0 * np.asarray(y, dtype=np.float64) - 1.0
