"""Intersectional hinge-loss constraint of paper 001, eq. (18).

For every group G, with y ∈ {−1, +1}:
    mean_G [1 − y h]_+ − mean_all [1 − y h]_+ − ε ≤ 0
one row per group, one-sided (a group's hinge loss may not exceed the overall one by more than ε).
The groups are the overlapping subgroups the constraint was bound with (`Members`, paper 001
§5.3: hundreds of groups cut by thresholds on three attributes), else the run's groups (each
distinct row of attributes, when several are given, is a group).

All group means are one sparse product Mᵀ ℓ with the membership matrix M (samples × groups).
On a sample (a batch, a split) without members of a subgroup, that subgroup's mean is taken to
be the overall mean: its row is −ε, with no gradient (nothing is known of it there).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch
from scipy import sparse
from torch import Tensor

from .base import Aux, BoundConstraint, DCParts
from .batch_rows import Pullback


def _hinge(signed: np.ndarray, h: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - signed * h, 0.0)


@dataclass(frozen=True)
class HingeRows:
    """The rows in closed form on one batch: ∂row_j/∂ℓ_i = M_ij/n_j − 1/n for a subgroup with
    n_j > 0 members, 0 for an empty one, and ∂ℓ_i/∂h_i = −y_i [1 − y_i h_i > 0]."""

    members: sparse.csr_matrix  # samples × groups
    signed: np.ndarray  # y ∈ {−1, +1}
    epsilon: float

    @property
    def m(self) -> int:
        return self.members.shape[1]

    @cached_property
    def counts(self) -> np.ndarray:
        """Members of each group among the batch's samples (fixed for the batch)."""
        return np.asarray(self.members.sum(axis=0)).ravel()

    def values(self, h: np.ndarray, aux: object = None) -> np.ndarray:
        loss = _hinge(self.signed, h)
        return self._rows(loss, self.counts)

    def _rows(self, loss: np.ndarray, counts: np.ndarray) -> np.ndarray:
        overall = loss.mean()
        sums = self.members.T @ loss
        means = np.divide(sums, counts, out=np.full(len(counts), overall), where=counts > 0)
        return means - overall - self.epsilon  # paper 001, eq. 18

    def linearise(self, h: np.ndarray, aux: object = None) -> tuple[np.ndarray, Pullback]:
        loss = _hinge(self.signed, h)
        counts = self.counts
        slope = -self.signed * (loss > 0)  # ∂ℓ_i/∂h_i
        scale = np.divide(1.0, counts, out=np.zeros(len(counts)), where=counts > 0)

        def pullback(v: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
            seen = v * scale
            d_loss = self.members @ seen - np.sum(v[counts > 0]) / len(h)
            return d_loss * slope, {}

        return self._rows(loss, counts), pullback


class IntersectionalHinge(BoundConstraint):
    """Per-group hinge loss against the overall hinge loss (paper 001, eq. 18); ε = spec.kappa."""

    family = "intersectional_hinge"
    needs_labels = True

    def _setup(self) -> None:
        signed = np.where(self.data.positive, 1.0, -1.0)
        members = self.data.members
        if members is None:  # the groups themselves, one-hot
            n, g = self.data.n, len(self.data.keys)
            matrix = sparse.csr_matrix((np.ones(n), (np.arange(n), self.data.codes)), shape=(n, g))
            names, features = self.data.names, np.eye(g)
        else:
            matrix, names, features = members.matrix, members.names, members.features
        rows = HingeRows(sparse.csr_matrix(matrix), signed, float(self.spec.kappa))
        self._set("_batch", rows)
        self._set("_group_names", names)
        self._set("_features", features)
        self._set("_signed", torch.from_numpy(signed))
        self._set("_group_counts", torch.from_numpy(rows.counts))
        pairs = matrix.tocoo()  # (sample, group) of every membership
        self._set("_member_sample", torch.from_numpy(pairs.row.astype(np.int64)))
        self._set("_member_group", torch.from_numpy(pairs.col.astype(np.int64)))

    def _check_batch(self, data) -> None:
        """An empty subgroup has a row of its own convention (see the module); groups without
        members are refused as for every family only when they are the constrained groups."""
        if data.members is None:
            super()._check_batch(data)

    def _row_names(self) -> list[str]:
        return [f"hinge[{g}-all]" for g in self._group_names]

    def row_features(self) -> np.ndarray:
        """A subgroup's thresholds' quantile levels; a one-hot code of a plain group."""
        return np.asarray(self._features, dtype=np.float64)

    def batch_rows(self, ids: np.ndarray, y: np.ndarray | None = None, members=None) -> HingeRows:
        """The rows in closed form on a batch (group ids, labels and subgroup membership)."""
        return self.with_ids(ids, y, members)._batch

    def _parts(self, scores: Tensor) -> tuple[Tensor, Tensor]:
        h = self._scores(scores)
        loss = torch.relu(1.0 - self._signed.to(h.dtype) * h)
        overall = loss.mean()
        # Mᵀ ℓ as a sum over the memberships (differentiable, also under vmap)
        sums = torch.zeros(len(self._group_counts), dtype=h.dtype).index_add(
            0, self._member_group, loss[self._member_sample]
        )
        counts = self._group_counts.to(h.dtype)
        means = torch.where(counts > 0, sums / counts.clamp(min=1.0), overall)
        return means, overall

    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        per_group, overall = self._parts(scores)
        return per_group - overall - self.spec.kappa  # paper 001, eq. 18

    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """The hinge gap is itself the quantity constrained, so the rows are the surrogate's."""
        h = self._scores(scores).detach().numpy().astype(np.float64)
        return self._batch.values(h)

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
