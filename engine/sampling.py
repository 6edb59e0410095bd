"""Minibatches for stochastic solvers, all drawn from the run's one seeded Generator.

Two kinds of batch (paper 000, Sec. 1 and §1 of its spec):
- objective batches: `size` rows from a shuffled pass over the split, the next pass reshuffled
  when one ends (an epoch loader);
- constraint batches: J rows of *every* group ("we sample an equal number of data points for
  every subgroup"), each group cycling through its own shuffled pass, so small groups are seen as
  often as large ones.
Every call continues the streams, so two calls give independent batches (e.g. the ζ1 and ζ2 of
SSL-ALM). Group ids stay the integers 0..G−1 of the prepared data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import UserError


class _Stream:
    """Indices of `pool` in shuffled passes: each pass visits every index once."""

    def __init__(self, pool: np.ndarray, rng: np.random.Generator) -> None:
        self.pool, self.rng = pool, rng
        self.order = rng.permutation(pool)
        self.position = 0

    def take(self, count: int) -> np.ndarray:
        parts, wanted = [], count
        while wanted:
            if self.position == len(self.order):
                self.order, self.position = self.rng.permutation(self.pool), 0
            part = self.order[self.position : self.position + wanted]
            self.position += len(part)
            wanted -= len(part)
            parts.append(part)
        return np.concatenate(parts) if len(parts) > 1 else parts[0]


@dataclass(frozen=True)
class Batch:
    """Row indices into the split, with each row's group id."""

    rows: np.ndarray
    groups: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)


class BatchSampler:
    """Objective and group-balanced constraint batches over one split's rows."""

    def __init__(
        self,
        groups: np.ndarray,
        n_groups: int,
        rng: np.random.Generator,
        labels: np.ndarray | None = None,
    ) -> None:
        """With `labels`, constraint batches take J rows of every (group, label) cell instead
        of every group: what rows that are means within cells (rates given Y, the loss gaps of
        equal opportunity and equalised odds) need to be estimated from every batch."""
        self.groups = np.asarray(groups, dtype=np.int64)
        if labels is None:
            keys, cells = self.groups, list(range(n_groups))
        else:
            keys = 2 * self.groups + (np.asarray(labels) > 0)
            cells = [(g, y) for g in range(n_groups) for y in (0, 1)]
        members = [np.flatnonzero(keys == k) for k in range(len(cells))]
        empty = [cells[k] for k, m in enumerate(members) if m.size == 0]
        if empty:
            what = "group ids" if labels is None else "(group id, label) cells"
            raise UserError(f"{what} {empty} have no rows to sample from")
        self._all = _Stream(np.arange(len(self.groups)), rng)
        self._by_group = [_Stream(m, rng) for m in members]

    def objective(self, size: int) -> Batch:
        """`size` rows of the split, continuing its shuffled pass."""
        rows = self._all.take(_positive(size))
        return Batch(rows, self.groups[rows])

    def per_group(self, per_group: int) -> Batch:
        """J = `per_group` rows of every group, or of every cell when the sampler has labels
        (grouped in order of the group ids)."""
        count = _positive(per_group)
        rows = np.concatenate([stream.take(count) for stream in self._by_group])
        return Batch(rows, self.groups[rows])


def _positive(size: int) -> int:
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 1:
        raise UserError(f"a batch needs at least one row, not {size!r}")
    return int(size)
