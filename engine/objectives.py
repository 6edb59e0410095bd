"""The training objective as a component of a Problem: a function of the scores of the rows given,
with its value and gradient in score space, on a whole split or on any batch of its rows.

Solvers see the objective only through scores h (any model: the model's own backward pass turns
∂f/∂h into parameter gradients), so one objective serves linear models, cross-terms and MLPs,
full-batch and minibatch solvers alike.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from engine.errors import UserError
from engine.pairwise import square_pair_loss
from engine.task import Task


class Objective(Protocol):
    """f(h, y) of the rows given (a split, or a batch of it). It need not be a mean over samples
    (a pairwise objective is not); the capability MINIBATCH_LOSS (`engine.capabilities`) says
    which objectives are, and only those have per-sample losses (`MeanLoss.per_sample`). `task`
    is the kind of label it is defined for (`engine.task.Task`), `words` what it is called."""

    name: str
    task: ClassVar[Task]
    words: ClassVar[str]

    def value(self, h: np.ndarray, y: np.ndarray) -> float: ...

    def value_and_grad(self, h: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        """f and ∂f/∂h, sharing the work."""
        ...

    def curvature(self, y: np.ndarray) -> float:
        """A bound on the largest eigenvalue of ∇²_h f on rows with labels y: ∇f is Lipschitz in
        the scores with this constant (a linear model's in w: times λ_max(XᵀX))."""
        ...


class MeanLoss(ABC):
    """An objective that is a mean over samples, (1/n) Σ ℓ(h_i, y_i) (the capability
    MINIBATCH_LOSS): its value and gradient come from the ℓ and ℓ′ of every row."""

    @abstractmethod
    def per_sample(self, h: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """ℓ(h_i, y_i) and ℓ′(h_i, y_i) of every row (for means over groups of rows)."""

    @abstractmethod
    def second_derivative(self, h: np.ndarray, y: np.ndarray) -> np.ndarray:
        """ℓ″(h_i, y_i) of every row (for Newton steps and Hessian-vector products of weighted
        sums of group means)."""

    def value(self, h: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.per_sample(h, y)[0]))

    def value_and_grad(self, h: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        """f and ∂f/∂h, whose entries are ℓ′(h_i, y_i)/n."""
        losses, slopes = self.per_sample(h, y)
        return float(np.mean(losses)), slopes / len(h)


@dataclass(frozen=True)
class LogisticLoss(MeanLoss):
    """mean ln(1 + exp(−ζ h)), ζ = 2y − 1 ∈ {−1, +1}: the logistic loss of paper 003 (eq. 79,
    Sec. 2) and the BCE-with-logits of paper 000 (eq. 12), which are the same function."""

    name: str = field(default="logistic", init=False)
    task: ClassVar[Task] = Task.CLASSIFICATION
    words: ClassVar[str] = "logistic loss"

    def value(self, h: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(np.logaddexp(0.0, -_signed(y) * h)))  # without the slopes

    def curvature(self, y: np.ndarray) -> float:
        """1/(4n): ℓ″ ≤ 1/4 for every sample of the mean."""
        return 0.25 / len(y)

    def per_sample(self, h: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        zeta = _signed(y)
        z = -zeta * h
        e = np.exp(-np.abs(z))  # one exp for both: stable for large |z|
        sigma_z = np.where(z >= 0, 1.0, e) / (1.0 + e)
        return np.maximum(z, 0.0) + np.log1p(e), -zeta * sigma_z

    def second_derivative(self, h: np.ndarray, y: np.ndarray) -> np.ndarray:
        """ℓ″(h_i, y_i) = σ(h_i)(1 − σ(h_i)) of every row, whatever the label."""
        e = np.exp(-np.abs(np.asarray(h, dtype=np.float64)))
        return e / (1.0 + e) ** 2


@dataclass(frozen=True)
class SquaredHingeLoss(MeanLoss):
    """mean max(0, 1 − ζ h)², ζ = 2y − 1: the ℓ2 squared-hinge ("smoothed") SVM of paper 002's
    experiments (spec 002 §3; its code wraps LinearSVC's squared_hinge, §4). ℓ′ is Lipschitz
    but ℓ″ jumps at the margin ζh = 1: `second_derivative` gives the generalised Hessian,
    2·1[1 − ζh > 0]."""

    name: str = field(default="squared_hinge", init=False)
    task: ClassVar[Task] = Task.CLASSIFICATION
    words: ClassVar[str] = "squared hinge loss (ℓ2 SVM, paper 002)"

    def curvature(self, y: np.ndarray) -> float:
        """2/n: ℓ″ ≤ 2 for every sample of the mean."""
        return 2.0 / len(y)

    def per_sample(self, h: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        zeta = _signed(y)
        slack = np.maximum(1.0 - zeta * h, 0.0)
        return slack**2, -2.0 * zeta * slack

    def second_derivative(self, h: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 2.0 * (_signed(y) * h < 1.0)


@dataclass(frozen=True)
class SquaredLoss(MeanLoss):
    """mean ½(h − y)², y real: the loss of paper 002's ridge regressions (its Table 1's
    regression data sets; spec 002 §3), the l2 penalty being the solver's."""

    name: str = field(default="squared", init=False)
    task: ClassVar[Task] = Task.REGRESSION
    words: ClassVar[str] = "squared loss (ridge regression, paper 002)"

    def curvature(self, y: np.ndarray) -> float:
        """1/n: ℓ″ = 1 for every sample of the mean."""
        return 1.0 / len(y)

    def per_sample(self, h: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        residual = np.asarray(h, dtype=np.float64) - np.asarray(y, dtype=np.float64)
        return 0.5 * residual**2, residual

    def second_derivative(self, h: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.ones(len(h))


@dataclass(frozen=True)
class PairwiseAUCLoss:
    """E[c1 (h(ξ) − h(ξ′) − c2)² | ζ = 1, ζ′ = −1] (paper 004, eq. 3): the square surrogate of
    1 − AUC, the mean over every (positive, negative) pair of the rows given, evaluated in O(n)
    by its moment form (`engine.pairwise`). It is not a mean over samples: its plug-in value on
    a minibatch is a biased estimate (spec 004 §5). Paper 004 uses c1 ∈ {0.5, 1} and c2 = 1."""

    c1: float = 0.5  # as the auc_gap family's (one loss for objective and constraint)
    c2: float = 1.0
    name: str = field(default="pairwise_auc", init=False)
    task: ClassVar[Task] = Task.CLASSIFICATION
    words: ClassVar[str] = "pairwise AUC square loss (paper 004, eq. 3)"

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
    SquaredHingeLoss.name: SquaredHingeLoss,
    SquaredLoss.name: SquaredLoss,
}
# the objective of a run that names none, by the task of its label (a solver may ask for another
# classification objective: `engine.solvers.card.SolverCard.default_objective`)
DEFAULT_OBJECTIVE = {Task.CLASSIFICATION: LogisticLoss.name, Task.REGRESSION: SquaredLoss.name}


def objective_type(name: str) -> type[Objective]:
    """The objective class named `name` (`Objective.name`)."""
    try:
        return OBJECTIVE_TYPES[name]
    except KeyError:
        raise UserError(
            f"unknown objective {name!r}; the objectives are: {', '.join(OBJECTIVE_TYPES)}"
        ) from None


def objectives_for(task: Task) -> list[str]:
    """The names of the objectives defined for labels of `task`."""
    return [name for name, kind in OBJECTIVE_TYPES.items() if kind.task is task]


def check_objective_task(objective: str, task: Task, label: str) -> None:
    """Refuse the objective named `objective` for a label of `task`, described by `label`
    ("data set Law school's label 'passed the bar exam'"), unless it is defined for it."""
    kind = objective_type(objective)
    if kind.task is not task:
        *others, last = objectives_for(task)
        choice = f"{', '.join(others)} or {last}" if others else last
        raise UserError(
            f"the {objective} objective, the {kind.words}, is for a {kind.task.label_words} "
            f"label; {label} is {task.label_words}: choose the objective {choice}"
        )


def objective_to_dict(objective: Objective) -> dict[str, Any]:
    """The objective's name and parameters (JSON-able)."""
    return dataclasses.asdict(objective)


def objective_from_dict(fields: dict[str, Any]) -> Objective:
    """The objective `objective_to_dict` wrote."""
    parameters = dict(fields)
    return objective_type(parameters.pop("name"))(**parameters)


def _signed(y: np.ndarray) -> np.ndarray:
    """ζ = 2y − 1 for labels y ∈ {0, 1}."""
    return 2.0 * np.asarray(y, dtype=np.float64) - 1.0
