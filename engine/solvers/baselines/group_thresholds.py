"""Group-wise thresholds with equal selection rates: train a model without constraint, then give
each group g its own threshold t_g on the scores, so that the rows of g with h > t_g are
selected; the thresholds are those with the most correct training decisions among the ones whose
groups' selection rates all lie within κ of each other (the statistical-parity gap, largest minus
smallest rate, ≤ κ). Hardt et al. (2016) derive such group-wise thresholds from a score for
their criteria; this is the deterministic one for statistical parity.

The search is exact on the training rows. A group of n_g rows can select k of them, its top k
by score, for every k at which the k-th and (k+1)-th scores differ (k = 0 and n_g always), at
rate k/n_g with c_g(k) = (positives among the top k) + (negatives outside them) correct
decisions. For rates in a band [a, a + κ], each group takes its best k inside the band, and the
best band starts at a rate some group can reach: every such a is tried, with each group's best
inside the band found by a range-maximum table in O(log n) per query. All groups selecting
nothing (k = 0) always fits, so a choice always exists.

The reported model carries the thresholds as the group-wise map h − t_g (`POST_SCALE` = 1,
`POST_SHIFT` = −t_g, `engine.scoring`), so its exact metrics at the threshold 0 are those of the
thresholds, on every split. t_g is the midpoint between the k-th and (k+1)-th training scores of
g (above the highest for k = 0, below the lowest for k = n_g).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.model_forms import POST_SCALE, POST_SHIFT
from engine.models import Params
from engine.problem import Problem
from engine.solvers.base import Snapshot
from engine.solvers.baselines.cards_group_thresholds import GroupThresholdsConfig
from engine.solvers.reference.unconstrained import Unconstrained

RATE_SLACK = 1e-12  # a rate on the band's edge is inside it, whatever the rounding of k/n
OUTSIDE = 1.0  # how far beyond the training scores the thresholds of k = 0 and k = n_g lie


@dataclass(frozen=True)
class GroupCuts:
    """The cuts one group can make in its training scores: for each, its selection rate (in
    increasing order), its correct decisions and its threshold."""

    rates: np.ndarray
    correct: np.ndarray
    thresholds: np.ndarray

    @classmethod
    def of(cls, h: np.ndarray, y: np.ndarray) -> GroupCuts:
        order = np.argsort(-h, kind="stable")
        scores, labels = h[order], y[order].astype(np.int64)
        n = len(scores)
        positives = np.concatenate([[0], np.cumsum(labels)])  # among the top k, k = 0..n
        k = np.arange(n + 1)
        correct = positives + (n - labels.sum()) - (k - positives)
        cut = np.ones(n + 1, dtype=bool)  # the top k are separable from the rest
        cut[1:n] = scores[:-1] > scores[1:]
        above, below = scores[:-1], scores[1:]
        middle = below + (above - below) / 2
        inside = np.where((middle > below) & (middle < above), middle, below)
        thresholds = np.concatenate([[scores[0] + OUTSIDE], inside, [scores[-1] - OUTSIDE]])
        return cls(k[cut] / n, correct[cut].astype(np.float64), thresholds[cut])


def range_argmax(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each query, the index of the largest of values[lo:hi] (hi > lo), from a sparse table
    of the argmax over every power-of-two span."""
    n = len(values)
    levels = [np.arange(n)]
    span = 1
    while 2 * span <= n:
        previous = levels[-1]
        left, right = previous[: n - 2 * span + 1], previous[span : n - span + 1]
        best = np.where(values[right] > values[left], right, left)
        levels.append(np.concatenate([best, np.arange(len(best), n)]))
        span *= 2
    table = np.stack(levels)
    level = np.floor(np.log2(hi - lo)).astype(np.int64)
    left, right = table[level, lo], table[level, hi - (1 << level)]
    return np.where(values[right] > values[left], right, left)


def equal_rate_cuts(cuts: list[GroupCuts], kappa: float) -> list[int]:
    """The cut of each group (an index into its `GroupCuts`) with the most correct decisions
    in all, among the choices whose rates lie within `kappa` of each other."""
    starts = np.unique(np.concatenate([c.rates for c in cuts]))
    total = np.zeros(len(starts))
    chosen = []
    for group in cuts:
        lo = np.searchsorted(group.rates, starts - RATE_SLACK, side="left")
        hi = np.searchsorted(group.rates, starts + kappa + RATE_SLACK, side="right")
        fits = hi > lo
        best = np.zeros(len(starts), dtype=np.int64)
        best[fits] = range_argmax(group.correct, lo[fits], hi[fits])
        total = np.where(fits, total + group.correct[best], -np.inf)
        chosen.append(best)
    start = int(np.argmax(total))  # a = 0 always fits: every group can select no one
    return [int(best[start]) for best in chosen]


class GroupThresholds(Unconstrained):
    """The unconstrained solver, then one threshold per group (module docstring)."""

    def __init__(
        self, problem: Problem, config: GroupThresholdsConfig, rng: np.random.Generator
    ) -> None:
        super().__init__(problem, config, rng)
        self._note = ""

    def select(self, snapshots: list[Snapshot]) -> Params:
        params = self.candidate()
        problem = self.problem
        h, train = problem.scores(params, "train"), problem.data.train
        cuts = [
            GroupCuts.of(h[train.groups == g], train.y[train.groups == g])
            for g in range(problem.data.n_groups)
        ]
        picks = equal_rate_cuts(cuts, problem.bound.spec.kappa)
        thresholds = np.array([c.thresholds[i] for c, i in zip(cuts, picks, strict=True)])
        rates = np.array([c.rates[i] for c, i in zip(cuts, picks, strict=True)])
        named = ", ".join(
            f"{name} {t:.4g}" for name, t in zip(problem.data.group_names, thresholds, strict=True)
        )
        self._note = (
            f"thresholds per group: {named}; training selection rates "
            f"{rates.min():.4f} to {rates.max():.4f}"
        )
        return params | {POST_SCALE: np.ones(len(thresholds)), POST_SHIFT: -thresholds}

    def selection_note(self) -> str:
        return self._note
