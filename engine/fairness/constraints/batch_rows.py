"""A constraint's rows on one minibatch as numpy functions of the scores h and the auxiliary
variables, with their vector–Jacobian products: what a minibatch solver asks every step.

`AutogradRows` serves every family through its torch surrogate and autograd. A family may offer a
closed form instead (`GroupLossRows` for paper 000's group-loss gaps), which skips building a
bound copy and a graph per batch; tests hold the two equal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch
from scipy import sparse

from engine.objectives import LogisticLoss

if TYPE_CHECKING:
    from engine.fairness.constraints.base import BoundConstraint

NumpyAux = Mapping[str, np.ndarray]


Pullback = Callable[[np.ndarray], tuple[np.ndarray, dict[str, np.ndarray]]]


class BatchRows(Protocol):
    """The m rows c(h, aux) ≤ 0 on one batch of samples."""

    m: int

    def values(self, h: np.ndarray, aux: NumpyAux) -> np.ndarray: ...

    def linearise(self, h: np.ndarray, aux: NumpyAux) -> tuple[np.ndarray, Pullback]:
        """c and its pullback v ↦ (Σ_r v_r ∂c_r/∂h, Σ_r v_r ∂c_r/∂aux per variable), which may
        be called several times (once per row for a Jacobian)."""
        ...


@dataclass(frozen=True)
class RowsJacobian:
    """Rows c at a point and their Jacobian: in the scores (m, n), dense or sparse, and in each
    auxiliary variable (m, its size)."""

    values: np.ndarray
    scores: np.ndarray | sparse.csr_matrix
    aux: dict[str, np.ndarray]


def rows_jacobian(rows: BatchRows, h: np.ndarray, aux: NumpyAux) -> RowsJacobian:
    """The Jacobian of `rows` at (h, aux): their own `jacobian` where they have a closed form
    (`psp_rows.RampPSPRows`), one pullback per row otherwise."""
    closed_form = getattr(rows, "jacobian", None)
    if closed_form is not None:
        return closed_form(h, aux)
    values, pullback = rows.linearise(h, aux)
    pulled = [pullback(e) for e in np.eye(len(values))]
    if not pulled:
        return RowsJacobian(values, np.zeros((0, h.shape[0])), {})
    scores = np.stack([np.broadcast_to(d_h, h.shape) for d_h, _ in pulled])
    names = pulled[0][1].keys()
    return RowsJacobian(
        values, scores, {name: np.stack([np.ravel(d[name]) for _, d in pulled]) for name in names}
    )


class AutogradRows:
    """Any bound family's surrogate rows, differentiated by autograd."""

    def __init__(self, bound: BoundConstraint) -> None:
        self.bound = bound
        self.m = bound.m

    def values(self, h: np.ndarray, aux: NumpyAux) -> np.ndarray:
        with torch.no_grad():
            rows = self.bound.surrogate(torch.from_numpy(h), _tensors(aux, grad=False))
        return rows.numpy()

    def linearise(self, h: np.ndarray, aux: NumpyAux) -> tuple[np.ndarray, Pullback]:
        scores = torch.from_numpy(h).requires_grad_()
        leaves = _tensors(aux, grad=True)
        rows = self.bound.surrogate(scores, leaves)
        inputs = [scores, *leaves.values()]

        def pullback(v: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
            grads = torch.autograd.grad(
                rows @ torch.from_numpy(v),
                inputs,
                retain_graph=True,
                allow_unused=True,
                materialize_grads=True,
            )
            return grads[0].numpy(), {k: g.numpy() for k, g in zip(leaves, grads[1:], strict=True)}

        return rows.detach().numpy(), pullback


def _tensors(aux: NumpyAux, grad: bool) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(np.asarray(v)).requires_grad_(grad) for k, v in aux.items()}


_LOSS = LogisticLoss()  # BCE-with-logits: paper 000, eq. 12


@dataclass(frozen=True)
class GroupLossRows:
    """c = A ℓ − δ with ℓ_c the mean BCE-with-logits loss of cell c on the batch (paper 000,
    eq. 4, Exp. 1 and Table 1): the rows are affine in the cell losses, so
    ∂c/∂h_i = A[:, c_i] ℓ′(h_i)/n_{c_i} for sample i of cell c_i."""

    weights: np.ndarray  # A, shape (m, cells)
    delta: float
    cells: np.ndarray  # each sample's cell (its group, or its (group, label) cell)
    y: np.ndarray
    share: np.ndarray  # 1/n_c of each sample's cell c (0: in no cell)

    @property
    def m(self) -> int:
        return self.weights.shape[0]

    def _rows(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        per_sample, slopes = _LOSS.per_sample(h, self.y)
        means = np.bincount(self.cells, per_sample * self.share, self.weights.shape[1])
        return self.weights @ means - self.delta, slopes * self.share

    def values(self, h: np.ndarray, aux: NumpyAux) -> np.ndarray:
        return self._rows(h)[0]

    def linearise(self, h: np.ndarray, aux: NumpyAux) -> tuple[np.ndarray, Pullback]:
        rows, slopes = self._rows(h)
        return rows, lambda v: ((v @ self.weights)[self.cells] * slopes, {})
