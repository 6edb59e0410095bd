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

and the two of App. A that compare a group with the whole sample, whose sets overlap:
- average equality gap: |AUC(label-l k, label-l all) - 1/2|, l = pos or neg   (Ex. 4)
- BPSN vs BNSP:         |AUC(pos all, neg k) - AUC(pos k, neg all)|          (Ex. 5)
Overlapping sets need nothing special: the counts of a union are sums of cell counts, and a
sample paired with itself is a tie (1/2). With ties at 1/2, AUC(all, all) is exactly 1/2, the
constant Ex. 1 and Ex. 4 subtract; under Def. 1's strict ">" it would fall short of 1/2 by half
the share of tied pairs (self-pairs included).
Ex. 4 and 5 are not symmetric in the two groups: for a pair k < k', k plays the protected group
gamma = 1 and "all" is the union of k and k' (the whole sample when there are two groups).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from engine.fairness.table import GroupTable, pairwise_abs_diff, require_nonempty


def _auc(counts_a: np.ndarray, counts_b: np.ndarray, what: str, pattern: str) -> np.ndarray:
    """AUCs between rows of `counts_a` and `counts_b` (per distinct score), combined as the
    einsum `pattern` over the score axis u says."""
    size_a, size_b = counts_a.sum(axis=1), counts_b.sum(axis=1)
    require_nonempty(size_a, what)
    require_nonempty(size_b, what)
    # sum_j a_j (B_{<j} + b_j / 2) = sum_j a_j B_{<=j} - 1/2 sum_j a_j b_j, in exact integers
    at_or_below = np.einsum(pattern, counts_a, np.cumsum(counts_b, axis=1))
    ties = np.einsum(pattern, counts_a, counts_b)
    return (at_or_below - 0.5 * ties) / np.einsum(pattern.replace("u", ""), size_a, size_b)


def auc_matrix(counts_a: np.ndarray, counts_b: np.ndarray, what: str) -> np.ndarray:
    """(P, Q) AUC between each row of `counts_a` (P, U) and each row of `counts_b` (Q, U)."""
    return _auc(counts_a, counts_b, what, "pu,qu->pq")


def paired_auc(counts_a: np.ndarray, counts_b: np.ndarray, what: str) -> np.ndarray:
    """(R,) AUC between row r of `counts_a` and row r of `counts_b`, both (R, U)."""
    return _auc(counts_a, counts_b, what, "ru,ru->r")


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


def _protected_pairs(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pair k < k' (k protected): the counts (R, U) of k's negatives and positives and of
    the negatives and positives of k and k' together."""
    table = GroupTable.build(scores, groups, y)
    k, other = np.triu_indices(table.n_groups, 1)
    neg, pos = table.label_counts(0), table.label_counts(1)
    return neg[k], pos[k], neg[k] + neg[other], pos[k] + pos[other]


def average_equality_gaps(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, label: int
) -> np.ndarray:
    """(R,) |AUC(label-l of k, label-l of k and k') - 1/2| per pair k < k', l = `label`
    (paper 004, App. A, Ex. 4: positive average equality gap for 1, negative for 0)."""
    neg_k, pos_k, neg_all, pos_all = _protected_pairs(scores, groups, y)
    cell, background = (pos_k, pos_all) if label == 1 else (neg_k, neg_all)
    return np.abs(paired_auc(cell, background, "an average equality gap") - 0.5)


def positive_average_equality_gap(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Largest positive average equality gap over pairs k < k' (paper 004, App. A, Ex. 4)."""
    return float(average_equality_gaps(scores, groups, y, 1).max())


def negative_average_equality_gap(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Largest negative average equality gap over pairs k < k' (paper 004, App. A, Ex. 4)."""
    return float(average_equality_gaps(scores, groups, y, 0).max())


def bpsn_bnsp_gaps(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> np.ndarray:
    """(R,) |BPSN AUC - BNSP AUC| per pair k < k' (paper 004, App. A, Ex. 5):
    BPSN = AUC(positives of k and k', negatives of k), BNSP = AUC(positives of k, negatives of
    k and k')."""
    neg_k, pos_k, neg_all, pos_all = _protected_pairs(scores, groups, y)
    bpsn = paired_auc(pos_all, neg_k, "the BPSN AUC")
    bnsp = paired_auc(pos_k, neg_all, "the BNSP AUC")
    return np.abs(bpsn - bnsp)


def bpsn_bnsp_gap(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Largest |BPSN AUC - BNSP AUC| over pairs k < k' (paper 004, App. A, Ex. 5)."""
    return float(bpsn_bnsp_gaps(scores, groups, y).max())
