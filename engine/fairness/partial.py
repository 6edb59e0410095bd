"""Partial statistical parity (pSP) and partial demographic parity (pDP), paper 003.

Ranks are counted from the TOP and separately in each group: the rank of a score theta in group
k is the CCDF  Fbar_k(theta) = Pr(score > theta | group k)  (Def. 4.1), so I = [0, 0.2) is "the
top 20% of each group" and I = [0.7, 1] the bottom 30% of each group. Thresholds theta are shared
by all groups; only the ranks are per group.

Both metrics use the closed form of App. C, eq. (62):

    Pr(score > theta | group k, Fbar_k(score) in I)
        = (clip(Fbar_k(theta), alpha, beta) - alpha) / (beta - alpha)

evaluated on the empirical per-group CCDFs, with strict ">" counts.
- pSP_{k,k'} = max over theta of the difference of (62) between k and k' (Def. 4.2, eq. 6-7);
  it is piecewise constant in theta and changes only at pooled scores, so the maximum over the
  distinct pooled scores is exact (theta = -inf gives 0 for every pair).
- pDP_{k,k'} = the same difference at the fixed decision threshold theta_hat (Def. 4.3, eq. 10-11).
Conditioning literally on the members whose own-group rank lies in I (the two-sample KS statistic
between the groups' "I-slices") gives the same value when alpha * n_k and beta * n_k are whole
numbers and no ties straddle a slice edge; otherwise the two differ by O(1 / ((beta - alpha) n_k)).
Eq. (62) is used because it is the quantity Lemma 5.1 and the constraints (15) control.
With I = [0, 1], pSP is the two-sample KS distance between the groups' score distributions and
pDP the demographic-parity gap.

The paper reports fairness as 1 - max_{k,k'} pSP (or 1 - max pDP), which is in [0, 1] and equals 1
for perfectly fair scores (Sec. 7, Tables 2-4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from engine.fairness._inputs import as_interval
from engine.fairness.rates import positive_rates_of
from engine.fairness.table import GroupTable, pairwise_abs_diff


@dataclass(frozen=True)
class GapWitness:
    """Where the largest pSP gap is attained.

    value:  max over pairs of pSP (the metric itself).
    pair:   the two groups (k, k') attaining it, k < k'.
    theta:  a shared threshold attaining it; the gap is the same for every threshold in
            [theta, next larger pooled score), so theta marks the left end of that step.
    """

    value: float
    pair: tuple[int, int]
    theta: float


def _clipped_rank(rank: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    # paper 003, eq. 62: Pr(h > theta | gamma = k, Fbar_k(h) in I)
    out = np.clip(rank, alpha, beta)
    out -= alpha  # in place: for pSP these are (G, U) arrays
    out /= beta - alpha
    return out


def _psp_sweep(table: GroupTable, alpha: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """(G, G) pSP per pair and (G, G) index into `table.values` of a maximising theta."""
    clipped = _clipped_rank(1.0 - table.group_cdf, alpha, beta)  # (G, U), theta = values[j]
    n_groups = table.n_groups
    gaps = np.zeros((n_groups, n_groups))
    where = np.zeros((n_groups, n_groups), dtype=np.int64)
    for k in range(n_groups):
        for k2 in range(k + 1, n_groups):
            diff = np.abs(clipped[k] - clipped[k2])
            j = int(np.argmax(diff))
            gaps[k, k2] = gaps[k2, k] = diff[j]
            where[k, k2] = where[k2, k] = j
    return gaps, where


def psp_pairs(scores: ArrayLike, groups: ArrayLike, alpha: float, beta: float) -> np.ndarray:
    """(G, G) partial statistical parity SP^I_{k,k'} on I = [alpha, beta) (paper 003, eq. 6, 62)."""
    alpha, beta = as_interval(alpha, beta)
    return _psp_sweep(GroupTable.build(scores, groups), alpha, beta)[0]


def psp(scores: ArrayLike, groups: ArrayLike, alpha: float, beta: float) -> float:
    """max over pairs of pSP on I = [alpha, beta); the paper plots 1 - psp(...) as "fairness"."""
    return float(psp_pairs(scores, groups, alpha, beta).max())


def psp_witness(scores: ArrayLike, groups: ArrayLike, alpha: float, beta: float) -> GapWitness:
    """The max pSP together with the pair and the shared threshold theta where it is attained."""
    alpha, beta = as_interval(alpha, beta)
    table = GroupTable.build(scores, groups)
    gaps, where = _psp_sweep(table, alpha, beta)
    upper_k, upper_k2 = np.triu_indices(table.n_groups, 1)
    best = int(np.argmax(gaps[upper_k, upper_k2]))
    pair = (int(upper_k[best]), int(upper_k2[best]))
    return GapWitness(value=float(gaps[pair]), pair=pair, theta=float(table.values[where[pair]]))


def pdp_pairs(
    scores: ArrayLike, groups: ArrayLike, alpha: float, beta: float, threshold: float = 0.0
) -> np.ndarray:
    """(G, G) partial demographic parity DP^I_{k,k'} at `threshold` (paper 003, eq. 10, 62)."""
    alpha, beta = as_interval(alpha, beta)
    rates = positive_rates_of(GroupTable.build(scores, groups), threshold)
    return pairwise_abs_diff(_clipped_rank(rates, alpha, beta))


def pdp(
    scores: ArrayLike, groups: ArrayLike, alpha: float, beta: float, threshold: float = 0.0
) -> float:
    """max over pairs of pDP on I = [alpha, beta); the paper plots 1 - pdp(...) as "fairness"."""
    return float(pdp_pairs(scores, groups, alpha, beta, threshold).max())
