"""Group-loss gaps of paper 000: each group's mean loss held near the others'.

ℓ_c = the mean BCE-with-logits loss (paper 000, eq. 12) over a cell c of the samples, where the
cells follow Table 1's conditioning (option "condition"):
- "none", accuracy equality: the groups, ℓ_k over D[k];
- "positive", equal opportunity: the positives of each group, ℓ_k over D[k, Y = +];
- "odds", equalised odds: each group's positives and negatives, Σ_v |ℓ_{k,v} − ℓ_{k',v}| ≤ δ.
Comparisons (pairs):
- "vs_mean" (paper 000, eq. 4): each group against the mean over groups, −δ ≤ ℓ_k − (1/m) Σ_j ℓ_j ≤ δ;
- "all": every pair, −δ ≤ ℓ_k − ℓ_k' ≤ δ (Exp. 1 with two groups).
Every row is affine in the cell losses, rows = A ℓ − δ. Two-sided gaps give a row per sign; the
equalised-odds sum of two absolute values gives a row per pair of signs, since
|a| + |b| ≤ δ ⇔ ±a ± b ≤ δ. The loss is convex in the scores, so A's positive and negative parts
split each row into convex parts (paper 003, eq. 27) without a surrogate.
"""

from __future__ import annotations

import itertools
from functools import cached_property

import numpy as np
import torch
from torch import Tensor

from engine.errors import UserError
from engine.fairness.families import options_of
from engine.objectives import LogisticLoss

from .base import Aux, BoundConstraint, DCParts, pairs_of
from .batch_rows import GroupLossRows

_LOSS = LogisticLoss()


