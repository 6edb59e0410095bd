"""Exact AUCs of two groups' scores when the protected group's scores are mapped to ω1·h + ω2,
over a grid of maps (paper 004, App. E.2: the post-processing baseline of Kallus & Zhou 2019).

P is the protected group (γ = 1; group 0, as in `engine.fairness.auc`, where of a pair k < k'
k plays γ = 1), whose scores p become ω1·p + ω2 with ω1 ≥ 0; U is the other group, unchanged.
With S(A, B) = #{(a, b) : a > b} + ½ #{(a, b) : a = b} (ties ½, as in `engine.fairness.auc`),
    pooled AUC  = [S(P+, P−) + S(U+, U−) + S(P+, U−) + S(U+, P−)] / (n₊ n₋)
    Ex. 1 gap   = |S(P, U) / (n_P n_U) − ½|
    Ex. 2 gap   = |S(P+, U−) / (n_P+ n_U−) − S(U+, P−) / (n_U+ n_P−)|
with S(U+, P−) = n_U+ n_P− − S(P−, U+). A map with ω1 > 0 keeps the order inside P, so S(P+, P−)
is that of the unmapped scores (with ω1 = 0 all of P ties: ½ n_P+ n_P−), and S(U+, U−) never
changes. Only the cross-group counts S(P_l, U_m) move with the map, and all four follow from where
each mapped p falls among U's sorted scores, with the running count of U's positives: U is sorted
once, then each map costs one binary search per distinct score of P (in ascending order, which
numpy's searchsorted runs fastest), vectorised over the shifts of one scale. On Adult's validation split
(8,141 rows) the paper's 6,161 maps take under half a second; scoring and ranking each mapped
split (`Problem.report_scores`) takes about 10 s.

Every count is a multiple of ½ held exactly in float64 and each quantity is divided as
`engine.fairness.auc` divides it, so the values are those of `roc_auc`, `group_auc_gap` and
`inter_group_auc_gap` on the mapped scores, bit for bit, as long as ω1·p + ω2 creates no tie
inside P (two of P's scores within a rounding error of each other), which is not looked for.
The mapped scores are computed as `engine.problem.Problem.scores` computes them: (ω1·p) + ω2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError

PROTECTED = 0  # the group whose scores are mapped (γ = 1)
CHUNK = 1 << 20  # most mapped scores searched at once (8 MB of float64)


@dataclass(frozen=True)
class MapMetrics:
    """Exact metrics per map, arrays of shape (scales, shifts); NaN where a set is empty."""

    auc: np.ndarray  # pooled ROC-AUC
    group: np.ndarray  # paper 004, Ex. 1: |AUC(P, U) − ½|
    inter: np.ndarray  # paper 004, Ex. 2: |AUC(P+, U−) − AUC(U+, P−)|


@dataclass(frozen=True)
class TwoGroupScores:
    """One split's scores, sorted once for `map_metrics`."""

    protected: np.ndarray  # P's distinct scores, ascending
    counts: np.ndarray  # (distinct, 2) how many of P's positives and negatives score each
    other: np.ndarray  # U's scores, ascending
    other_positives: np.ndarray  # (n_U + 1,) positives among other[:i]
    within_protected: float  # S(P+, P−) of the unmapped scores
    within_other: float  # S(U+, U−)

    @classmethod
    def build(cls, scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> TwoGroupScores:
        h, g, positive = np.asarray(scores, np.float64), np.asarray(groups), np.asarray(y) == 1
        if set(np.unique(g)) != {PROTECTED, 1 - PROTECTED}:
            raise UserError("the mapped-score AUCs need rows of exactly two groups, 0 and 1")
        if not np.isfinite(h).all():
            raise UserError("the mapped-score AUCs need finite scores")
        p, p_pos = h[g == PROTECTED], positive[g == PROTECTED]
        order = np.argsort(h[g != PROTECTED], kind="stable")
        u, u_pos = h[g != PROTECTED][order], positive[g != PROTECTED][order]
        distinct, at = np.unique(p, return_inverse=True)
        counts = np.zeros((len(distinct), 2))
        np.add.at(counts, (at, np.where(p_pos, 0, 1)), 1.0)
        return cls(
            protected=distinct,
            counts=counts,
            other=u,
            other_positives=np.concatenate([[0], np.cumsum(u_pos)]),
            within_protected=_wins(p[p_pos], p[~p_pos]),
            within_other=_wins(u[u_pos], u[~u_pos]),
        )

    def cross_counts(self, scale: float, shifts: np.ndarray) -> np.ndarray:
        """(shifts, 2, 2) 2·S(P_l, U_m) for P mapped by (scale, shift) for each of the ≥ 1
        shifts: l indexes P's labels (0: positive, 1: negative), m the rows of U compared with
        (0: its positives, 1: all of them)."""
        n = len(self.protected)
        rows = max(1, CHUNK // n)
        parts = []
        for start in range(0, len(shifts), rows):
            mapped = (scale * self.protected)[None, :] + shifts[start : start + rows, None]
            below, at_or_below = self._ranks(mapped.ravel())
            twice = (
                self.other_positives[below] + self.other_positives[at_or_below],
                below + at_or_below,
            )
            parts.append(
                np.stack(
                    [t.reshape(-1, n).astype(np.float64) @ self.counts for t in twice], axis=-1
                )
            )
        return np.concatenate(parts)

    def _ranks(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """#{u < v} and #{u ≤ v} for each v; the second searched only where some u equals v."""
        below = np.searchsorted(self.other, values, side="left")
        at_or_below = below.copy()
        padded = np.append(self.other, np.nan)  # NaN equals nothing
        tied = np.flatnonzero(padded[below] == values)
        at_or_below[tied] = np.searchsorted(self.other, values[tied], side="right")
        return below, at_or_below


def _wins(a: np.ndarray, b: np.ndarray) -> float:
    """S(A, B) = #{a > b} + ½ #{a = b}."""
    b = np.sort(b)
    return float(np.sum(np.searchsorted(b, a, "left") + np.searchsorted(b, a, "right")) / 2)


def map_metrics(table: TwoGroupScores, scales: np.ndarray, shifts: np.ndarray) -> MapMetrics:
    """The exact pooled AUC and the Ex. 1 and Ex. 2 gaps for every map (ω1, ω2) of `scales` ×
    `shifts` (ω1 ≥ 0) applied to the protected group's scores."""
    if np.any(np.asarray(scales) < 0):
        raise UserError("the mapped-score AUCs need scales ω1 ≥ 0 (an increasing map)")
    shifts = np.asarray(shifts, np.float64)
    counts = np.stack([table.cross_counts(float(s), shifts) for s in scales]) / 2
    p_pos, p_neg = table.counts.sum(axis=0)
    u_pos = float(table.other_positives[-1])
    u_neg = len(table.other) - u_pos
    vs_u_pos, vs_u = counts[..., 0], counts[..., 1]  # (scales, shifts, P's label)
    vs_u_neg = vs_u - vs_u_pos
    within_p = np.where(np.asarray(scales) > 0, table.within_protected, 0.5 * p_pos * p_neg)
    u_pos_over_p_neg = u_pos * p_neg - vs_u_pos[..., 1]  # S(U+, P−)
    pooled = within_p[:, None] + table.within_other + vs_u_neg[..., 0] + u_pos_over_p_neg
    p_over_u = vs_u[..., 0] + vs_u[..., 1]  # S(P, U)
    n_p, n_u = p_pos + p_neg, u_pos + u_neg
    with np.errstate(divide="ignore", invalid="ignore"):
        # both orders, as engine.fairness.auc's (G, G) matrices take them
        group = np.maximum(
            np.abs(p_over_u / (n_p * n_u) - 0.5), np.abs((n_p * n_u - p_over_u) / (n_u * n_p) - 0.5)
        )
        first = vs_u_neg[..., 0] / (p_pos * u_neg)
        second = u_pos_over_p_neg / (u_pos * p_neg)
        return MapMetrics(
            auc=pooled / ((p_pos + u_pos) * (p_neg + u_neg)),
            group=group,
            inter=np.abs(first - second),
        )
