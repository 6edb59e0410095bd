"""The training objective as a component of a Problem: a function of the scores of the rows given,
with its value and gradient in score space, on a whole split or on any batch of its rows.

Solvers see the objective only through scores h (any model: the model's own backward pass turns
∂f/∂h into parameter gradients), so one objective serves linear models, cross-terms and MLPs,
full-batch and minibatch solvers alike.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from engine.errors import UserError
from engine.pairwise import square_pair_loss


class Objective(Protocol):
    """f(h, y) of the rows given (a split, or a batch of it). It need not be a mean over samples
    (a pairwise objective is not); the capability MINIBATCH_LOSS (`engine.capabilities`) says
    which objectives are, and only those have per-sample losses (`LogisticLoss.per_sample`)."""

    name: str

    def value(self, h: np.ndarray, y: np.ndarray) -> float: ...

    def value_and_grad(self, h: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        """f and ∂f/∂h, sharing the work."""
        ...

    def curvature(self, y: np.ndarray) -> float:
        """A bound on the largest eigenvalue of ∇²_h f on rows with labels y: ∇f is Lipschitz in
        the scores with this constant (a linear model's in w: times λ_max(XᵀX))."""
        ...


@dataclass(frozen=True)
class LogisticLoss:
    """mean ln(1 + exp(−ζ h)), ζ = 2y − 1 ∈ {−1, +1}: the logistic loss of paper 003 (eq. 79,
    Sec. 2) and the BCE-with-logits of paper 000 (eq. 12), which are the same function."""

    name: str = field(default="logistic", init=False)

    def value(self, h: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(np.logaddexp(0.0, -_signed(y) * h)))

    def value_and_grad(self, h: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        """f and ∂f/∂h, whose entries are ℓ′(h_i, y_i)/n."""
        losses, slopes = self.per_sample(h, y)
        return float(np.mean(losses)), slopes / len(h)

    def curvature(self, y: np.ndarray) -> float:
        """1/(4n): ℓ″ ≤ 1/4 for every sample of the mean."""
        return 0.25 / len(y)

    def per_sample(self, h: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """ℓ(h_i, y_i) and ℓ′(h_i, y_i) of every row (for means over groups of rows)."""
        zeta = _signed(y)
        z = -zeta * h
        e = np.exp(-np.abs(z))  # one exp for both: stable for large |z|
        sigma_z = np.where(z >= 0, 1.0, e) / (1.0 + e)
        return np.maximum(z, 0.0) + np.log1p(e), -zeta * sigma_z

    def second_derivative(self, h: np.ndarray, y: np.ndarray) -> np.ndarray:
        """ℓ″(h_i, y_i) = σ(h_i)(1 − σ(h_i)) of every row, whatever the label (for Newton steps
        and Hessian-vector products of weighted sums of group means)."""
        e = np.exp(-np.abs(np.asarray(h, dtype=np.float64)))
        return e / (1.0 + e) ** 2


@dataclass(frozen=True)
class PairwiseAUCLoss:
    """E[c1 (h(ξ) − h(ξ′) − c2)² | ζ = 1, ζ′ = −1] (paper 004, eq. 3): the square surrogate of
    1 − AUC, the mean over every (positive, negative) pair of the rows given, evaluated in O(n)
    by its moment form (`engine.pairwise`). It is not a mean over samples: its plug-in value on
    a minibatch is a biased estimate (spec 004 §5). Paper 004 uses c1 ∈ {0.5, 1} and c2 = 1."""

    c1: float = 0.5  # as the auc_gap family's (one loss for objective and constraint)
    c2: float = 1.0
    name: str = field(default="pairwise_auc", init=False)

    def __post_init__(self) -> None:
        if not (self.c1 > 0.0 and self.c2 > 0.0):
            raise UserError(
                f"the pairwise AUC objective needs c1 > 0 and c2 > 0 (paper 004, Sec. 2), not "
                f"c1 = {self.c1}, c2 = {self.c2}"
            )

    def value(self, h: np.ndarray, y: np.ndarray) -> float:
        return self.value_and_grad(h, y)[0]

    def value_and_grad(self, h: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        positive = np.asarray(y) == 1
        if positive.all() or not positive.any():
            raise UserError("the pairwise AUC objective needs both positive and negative rows")
        value, d_pos, d_neg = square_pair_loss(h[positive], h[~positive], self.c1, self.c2)
        grad = np.empty(len(h))
        grad[positive], grad[~positive] = d_pos, d_neg
        return value, grad

    def curvature(self, y: np.ndarray) -> float:
        """2c1(1/n₊ + 1/n₋): ∇²_h f is c1 times 2/n_A on each set's block minus the rank-one
        coupling of the means, whose largest eigenvalue is on the difference of the two sets'
        indicators."""
        positive = int(np.sum(np.asarray(y) == 1))
        return 2.0 * self.c1 * (1.0 / positive + 1.0 / (len(y) - positive))


OBJECTIVE_TYPES: dict[str, type[Objective]] = {
    LogisticLoss.name: LogisticLoss,
    PairwiseAUCLoss.name: PairwiseAUCLoss,
}


def objective_to_dict(objective: Objective) -> dict[str, Any]:
    """The objective's name and parameters (JSON-able)."""
    return dataclasses.asdict(objective)


def objective_from_dict(fields: dict[str, Any]) -> Objective:
    """The objective `objective_to_dict` wrote."""
    parameters = dict(fields)
    name = parameters.pop("name")
    try:
        kind = OBJECTIVE_TYPES[name]
    except KeyError:
        raise UserError(
            f"unknown objective {name!r}; the objectives are: {', '.join(OBJECTIVE_TYPES)}"
        ) from None
    return kind(**parameters)


def _signed(y: np.ndarray) -> np.ndarray:
    """ζ = 2y − 1 for labels y ∈ {0, 1}."""
    return 2.0 * np.asarray(y, dtype=np.float64) - 1.0
