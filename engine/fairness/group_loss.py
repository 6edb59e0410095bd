"""Gaps between group losses (paper 000, Sec. 2, Table 1), on the exact empirical means.

The loss is paper 000's eq. (12), binary cross-entropy on logits:
    l(s, y) = -y log sigmoid(s) - (1 - y) log(1 - sigmoid(s)) = log(1 + exp(-(2y - 1) s)).
For groups A, B (per pair of groups for G > 2):
- accuracy equality:  |E_{D[A]} l - E_{D[B]} l|
- equal opportunity:  |E_{D[A, Y=+]} l - E_{D[B, Y=+]} l|
- equalized odds:     sum over v in {+, -} of |E_{D[A, Y=v]} l - E_{D[B, Y=v]} l|
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from engine.fairness._inputs import as_groups, as_labels, as_scores
from engine.fairness.table import cell_sums, pairwise_abs_diff, rate


def _cell_losses(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, min_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """(G, 2) summed BCE loss and (G, 2) counts per (group, label) cell."""
    s = as_scores(scores)
    g, n_groups = as_groups(groups, s.size, min_groups=min_groups)
    labels = as_labels(y, s.size)
    loss = np.logaddexp(0.0, -(2 * labels - 1) * s)  # paper 000, eq. 12
    return cell_sums(loss, g, labels, n_groups), cell_sums(1.0, g, labels, n_groups)


def group_losses(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> np.ndarray:
    """(G,) mean BCE-with-logits loss of each group."""
    sums, sizes = _cell_losses(scores, groups, y, min_groups=1)
    return sums.sum(axis=1) / sizes.sum(axis=1)


def loss_accuracy_equality_pairs(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> np.ndarray:
    """(G, G) |mean loss of group k - mean loss of group k'| (paper 000, Table 1)."""
    sums, sizes = _cell_losses(scores, groups, y, min_groups=2)
    return pairwise_abs_diff(sums.sum(axis=1) / sizes.sum(axis=1))


def loss_equal_opportunity_pairs(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> np.ndarray:
    """(G, G) gap in mean loss over the positives of each group (paper 000, Table 1)."""
    sums, sizes = _cell_losses(scores, groups, y, min_groups=2)
    return pairwise_abs_diff(rate(sums[:, 1], sizes[:, 1], "the loss over positives"))


def loss_equalized_odds_pairs(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> np.ndarray:
    """(G, G) sum over labels of the gap in mean loss per label (paper 000, Table 1)."""
    sums, sizes = _cell_losses(scores, groups, y, min_groups=2)
    per_label = rate(sums, sizes, "the loss per label")
    return pairwise_abs_diff(per_label[:, 0]) + pairwise_abs_diff(per_label[:, 1])


def loss_accuracy_equality_gap(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Largest accuracy-equality loss gap over pairs of groups."""
    return float(loss_accuracy_equality_pairs(scores, groups, y).max())


def loss_equal_opportunity_gap(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Largest equal-opportunity loss gap over pairs of groups."""
    return float(loss_equal_opportunity_pairs(scores, groups, y).max())


def loss_equalized_odds_gap(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Largest equalized-odds loss gap over pairs of groups."""
    return float(loss_equalized_odds_pairs(scores, groups, y).max())
