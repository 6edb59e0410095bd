"""Group-loss gaps of paper 000: each group's mean loss held near the others'.

ℓ_k = mean over group k of the BCE-with-logits loss (paper 000, eq. 12).
- pairs="vs_mean" (paper 000, eq. 4): −δ ≤ ℓ_k − (1/m) Σ_j ℓ_j ≤ δ, two rows per group.
- pairs="all": −δ ≤ ℓ_k − ℓ_k' ≤ δ, two rows per pair (Exp. 1 with two groups).
The loss is convex in the scores, so both forms split into convex parts without a surrogate.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from .base import Aux, BoundConstraint, DCParts, pair_rows, pairs_of
from .batch_rows import GroupLossRows
from .exact import exact_metric


class GroupLossGap(BoundConstraint):
    """|ℓ_k − mean_j ℓ_j| ≤ δ or |ℓ_k − ℓ_k'| ≤ δ with δ = spec.kappa (paper 000, Sec. 2)."""

    family = "group_loss_gap"
    needs_labels = True

    def _setup(self) -> None:
        self._set("pairs", pairs_of(len(self.data.keys)))
        self._set("_y", torch.as_tensor(self.data.positive, dtype=torch.float64))

    def _row_names(self) -> list[str]:
        names = self.data.names
        if self.spec.pairs == "vs_mean":
            return [f"loss[{g}-mean]:{side}" for g in names for side in ("upper", "lower")]
        return [
            f"loss[{names[i]},{names[j]}]:{side}"
            for i, j in self.pairs
            for side in ("upper", "lower")
        ]

    def group_losses(self, scores: Tensor) -> Tensor:
        """(G,) mean BCE-with-logits loss per group (paper 000, eq. 12)."""
        h = self._scores(scores)
        loss = F.binary_cross_entropy_with_logits(h, self._y.to(h.dtype), reduction="none")
        return torch.stack([loss[idx].mean() for idx in self.data.index])

    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        return self._from_losses(self.group_losses(scores))

    def batch_rows(self, ids: np.ndarray, y: np.ndarray | None = None) -> GroupLossRows:
        """The rows in closed form: affine in the group losses (`_loss_weights`)."""
        counts = np.bincount(ids, minlength=len(self.data.keys))
        if y is None or counts.min() == 0:
            return super().batch_rows(ids, y)  # raises the family's own message
        return GroupLossRows(self._loss_weights, float(self.spec.kappa), ids,
                             np.asarray(y) == 1, 1.0 / counts[ids])  # fmt: skip

    @cached_property
    def _loss_weights(self) -> np.ndarray:
        """A with rows = A ℓ − δ: the columns are the rows' responses to each unit ℓ_k."""
        count = len(self.data.keys)
        base = self._from_losses(torch.zeros(count, dtype=torch.float64))
        unit = torch.eye(count, dtype=torch.float64)
        return torch.stack([self._from_losses(e) - base for e in unit], dim=1).numpy()

    def _from_losses(self, losses: Tensor) -> Tensor:
        delta = self.spec.kappa
        if self.spec.pairs == "vs_mean":
            d = losses - losses.mean()  # paper 000, eq. 4
            return torch.stack([d - delta, -d - delta], dim=1).reshape(-1)
        return pair_rows(losses[:, None] - losses[None, :] - delta, self.pairs)

    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """The loss is its own exact quantity: the same rows, from engine.fairness's group losses."""
        return self._from_losses(torch.as_tensor(self._exact_losses(scores))).numpy()

    def _exact_losses(self, scores: Tensor | np.ndarray) -> np.ndarray:
        h = self._scores(scores).detach().to(torch.float64).numpy()
        fn = exact_metric("group_losses")
        return np.asarray(
            fn(h, self.data.codes, self.data.positive.astype(np.int64)), dtype=np.float64
        )

    def exact(self, scores: np.ndarray | Tensor) -> float:
        """max_k |ℓ_k − mean_j ℓ_j| ("vs_mean") or max_{k,k'} |ℓ_k − ℓ_k'| ("all")."""
        losses = self._exact_losses(scores)
        if self.spec.pairs == "vs_mean":
            return float(np.max(np.abs(losses - losses.mean())))
        return float(np.max(np.abs(losses[:, None] - losses[None, :])))

    @property
    def dc(self) -> DCParts:
        return DCParts(plus_fn=self._dc_plus, minus_fn=self._dc_minus)

    def _dc_plus(self, scores: Tensor, aux: Aux) -> Tensor:
        losses = self.group_losses(scores)
        m = losses.shape[0]
        if self.spec.pairs == "vs_mean":
            # upper: (1 − 1/m) ℓ_k ;  lower: (1/m) Σ_{j≠k} ℓ_j
            own = (1.0 - 1.0 / m) * losses
            rest = (losses.sum() - losses) / m
            return torch.stack([own, rest], dim=1).reshape(-1)
        return pair_rows(losses[:, None].expand(m, m), self.pairs)

    def _dc_minus(self, scores: Tensor, aux: Aux) -> Tensor:
        losses = self.group_losses(scores)
        m = losses.shape[0]
        delta = self.spec.kappa
        if self.spec.pairs == "vs_mean":
            # upper: (1/m) Σ_{j≠k} ℓ_j + δ ;  lower: (1 − 1/m) ℓ_k + δ
            own = (1.0 - 1.0 / m) * losses
            rest = (losses.sum() - losses) / m
            return torch.stack([rest + delta, own + delta], dim=1).reshape(-1)
        return pair_rows(losses[None, :].expand(m, m) + delta, self.pairs)
