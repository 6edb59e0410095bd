"""The quadratic-surrogate AUC constraints of paper 003's baselines (App. G.3.1, eqs. 102–107).

With σ(x) = ½(1 + x)² (eq. 103) and M(A, B) := mean over all pairs (a, b) ∈ A × B of
σ(h_a − h_b), every ordered pair of groups (k, k'), k ≠ k', gives one row
    group (102):  M(k, k') − ½ − κ ≤ 0
    inter (105):  M(k⁺, k'⁻) + M(k⁻, k'⁺) − 1 − κ ≤ 0
    intra (107):  M(k⁺, k⁻) + M(k'⁻, k'⁺) − 1 − κ ≤ 0
(k⁺ / k⁻: the positives / negatives of group k). With the indicator 1[h_a ≥ h_b] in place of σ
the rows are AUC(k, k') − ½, xAUC(k, k') − xAUC(k', k) and AUC_k − AUC_k' (minus κ), so the
largest row plus κ is the exact AUC gap of engine.fairness.

M(A, B) = ½[(1 + m_A − m_B)² + v_A + v_B] with the means m and population variances v of the
scores in each set: exactly the pairwise mean, in O(|A| + |B|). At h ≡ 0 every row is −κ, so the
start w = 0 of the baselines (G.3.2) is strictly feasible for κ > 0. The surrogate is unbounded,
so κ may exceed 1 (paper 003's κ grids for these models reach 15).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

import numpy as np
import torch
from torch import Tensor

from engine.errors import UserError

from .auc_gap import empirical_auc
from .base import Aux, BoundConstraint, GroupData
from .exact import exact_metric

# One row's pair terms: each (A, B) contributes the mean over A × B of σ(h_a − h_b).
Terms = tuple[tuple[Tensor, Tensor], ...]


def ordered_pairs(count: int) -> list[tuple[int, int]]:
    return [(k, j) for k in range(count) for j in range(count) if k != j]


def quadratic_pair_mean(h_a: Tensor, h_b: Tensor) -> Tensor:
    """mean over all pairs (a, b) of ½(1 + h_a − h_b)² (paper 003, eq. 103), in O(|A| + |B|)."""
    m_a, m_b = h_a.mean(), h_b.mean()
    v_a = (h_a - m_a).square().mean()
    v_b = (h_b - m_b).square().mean()
    return 0.5 * ((1.0 + m_a - m_b).square() + v_a + v_b)


class QuadraticAUC(BoundConstraint):
    """Base of the three quadratic-surrogate families: rows = Σ M(A, B) − offset − κ ≤ 0."""

    variant: ClassVar[str]
    # ½ for (102), where AUC(k, k') = ½ is fair; 1 for (105) and (107), sums of two AUCs
    offset: ClassVar[float]

    def _setup(self) -> None:
        self._set("pairs", ordered_pairs(len(self.data.keys)))
        self._set("terms", tuple(self._terms(self.data, k, j) for k, j in self.pairs))

    @abstractmethod
    def _terms(self, data: GroupData, k: int, j: int) -> Terms:
        """The (A, B) sets of row (k, j), on `data`."""

    def _check_batch(self, data: GroupData) -> None:
        super()._check_batch(data)
        for k, j in ordered_pairs(len(data.keys)):
            if any(a.numel() == 0 or b.numel() == 0 for a, b in self._terms(data, k, j)):
                raise UserError(
                    f"{self.family}: groups {data.names[k]!r} and {data.names[j]!r} need "
                    "both positive and negative samples."
                )

    def _row_names(self) -> list[str]:
        names = self.data.names
        return [f"{self.family}[{names[k]},{names[j]}]" for k, j in self.pairs]

    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        h = self._scores(scores)
        rows = [
            sum(quadratic_pair_mean(h[a], h[b]) for a, b in terms) for terms in self.terms
        ]  # paper 003, eqs. 102, 105, 107
        return torch.stack(rows) - self.offset - self.spec.kappa

    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """The rows with σ replaced by the indicator (ties count ½)."""
        h = self._numpy(scores)
        rows = [
            sum(empirical_auc(h[a.numpy()], h[b.numpy()]) for a, b in terms) for terms in self.terms
        ]
        return np.asarray(rows, dtype=np.float64) - self.offset - self.spec.kappa

    def exact(self, scores: np.ndarray | Tensor) -> float:
        fn = exact_metric(f"auc_gap:{self.variant}")
        if self.variant == "group":
            return float(fn(self._numpy(scores), self.data.codes))
        return float(fn(self._numpy(scores), self.data.codes, self.data.positive.astype(np.int64)))


def _cell(data: GroupData, group: int, positive: bool) -> Tensor:
    idx = data.index[group]
    return idx[torch.as_tensor(data.positive)[idx] == positive]


class QuadraticGroupAUC(QuadraticAUC):
    """Group-AUC fairness with the quadratic surrogate (paper 003, Baseline G.1, eq. 102)."""

    family = "quad_group_auc"
    variant = "group"
    offset = 0.5

    def _terms(self, data: GroupData, k: int, j: int) -> Terms:
        return ((data.index[k], data.index[j]),)


class QuadraticInterAUC(QuadraticAUC):
    """Inter-group pairwise fairness with the quadratic surrogate (Baseline G.2, eq. 105)."""

    family = "quad_inter"
    variant = "inter"
    offset = 1.0
    needs_labels = True
    label_cells = True

    def _terms(self, data: GroupData, k: int, j: int) -> Terms:
        return (
            (_cell(data, k, True), _cell(data, j, False)),
            (_cell(data, k, False), _cell(data, j, True)),
        )


class QuadraticIntraAUC(QuadraticAUC):
    """Intra-group pairwise fairness with the quadratic surrogate (Baseline G.3, eq. 107)."""

    family = "quad_intra"
    variant = "intra"
    offset = 1.0
    needs_labels = True
    label_cells = True

    def _terms(self, data: GroupData, k: int, j: int) -> Terms:
        return (
            (_cell(data, k, True), _cell(data, k, False)),
            (_cell(data, j, False), _cell(data, j, True)),
        )
