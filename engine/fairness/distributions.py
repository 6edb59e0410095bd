"""Per-group score distributions on the rank scale of paper 003: the numbers behind its plots.

Ranks are counted from the TOP and separately in each group (Def. 4.1): the rank of a score theta
in group k is the CCDF  Fbar_k(theta) = Pr(score > theta | group k), with a strict ">". The
interval I = [alpha, beta) is "each group's top alpha to beta"; a group's I-slice is the set of its
scores whose own rank lies in I. Thresholds theta are shared by all groups.

- `group_ccdf`: each group's Fbar_k as step-function points, for a CCDF plot (Sec. 6.3, item 1).
- `slice_bounds`: each group's I-slice in score units through the inverse CCDF of App. C.
- `rank_rank_curve`: (Fbar_k(theta), Fbar_k'(theta)) as theta falls, paper 003 Fig. 2.
- `interval_scan`, `candidate_intervals`, `suggested_interval`: the interval helper of App. B.
- `rank_profile`: each group's rank at every pooled rank, and where the groups differ most.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError
from engine.fairness._inputs import as_interval, as_threshold
from engine.fairness.partial import pdp, psp
from engine.fairness.rates import positive_rates
from engine.fairness.table import GroupTable

Interval = tuple[float, float]


def _table(scores: ArrayLike, groups: ArrayLike, n_groups: int) -> GroupTable:
    """Validated samples whose group ids are exactly 0..n_groups-1, each group non-empty."""
    table = GroupTable.build(scores, groups, min_groups=1)
    if table.n_groups != n_groups:
        raise UserError(
            f"expected group ids 0..{n_groups - 1}, but the largest id is {table.n_groups - 1}; "
            "pass the number of groups the ids were encoded with."
        )
    return table


def _plot_margin(scores: np.ndarray) -> float:
    """Room left and right of the pooled scores, so a step function shows its first and last step."""
    spread = float(scores.max() - scores.min())
    return 0.05 * spread if spread > 0 else 1.0


def _group_steps(group_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A group's distinct scores (ascending) and Fbar_k at each: (members strictly above) / n_k."""
    values, counts = np.unique(group_scores, return_counts=True)
    above = group_scores.size - np.cumsum(counts)
    return values, above / group_scores.size


