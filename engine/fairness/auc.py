"""ROC-AUC and the AUC-based fairness quantities of paper 004, exact through ranks.

AUC(A, B) = Pr(s_a > s_b) + 1/2 Pr(s_a = s_b) for a drawn from set A and b from set B, with ties
counted 1/2 (the Mann-Whitney convention, also sklearn's). Paper 004's Def. 1 writes a strict ">";
the two agree when scores have no ties across the two sets.

With the per-value counts a_j, b_j of the two sets at the sorted distinct scores,
    #pairs with s_a > s_b  + 1/2 #ties = sum_j a_j (B_{<j} + b_j / 2),
so all AUCs between P cells and Q cells take two (P x U) by (U x Q) products: O(n log n) for the sort,
never n_A * n_B pairs.

Paper 004's three experimental metrics (Def. 2, eq. 1, Examples 1-3), for groups k, k':
- group AUC gap:        |AUC(group k, group k') - 1/2|   (Ex. 1; G2 = G2' = all gives 1/2)
- inter-group pairwise: |AUC(pos k, neg k') - AUC(pos k', neg k)|   (Ex. 2, "xAUC")
- intra-group pairwise: |AUC(pos k, neg k) - AUC(pos k', neg k')|   (Ex. 3)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from engine.fairness.table import GroupTable, pairwise_abs_diff, require_nonempty


def auc_matrix(counts_a: np.ndarray, counts_b: np.ndarray, what: str) -> np.ndarray:
    """(P, Q) AUC between each row of `counts_a` (P, U) and each row of `counts_b` (Q, U)."""
    size_a, size_b = counts_a.sum(axis=1), counts_b.sum(axis=1)
    require_nonempty(size_a, what)
    require_nonempty(size_b, what)
    # sum_j a_j (B_{<j} + b_j / 2) = sum_j a_j B_{<=j} - 1/2 sum_j a_j b_j, in exact integers
    at_or_below = np.einsum("pu,qu->pq", counts_a, np.cumsum(counts_b, axis=1))
    ties = np.einsum("pu,qu->pq", counts_a, counts_b)
    return (at_or_below - 0.5 * ties) / np.outer(size_a, size_b)


def _pos_neg_auc(table: GroupTable) -> np.ndarray:
    """(G, G) AUC(positives of group k, negatives of group k')."""
    return auc_matrix(table.label_counts(1), table.label_counts(0), "a within-label AUC")


def roc_auc(scores: ArrayLike, y: ArrayLike) -> float:
    """Pooled ROC-AUC of the scores for the labels y (ties count 1/2)."""
    table = GroupTable.build(scores, None, y, min_groups=1)
    return float(auc_matrix(table.label_counts(1), table.label_counts(0), "the ROC-AUC")[0, 0])


def group_roc_aucs(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> np.ndarray:
    """(G,) ROC-AUC computed inside each group."""
    return np.diag(_pos_neg_auc(GroupTable.build(scores, groups, y, min_groups=1))).copy()


def group_auc_pairs(scores: ArrayLike, groups: ArrayLike) -> np.ndarray:
    """(G, G) |AUC(group k, group k') - 1/2| (paper 004, Ex. 1; paper 003, eq. 102 baseline)."""
    table = GroupTable.build(scores, groups)
    return np.abs(auc_matrix(table.by_group, table.by_group, "the group AUC") - 0.5)


def group_auc_gap(scores: ArrayLike, groups: ArrayLike) -> float:
    """Largest group-AUC unfairness over pairs of groups."""
    return float(group_auc_pairs(scores, groups).max())


def inter_group_auc_pairs(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> np.ndarray:
    """(G, G) |AUC(pos k, neg k') - AUC(pos k', neg k)| (paper 004, Ex. 2)."""
    cross = _pos_neg_auc(GroupTable.build(scores, groups, y))
    return np.abs(cross - cross.T)


def inter_group_auc_gap(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Largest inter-group pairwise AUC gap over pairs of groups."""
    return float(inter_group_auc_pairs(scores, groups, y).max())


def intra_group_auc_pairs(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> np.ndarray:
    """(G, G) |AUC(pos k, neg k) - AUC(pos k', neg k')| (paper 004, Ex. 3)."""
    return pairwise_abs_diff(np.diag(_pos_neg_auc(GroupTable.build(scores, groups, y))))


def intra_group_auc_gap(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Largest intra-group pairwise AUC gap over pairs of groups."""
    return float(intra_group_auc_pairs(scores, groups, y).max())