class GroupLossGap(BoundConstraint):
    """Group-loss gaps ≤ δ = spec.kappa (paper 000, eq. 4 and Table 1)."""

    family = "group_loss_gap"
    needs_labels = True

    @property
    def condition(self) -> str:
        return options_of(self.spec).condition

    @property
    def label_cells(self) -> bool:  # type: ignore[override]
        """Equal opportunity and equalised odds are means within (group, label) cells."""
        return self.condition != "none"

    def _setup(self) -> None:
        cells, share, sizes = cell_shares(
            self.data.codes, self.data.positive, self.condition, len(self.data.keys)
        )
        names, weights = self._rows()
        self._set("_cells", cells)
        self._set("_share", share)
        self._set("_n_cells", len(sizes))
        self._set("_names", names)
        self._set("_weights", weights)

    def _check_batch(self, data) -> None:
        super()._check_batch(data)
        if self.condition != "none":
            cells = ("positives",) if self.condition == "positive" else ("positives", "negatives")
            for k, name in enumerate(data.names):
                mine = data.positive[data.codes == k]
                missing = [c for c in cells if not (mine if c == "positives" else ~mine).any()]
                if missing:
                    raise self._empty_cell(name, missing)

    def _empty_cell(self, group: str, missing: list[str]) -> UserError:
        return UserError(
            f"group {group!r} has no {' or '.join(missing)} here, so its "
            f"{self.condition} loss gap is undefined (paper 000, Table 1)"
        )

    def _rows(self) -> tuple[list[str], np.ndarray]:
        """Row names and A (rows × cells)."""
        names, count = self.data.names, len(self.data.keys)
        unit = np.eye(count)
        if self.spec.pairs == "vs_mean":  # paper 000, eq. 4
            sides = [(f"{names[k]}-mean", unit[k] - 1.0 / count) for k in range(count)]
        else:
            sides = [(f"{names[i]},{names[j]}", unit[i] - unit[j]) for i, j in pairs_of(count)]
        rows: list[tuple[str, np.ndarray]] = []
        for label, gap in sides:
            if self.condition == "odds":  # Σ_v |gap_v| ≤ δ as ±gap_+ ± gap_−
                for s_neg, s_pos in itertools.product((1.0, -1.0), repeat=2):
                    cell = np.empty(2 * count)
                    cell[0::2], cell[1::2] = s_neg * gap, s_pos * gap
                    rows.append((f"loss[{label}]:Y=1{_sign(s_pos)},Y=0{_sign(s_neg)}", cell))
            else:
                suffix = "|Y=1" if self.condition == "positive" else ""
                rows += [
                    (f"loss[{label}{suffix}]:upper", gap),
                    (f"loss[{label}{suffix}]:lower", -gap),
                ]
        return [n for n, _ in rows], np.array([a for _, a in rows])

    def _row_names(self) -> list[str]:
        return list(self._names)

    # ---- values -------------------------------------------------------------------------
    def cell_losses(self, scores: Tensor) -> Tensor:
        """The mean BCE-with-logits loss of each cell (paper 000, eq. 12), differentiable."""
        h = self._scores(scores)
        y = torch.from_numpy(self.data.positive.astype(np.float64)).to(h.dtype)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(h, y, reduction="none")
        total = torch.zeros(self._n_cells, dtype=h.dtype)
        share = torch.from_numpy(self._share).to(h.dtype)
        return total.index_add(0, torch.from_numpy(self._cells), loss * share)

    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        return self._a(scores) @ self.cell_losses(scores) - self.spec.kappa

    def _exact_losses(self, scores: Tensor | np.ndarray) -> np.ndarray:
        h = self._numpy(scores)
        per_sample, _ = _LOSS.per_sample(h, self.data.positive)
        return np.bincount(self._cells, per_sample * self._share, self._n_cells)

    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """The loss is its own exact quantity: the same rows in numpy."""
        return self._weights @ self._exact_losses(scores) - self.spec.kappa

    def exact(self, scores: np.ndarray | Tensor) -> float:
        """The largest gap: max_k |ℓ_k − mean_j ℓ_j| ("vs_mean") or max_{k,k'} |ℓ_k − ℓ_k'|
        ("all"), with Σ_v over the labels for equalised odds: the largest row plus δ."""
        return float(np.max(self._weights @ self._exact_losses(scores)))

    def batch_rows(
        self, ids: np.ndarray, y: np.ndarray | None = None, members: object = None
    ) -> GroupLossRows:
        """The rows in closed form on a batch (affine in the cell losses; subgroups unused)."""
        positive = None if y is None else np.asarray(y) == 1
        if positive is not None:
            cells, share, sizes = cell_shares(ids, positive, self.condition, len(self.data.keys))
            if sizes.min() > 0:
                return GroupLossRows(self._weights, float(self.spec.kappa), cells, positive, share)
        return super().batch_rows(ids, y)  # raises the family's message for an empty cell

    def _a(self, like: Tensor) -> Tensor:
        return torch.from_numpy(self._weights).to(like.dtype)

    # ---- convex parts -------------------------------------------------------------------
    @property
    def dc(self) -> DCParts:
        return DCParts(plus_fn=self._dc_plus, minus_fn=self._dc_minus)

    @cached_property
    def _parts(self) -> tuple[np.ndarray, np.ndarray]:
        """A = A⁺ − A⁻ with A⁺, A⁻ ≥ 0: A⁺ℓ and A⁻ℓ + δ are convex in the scores."""
        return np.maximum(self._weights, 0.0), np.maximum(-self._weights, 0.0)

    def _dc_plus(self, scores: Tensor, aux: Aux) -> Tensor:
        losses = self.cell_losses(scores)
        return torch.from_numpy(self._parts[0]).to(losses.dtype) @ losses

    def _dc_minus(self, scores: Tensor, aux: Aux) -> Tensor:
        losses = self.cell_losses(scores)
        return torch.from_numpy(self._parts[1]).to(losses.dtype) @ losses + self.spec.kappa


def cell_shares(
    groups: np.ndarray, positive: np.ndarray, condition: str, count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each sample's cell, its weight 1/|cell| in its cell's mean (0 for the negatives, which
    belong to no cell under "positive"), and the cell sizes."""
    if condition == "odds":  # cell 2k + y
        cells, n_cells = 2 * groups + positive, 2 * count
    else:
        cells, n_cells = np.asarray(groups, dtype=np.int64), count
    member = positive if condition == "positive" else np.ones(len(cells), dtype=bool)
    sizes = np.bincount(cells[member], minlength=n_cells)
    share = np.where(member, 1.0 / np.maximum(sizes[cells], 1), 0.0)
    return cells, share, sizes


def _sign(value: float) -> str:
    return "+" if value > 0 else "−"
