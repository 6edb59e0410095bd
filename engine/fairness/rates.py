"""Group rates at a decision threshold and the parity gaps built from them.

A sample is predicted positive when its score is strictly greater than the threshold
(`score > threshold`), the convention of paper 003 (Pr(h > theta_hat), eq. 3) and of a logit
threshold of 0 for sigmoid(logit) > 0.5 (paper 000's released code).

Per-pair results are symmetric (G, G) arrays with a zero diagonal; the scalar gap is their maximum.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from engine.fairness._inputs import as_labels, as_scores, as_threshold
from engine.fairness.table import GroupTable, pairwise_abs_diff, rate


def positive_rates_of(table: GroupTable, threshold: float) -> np.ndarray:
    """(G,) Pr(score > threshold | group k)."""
    return table.above(threshold).sum(axis=1) / table.group_sizes


def label_rates_of(table: GroupTable, threshold: float, label: int) -> np.ndarray:
    """(G,) Pr(score > threshold | group k, y = label): TPR for label 1, FPR for label 0."""
    name = "the true-positive rate" if label == 1 else "the false-positive rate"
    return rate(table.above(threshold)[:, label], table.cell_sizes()[:, label], name)


def positive_rates(scores: ArrayLike, groups: ArrayLike, threshold: float = 0.0) -> np.ndarray:
    """(G,) share of each group predicted positive, Pr(score > threshold | group)."""
    return positive_rates_of(GroupTable.build(scores, groups, min_groups=1), threshold)


def true_positive_rates(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, threshold: float = 0.0
) -> np.ndarray:
    """(G,) Pr(score > threshold | group, y = 1)."""
    return label_rates_of(GroupTable.build(scores, groups, y, min_groups=1), threshold, 1)


def false_positive_rates(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, threshold: float = 0.0
) -> np.ndarray:
    """(G,) Pr(score > threshold | group, y = 0)."""
    return label_rates_of(GroupTable.build(scores, groups, y, min_groups=1), threshold, 0)


def demographic_parity_pairs(
    scores: ArrayLike, groups: ArrayLike, threshold: float = 0.0
) -> np.ndarray:
    """(G, G) |Pr(score > t | k) - Pr(score > t | k')|."""
    return pairwise_abs_diff(positive_rates_of(GroupTable.build(scores, groups), threshold))


def demographic_parity_gap(scores: ArrayLike, groups: ArrayLike, threshold: float = 0.0) -> float:
    """Largest difference in positive rate between two groups (paper 003, eq. 3)."""
    return float(demographic_parity_pairs(scores, groups, threshold).max())


def equal_opportunity_pairs(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, threshold: float = 0.0
) -> np.ndarray:
    """(G, G) true-positive-rate differences."""
    table = GroupTable.build(scores, groups, y)
    return pairwise_abs_diff(label_rates_of(table, threshold, 1))


def equal_opportunity_gap(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, threshold: float = 0.0
) -> float:
    """Largest true-positive-rate difference between two groups."""
    return float(equal_opportunity_pairs(scores, groups, y, threshold).max())


def equalized_odds_pairs(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, threshold: float = 0.0
) -> np.ndarray:
    """(G, G) max(|TPR_k - TPR_k'|, |FPR_k - FPR_k'|) (paper 001, eq. 17)."""
    table = GroupTable.build(scores, groups, y)
    tpr_gap = pairwise_abs_diff(label_rates_of(table, threshold, 1))
    fpr_gap = pairwise_abs_diff(label_rates_of(table, threshold, 0))
    return np.maximum(tpr_gap, fpr_gap)


def equalized_odds_gap(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, threshold: float = 0.0
) -> float:
    """Largest over pairs of max(TPR gap, FPR gap)."""
    return float(equalized_odds_pairs(scores, groups, y, threshold).max())


def accuracy(scores: ArrayLike, y: ArrayLike, threshold: float = 0.0) -> float:
    """Share of samples with (score > threshold) == y."""
    s = as_scores(scores)
    labels = as_labels(y, s.size)
    return float(np.mean((s > as_threshold(threshold)) == (labels == 1)))
