"""`GroupTable`: the one sorted summary of (scores, groups[, y]) that every exact metric reads.

The pooled scores are sorted once, and the samples are counted per distinct score value and per
cell (group, or group x label) with one `bincount`. The sorted metrics read these counts:
per-group CDFs and CCDFs at every pooled score (KS, pSP, W1) and rank statistics between any two
cells (AUCs). Rates at one threshold (DP, EO, pDP, Table 2 of paper 000) need no sort: they are
one `bincount` of the cells of the samples above the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError
from engine.fairness._inputs import as_groups, as_labels, as_scores, as_threshold


@dataclass(frozen=True, eq=False)
class GroupTable:
    """Validated samples and, built on first use, their counts per distinct score and cell.

    A cell is a group (no labels) or a (group, label) pair. Threshold queries (`above`) only need
    one `bincount` and never sort; the sorted summary (`values`, `counts`) is built once, on the
    first metric that needs it, and shared by the others.
    """

    scores: np.ndarray
    groups: np.ndarray
    labels: np.ndarray | None
    n_groups: int

    @classmethod
    def build(
        cls,
        scores: ArrayLike,
        groups: ArrayLike | None = None,
        y: ArrayLike | None = None,
        *,
        min_groups: int = 2,
    ) -> GroupTable:
        """Validate the inputs. `groups=None` means one group holding every sample."""
        s = as_scores(scores)
        if groups is None:
            g, n_groups = np.zeros(s.size, dtype=np.int64), 1
        else:
            g, n_groups = as_groups(groups, s.size, min_groups=min_groups)
        labels = None if y is None else as_labels(y, s.size)
        return cls(scores=s, groups=g, labels=labels, n_groups=n_groups)

    @property
    def n_labels(self) -> int:
        return 1 if self.labels is None else 2

    @cached_property
    def cells(self) -> np.ndarray:
        """(n,) cell id of every sample: group * L + label."""
        return self.groups if self.labels is None else 2 * self.groups + self.labels

    def _per_cell(self, cells: np.ndarray) -> np.ndarray:
        shape = (self.n_groups, self.n_labels)
        return np.bincount(cells, minlength=shape[0] * shape[1]).reshape(shape)

    @cached_property
    def _sorted(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.scores)
        ordered = self.scores[order]
        starts = np.empty(ordered.size, dtype=bool)
        starts[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
        rank = np.cumsum(starts) - 1  # index of each sorted sample's distinct value
        n_values, n_cells = int(rank[-1]) + 1, self.n_groups * self.n_labels
        flat = np.bincount(self.cells[order] * n_values + rank, minlength=n_cells * n_values)
        return ordered[starts], flat.reshape(self.n_groups, self.n_labels, n_values)

    @property
    def values(self) -> np.ndarray:
        """(U,) the distinct pooled scores, ascending."""
        return self._sorted[0]

    @property
    def counts(self) -> np.ndarray:
        """(G, L, U) number of samples of group k, label l with score `values[j]`."""
        return self._sorted[1]

    @cached_property
    def by_group(self) -> np.ndarray:
        """(G, U) counts per group and distinct score, labels pooled."""
        counts = self.counts
        return counts[:, 0] if self.labels is None else counts[:, 0] + counts[:, 1]

    @cached_property
    def group_sizes(self) -> np.ndarray:
        """(G,) number of samples in each group."""
        return np.bincount(self.groups, minlength=self.n_groups)

    @cached_property
    def group_cdf(self) -> np.ndarray:
        """(G, U) F_k(values[j]) = Pr(score <= values[j] | group k)."""
        return np.cumsum(self.by_group, axis=1) / self.group_sizes[:, None]

    def label_counts(self, label: int) -> np.ndarray:
        """(G, U) counts of the samples with label `label` (0 or 1), per group and distinct score."""
        if self.labels is None:
            raise UserError("this metric needs the labels y; pass y=... .")
        return self.counts[:, label]

    def cell_sizes(self) -> np.ndarray:
        """(G, L) number of samples in each (group, label) cell."""
        return self._per_cell(self.cells)

    def above(self, threshold: float) -> np.ndarray:
        """(G, L) number of samples with score strictly greater than `threshold`, per cell."""
        return self._per_cell(self.cells[self.scores > as_threshold(threshold)])


def pairwise_abs_diff(per_group: np.ndarray) -> np.ndarray:
    """(G, G) matrix |v_k - v_k'| of a per-group vector: the usual "gap between two groups"."""
    return np.abs(per_group[:, None] - per_group[None, :])


def require_nonempty(sizes: np.ndarray, what: str) -> None:
    """Refuse a conditional rate whose conditioning cell, given by the data, is empty.

    `sizes` is (G,) or (G, L) with groups on the first axis. An empty cell (e.g. a group with no
    positive labels, for a true-positive rate) is a property of the data split, not of the model,
    so it is reported as a `UserError` rather than returned as NaN.
    """
    sizes = np.asarray(sizes)
    empty = np.unique(np.nonzero(sizes == 0)[0])
    if empty.size:
        raise UserError(
            f"{what} is undefined for group(s) {empty.tolist()}: they have no samples in the "
            "required cell (e.g. no positive or no negative labels). Merge or drop those groups, "
            "or use a metric that does not need that cell."
        )


def rate(numerator: np.ndarray, denominator: np.ndarray, what: str) -> np.ndarray:
    """numerator / denominator after `require_nonempty(denominator, what)`."""
    require_nonempty(denominator, what)
    return numerator / denominator


def cell_sums(
    values: np.ndarray, groups: np.ndarray, labels: np.ndarray, n_groups: int
) -> np.ndarray:
    """(G, 2) sum of `values` over each (group, label) cell; `values=1` gives the cell sizes."""
    weights = np.broadcast_to(np.asarray(values, dtype=np.float64), groups.shape)
    flat = np.bincount(2 * groups + labels, weights=weights, minlength=2 * n_groups)
    return flat.reshape(n_groups, 2)
