"""Intersectional hinge-loss constraint of paper 001, eq. (18).

For every (intersectional) group G, with y ∈ {−1, +1}:
    mean_G [1 − y h]_+ − mean_all [1 − y h]_+ − ε ≤ 0
one row per group, one-sided (a group's hinge loss may not exceed the overall one by more than ε).
Groups may be given as one row of attributes per sample; each distinct row is a group.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .base import Aux, BoundConstraint, DCParts


class IntersectionalHinge(BoundConstraint):
    """Per-group hinge loss against the overall hinge loss (paper 001, eq. 18); ε = spec.kappa."""

    family = "intersectional_hinge"
    needs_labels = True

    def _setup(self) -> None:
        self._set("_ypm", torch.as_tensor(np.where(self.data.positive, 1.0, -1.0)))

    def _row_names(self) -> list[str]:
        return [f"hinge[{g}-all]" for g in self.data.names]

    def _hinge(self, scores: Tensor) -> Tensor:
        h = self._scores(scores)
        return torch.relu(1.0 - self._ypm.to(h.dtype) * h)

    def _parts(self, scores: Tensor) -> tuple[Tensor, Tensor]:
        loss = self._hinge(scores)
        per_group = torch.stack([loss[idx].mean() for idx in self.data.index])
        return per_group, loss.mean()

    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        per_group, overall = self._parts(scores)
        return per_group - overall - self.spec.kappa  # paper 001, eq. 18

    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """The hinge gap is itself the quantity constrained, so the rows are the surrogate's."""
        with torch.no_grad():
            return self.surrogate(self._scores(scores).detach().to(torch.float64)).numpy()

    def exact(self, scores: np.ndarray | Tensor) -> float:
        """max over groups of (group hinge loss − overall hinge loss)."""
        return float(np.max(self.exact_rows(scores) + self.spec.kappa))

    @property
    def dc(self) -> DCParts:
        return DCParts(plus_fn=self._dc_plus, minus_fn=self._dc_minus)

    def _dc_plus(self, scores: Tensor, aux: Aux) -> Tensor:
        return self._parts(scores)[0]

    def _dc_minus(self, scores: Tensor, aux: Aux) -> Tensor:
        per_group, overall = self._parts(scores)
        return overall.expand_as(per_group) + self.spec.kappa