def group_ccdf(
    scores: ArrayLike, groups: ArrayLike, n_groups: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per group k: thresholds theta (ascending) and the rank Fbar_k(theta) = Pr(h > theta | k).

    The thresholds are the group's distinct scores, with one point left of the pooled minimum
    (where Fbar_k = 1) and one right of the pooled maximum (where Fbar_k = 0). Fbar_k is
    right-continuous, so the points draw the exact function as a step plot that holds each value
    until the next threshold (plotly `line_shape="hv"`). Paper 003, Def. 4.1.
    """
    table = _table(scores, groups, n_groups)
    margin = _plot_margin(table.scores)
    left, right = table.scores.min() - margin, table.scores.max() + margin
    out = []
    for k in range(n_groups):
        values, ranks = _group_steps(table.scores[table.groups == k])
        out.append(
            (np.concatenate([[left], values, [right]]), np.concatenate([[1.0], ranks, [0.0]]))
        )
    return out


def _inverse_ccdf(values: np.ndarray, ranks: np.ndarray, p: float) -> float:
    # paper 003, App. C: Fbar_k^{-1}(p) = inf{theta : Fbar_k(theta) <= p}. Fbar_k = 1 left of the
    # group's minimum, so for p >= 1 every theta qualifies and the infimum is -inf; otherwise it
    # is the smallest group score whose rank is <= p (the last one has rank 0).
    if p >= 1.0:
        return -np.inf
    return float(values[np.argmax(ranks <= p)])


def slice_bounds(
    scores: ArrayLike, groups: ArrayLike, n_groups: int, alpha: float, beta: float
) -> np.ndarray:
    """(G, 2) each group's I-slice in score units: row k is (Fbar_k^{-1}(alpha), Fbar_k^{-1}(beta)).

    Fbar_k^{-1}(p) = inf{theta : Fbar_k(theta) <= p} (paper 003, App. C) is the threshold where
    group k's rank falls to p, so column 0 is the slice's upper score end (rank alpha, the top of
    I) and column 1 its lower score end (rank beta). The slice is the group's scores between them.
    For beta = 1 the lower end is -inf: the slice runs down to the group's lowest score.
    """
    alpha, beta = as_interval(alpha, beta)
    table = _table(scores, groups, n_groups)
    bounds = np.empty((n_groups, 2))
    for k in range(n_groups):
        values, ranks = _group_steps(table.scores[table.groups == k])
        bounds[k] = _inverse_ccdf(values, ranks, alpha), _inverse_ccdf(values, ranks, beta)
    return bounds


def rank_rank_curve(
    scores: ArrayLike, groups: ArrayLike, k: int, k2: int
) -> tuple[np.ndarray, np.ndarray]:
    """(Fbar_k(theta), Fbar_k2(theta)) for theta at every distinct pooled score, from the largest
    down, then theta = -inf: the curve runs from (0, 0) to (1, 1). Paper 003, Fig. 2."""
    table = GroupTable.build(scores, groups)
    for name, group in (("k", k), ("k2", k2)):
        if not 0 <= group < table.n_groups:
            raise UserError(
                f"{name} = {group} is not a group id; the ids are 0..{table.n_groups - 1}."
            )
    sizes = table.group_sizes[[k, k2], None]
    above = sizes - np.cumsum(table.by_group[[k, k2]], axis=1)  # (2, U) members > values[j]
    ranks = np.concatenate([(above / sizes)[:, ::-1], np.ones((2, 1))], axis=1)
    return ranks[0], ranks[1]


def candidate_intervals(steps: int = 20, width_steps: int = 2) -> list[Interval]:
    """Every I = [a, b) with a and b on a grid of `steps` equal parts of [0, 1] and b - a at least
    `width_steps` parts; the defaults give a 5 % grid and widths of 10 % or more (App. B)."""
    if steps < 1 or not 1 <= width_steps <= steps:
        raise UserError(
            f"need steps >= 1 and 1 <= width_steps <= steps; got {steps}, {width_steps}."
        )
    return [
        (i / steps, j / steps) for i in range(steps + 1) for j in range(i + width_steps, steps + 1)
    ]


def _contains(interval: Interval, p: float) -> bool:
    # I = [alpha, beta); an interval that ends at 1 also holds p = 1 (the paper writes [70%, 100%])
    alpha, beta = interval
    return alpha <= p and (p < beta or beta == 1.0)


def interval_scan(
    scores: ArrayLike,
    groups: ArrayLike,
    threshold: float,
    intervals: Iterable[Sequence[float]],
) -> list[dict[str, Any]]:
    """Paper 003, App. B: how unfair the given (usually unconstrained) scores are on each interval.

    One row per interval with keys alpha, beta, positive_rate (p = Pr(h > threshold) over
    everyone), group_rates (Pr(h > threshold | k) per group), contains_rate (p in I) and the exact
    psp and pdp (at `threshold`) on I. App. B picks an I that contains p and, among those, the one
    where the unconstrained model is most unfair (see `suggested_interval`).
    """
    threshold = as_threshold(threshold)
    table = GroupTable.build(scores, groups)
    rate = float(np.mean(table.scores > threshold))
    group_rates = tuple(float(r) for r in positive_rates(table.scores, table.groups, threshold))
    rows = []
    for alpha, beta in intervals:
        alpha, beta = as_interval(alpha, beta)
        row = {
            "alpha": alpha,
            "beta": beta,
            "positive_rate": rate,
            "group_rates": group_rates,
            "contains_rate": _contains((alpha, beta), rate),
            "psp": psp(table.scores, table.groups, alpha, beta),
            "pdp": pdp(table.scores, table.groups, alpha, beta, threshold),
        }
        rows.append(row)
    return rows


def suggested_interval(rows: Sequence[dict[str, Any]], metric: str = "psp") -> Interval | None:
    """App. B's choice among `interval_scan` rows: the interval containing p with the largest
    `metric`; None when no row contains p."""
    holding = [row for row in rows if row["contains_rate"]]
    if not holding:
        return None
    best = max(holding, key=lambda row: row[metric])
    return best["alpha"], best["beta"]


@dataclass(frozen=True)
class RankProfile:
    """Where in the rank range groups differ: at each pooled rank r (the share of everyone
    above a threshold θ_r), each group's own rank F̄_k(θ_r) (`rates[k]`), their largest gap
    (`gap`), and the share of everyone above `threshold` (`positive_rate`)."""

    ranks: np.ndarray  # (R,)
    rates: np.ndarray  # (m, R)
    gap: np.ndarray  # (R,)
    positive_rate: float


def rank_profile(
    scores: ArrayLike, groups: ArrayLike, threshold: float = 0.0, points: int = 201
) -> RankProfile:
    """`RankProfile` at `points` pooled ranks from 0 to 1: θ_r is the pooled score that round(r n)
    of the n scores lie strictly above (−∞ for all of them), and F̄_k(θ_r) = Pr(h > θ_r | k)
    (Def. 4.1, strict ">"; with ties the share above θ_r may fall short of r). pSP on
    I = [α, β) is the largest gap between two groups' curves where both are clipped to the band
    [α, β) (paper 003, Def. 4.2), so the profile shows where in the rank range a given I looks."""
    table = GroupTable.build(scores, groups)
    pooled = np.sort(table.scores)[::-1]
    ranks = np.linspace(0.0, 1.0, points)
    above = np.rint(ranks * pooled.size).astype(int)
    thresholds = np.where(above < pooled.size, pooled[np.minimum(above, pooled.size - 1)], -np.inf)
    rates = np.empty((table.n_groups, points))
    for k in range(table.n_groups):
        own = np.sort(table.scores[table.groups == k])
        rates[k] = (own.size - np.searchsorted(own, thresholds, side="right")) / own.size
    gap = rates.max(axis=0) - rates.min(axis=0)
    return RankProfile(ranks, rates, gap, float(np.mean(table.scores > as_threshold(threshold))))
