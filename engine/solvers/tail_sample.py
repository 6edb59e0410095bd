"""The random outputs of the switching methods, drawn on the fly without storing the stream.

`WeightedReservoir` keeps one item of a stream with probability ∝ its weight: the output of
paper 000's SSw (Alg. 3), over its objective steps from k0 on.

Paper 001's baselines draw over a tail of the run whose length is not known in advance: Huang &
Lin (2023), Alg. 1, outputs x_τ with τ drawn over the objective iterations t ∈ {S, …, T − 1}
with P(τ = t) ∝ η_t; the inexact proximal point methods output a random outer iterate. Both
need T, and a run stopped by seconds learns T only when it stops. `TailSample` keeps the draw
for every T at once, without storing the stream: S is taken as the largest power of two at most
f·T (0 while f·T < 1), so the draw is over the offers of (roughly) the last 1 − f of the run,
S ∈ (f·T/2, f·T].
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

Item = TypeVar("Item")


class WeightedReservoir(Generic[Item]):
    """One item of a stream, item k kept with probability w_k / Σ_s w_s (paper 000, Alg. 3's
    output), without storing the stream: the k-th offer replaces the kept item with probability
    w_k / (w_1 + … + w_k). One uniform draw of `rng` per offer."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.total = 0.0
        self.item: Item | None = None

    def offer(self, weight: float, make: Callable[[], Item]) -> bool:
        """Offer the item `make()` (built only if kept) with `weight` > 0; True if it was kept."""
        self.total += weight
        if self.rng.random() * self.total >= weight:
            return False
        self.item = make()
        return True


def _power(index: int) -> int:
    """The largest power of two ≤ index (0 for 0)."""
    return 0 if index < 1 else 1 << (index.bit_length() - 1)


def tail_start(fraction: float, count: int) -> int:
    """S for T = `count`: the largest power of two ≤ fraction·T, 0 while fraction·T < 1."""
    return _power(int(fraction * count))


class TailSample(Generic[Item]):
    """One item of a stream of offers (index, weight), drawn with probability ∝ weight among the
    offers whose index is at least S(T) (`tail_start`), T the count of indices so far.

    Weighted reservoirs of one item (`WeightedReservoir`) each take every offer from their first
    on; one opens at the first offer and at the first offer past each power of two. For any S
    that is a power of two, the reservoir opened at the first offer ≥ S holds exactly the offers
    from S on, and S only grows with T, so a reservoir whose first offer lies before S(T) is
    closed for good: the sample is the first open reservoir's item. Between S and T lie at most
    log2(1/fraction) + 2 powers of two, and so as many open reservoirs; fraction 0 keeps one.
    Each offer draws one uniform of `rng` per open reservoir."""

    def __init__(self, rng: np.random.Generator, fraction: float) -> None:
        self.rng, self.fraction = rng, fraction
        self.open: list[tuple[int, WeightedReservoir[Item]]] = []  # (first offer's index, …)

    def offer(self, index: int, weight: float, make: Callable[[], Item]) -> None:
        """Offer the item `make()` (built at most once, only if kept) at `index` (above every
        earlier index) with `weight` > 0."""
        if not self.open or (self.fraction > 0 and _power(index) > _power(self.open[-1][0])):
            self.open.append((index, WeightedReservoir(self.rng)))
        self._close(index + 1)
        made: list[Item] = []

        def once() -> Item:
            if not made:
                made.append(make())
            return made[0]

        for _, reservoir in self.open:
            reservoir.offer(weight, once)

    def item(self, count: int) -> Item | None:
        """The sample for T = `count` (never less than an earlier call's): the item drawn among
        the offers from S(T) on, None if there was none."""
        self._close(count)
        return self.open[0][1].item if self.open else None

    def _close(self, count: int) -> None:
        start = tail_start(self.fraction, count)
        while self.open and self.open[0][0] < start:
            self.open.pop(0)
