"""Positive-rate gaps with a smooth step, as in paper 001: DP (eq. 15) and equalized odds (eq. 17).

s_c = mean over cell c of σ((h − θ̂)/τ); paper 001 uses the sigmoid with τ = 1 and θ̂ = 0.
A cell is a group (DP), a group among the positives (equal opportunity, "EOpp"), or a group
within each label (equalized odds: the TPR and the FPR gap, eq. 17). For every pair of groups
(k, k') and every label the two rows are
    upper:  s_k − s_k' − ε ≤ 0        lower:  s_k' − s_k − ε ≤ 0
which together say |s_k − s_k'| ≤ ε; paper 001's max over the two gaps of eq. 17 is the same set.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import torch
from torch import Tensor

from engine.errors import UserError

from .base import Aux, BoundConstraint, DCParts, GroupData, pair_rows, pairs_of
from .exact import exact_metric
from .surrogates import Surrogate


class RateGap(BoundConstraint):
    """Shared machinery; subclasses fix which labels define the cells."""

    labels: ClassVar[tuple[int, ...] | None] = None  # None: every sample of the group

    def _setup(self) -> None:
        self._set("sigma", Surrogate(self.spec.surrogate, self.spec.temperature))
        self._set("pairs", pairs_of(len(self.data.keys)))
        self._set("cells", _cells(self.data, self.labels))

    def _check_batch(self, data: GroupData) -> None:
        super()._check_batch(data)
        for label, per_group in zip(self.labels or (None,), _cells(data, self.labels), strict=True):
            empty = [data.names[k] for k, idx in enumerate(per_group) if idx.numel() == 0]
            if empty:
                what = "samples" if label is None else f"samples with y = {label}"
                raise UserError(f"{self.family}: no {what} in group(s) {empty}.")

    def _row_names(self) -> list[str]:
        names = self.data.names
        out = []
        for label in self.labels or (None,):
            tag = "" if label is None else f";y={label}"
            for i, j in self.pairs:
                out += [
                    f"{self.family}[{names[i]},{names[j]}{tag}]:{s}" for s in ("upper", "lower")
                ]
        return out

    def _t(self, like: Tensor) -> Tensor:
        return torch.full((1,), float(self.spec.threshold), dtype=like.dtype)

    def rates(self, scores: Tensor) -> Tensor:
        """(labels, G) surrogate positive rates per cell."""
        h = self._scores(scores)
        t = self._t(h)
        return torch.stack(
            [torch.cat([self.sigma.mean(h[idx], t) for idx in cells]) for cells in self.cells]
        )

    def _rows(self, table_per_label: list[Tensor]) -> Tensor:
        return torch.cat([pair_rows(t, self.pairs) for t in table_per_label])

    def _from_rates(self, s: Tensor) -> Tensor:
        eps = self.spec.kappa
        return self._rows([r[:, None] - r[None, :] - eps for r in s])

    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        return self._from_rates(self.rates(scores))

    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """Rows with σ replaced by 1[h > θ̂] (Def. 1 of paper 001)."""
        h = self._scores(scores).detach().to(torch.float64)
        s = torch.stack(
            [
                torch.stack([(h[idx] > self.spec.threshold).to(h.dtype).mean() for idx in cells])
                for cells in self.cells
            ]
        )
        return self._from_rates(s).numpy()

    @property
    def dc(self) -> DCParts:
        return DCParts(plus_fn=self._dc_plus, minus_fn=self._dc_minus)

    def _parts(self, scores: Tensor) -> tuple[Tensor, Tensor]:
        h = self._scores(scores)
        t = self._t(h)
        plus, minus = [], []
        for cells in self.cells:
            pieces = [self.sigma.mean_parts(h[idx], t) for idx in cells]
            plus.append(torch.cat([a for a, _ in pieces]))
            minus.append(torch.cat([b for _, b in pieces]))
        return torch.stack(plus), torch.stack(minus)

    def _dc_plus(self, scores: Tensor, aux: Aux) -> Tensor:
        # s_k − s_k' = (A⁺_k + A⁻_k') − (A⁻_k + A⁺_k')
        a_plus, a_minus = self._parts(scores)
        return self._rows([p[:, None] + m[None, :] for p, m in zip(a_plus, a_minus, strict=True)])

    def _dc_minus(self, scores: Tensor, aux: Aux) -> Tensor:
        a_plus, a_minus = self._parts(scores)
        eps = self.spec.kappa
        return self._rows(
            [m[:, None] + p[None, :] + eps for p, m in zip(a_plus, a_minus, strict=True)]
        )

    def _exact_args(self, scores: np.ndarray | Tensor) -> tuple:
        return (self._numpy(scores), self.data.codes)


def _cells(data: GroupData, labels: tuple[int, ...] | None) -> list[list[Tensor]]:
    if labels is None:
        return [list(data.index)]
    pos = torch.as_tensor(data.positive)
    return [[idx[pos[idx] == bool(label)] for idx in data.index] for label in labels]


class DemographicParityGap(RateGap):
    """|s_k − s_k'| ≤ ε over groups (paper 001, eq. 15)."""

    family = "DP"

    def exact(self, scores: np.ndarray | Tensor) -> float:
        return float(
            exact_metric("DP")(*self._exact_args(scores), threshold=float(self.spec.threshold))
        )


class EqualizedOddsGap(RateGap):
    """TPR and FPR gaps ≤ ε (paper 001, eq. 17), two rows per pair and label."""

    family = "EO"
    needs_labels = True
    label_cells = True
    labels = (1, 0)

    def exact(self, scores: np.ndarray | Tensor) -> float:
        s, g = self._exact_args(scores)
        y = self.data.positive.astype(np.int64)
        return float(exact_metric("EO")(s, g, y, threshold=float(self.spec.threshold)))


class EqualOpportunityGap(RateGap):
    """TPR gap ≤ ε (equal opportunity, paper 001, Sec. 2.1)."""

    family = "EOpp"
    needs_labels = True
    label_cells = True
    labels = (1,)

    def exact(self, scores: np.ndarray | Tensor) -> float:
        s, g = self._exact_args(scores)
        y = self.data.positive.astype(np.int64)
        return float(exact_metric("EOpp")(s, g, y, threshold=float(self.spec.threshold)))
