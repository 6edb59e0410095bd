"""The seven unfairness measures of paper 002 (badr), App. A and Table 3, for binary classification.

They act on real-valued scores p_i (paper 002 uses the linear score x_i^T w) and on integer group
ids a_i. sigma is the sigmoid, rho > 0 the smoothing parameter (default 1.0), and
    smax_rho(v) = (1 / rho) log sum_s exp(rho v_s),   smin_rho(v) = -smax_rho(-v).
Several are smoothed by design (the paper's "differentiable approximations"), so they carry
constant offsets: at perfect parity equal_opportunity = equalized_odds = 2 ln(G) / rho and
demographic_parity ~ ln(G) / rho + 1e-3. The exact, unsmoothed gaps are in `rates`.

- group variance: population variance over groups of the mean logistic loss F_s
- individual fairness:
      sum_{s<t} sum_{i in s, j in t} exp(-|y_i - y_j|) (p_i - p_j)^2 / sum_{s != t} n_s n_t
- demographic parity: smax_rho_s( sqrt((P_s - Pbar)^2 + 1e-6) ),
      P_s = mean_{i in s} sigma(rho p_i), Pbar the unweighted mean over groups
- disparate mistreatment: ( 1/n sum_i (a_i - abar)(p_i - pbar) )^2
- equal opportunity: smax_rho(TPR) - smin_rho(TPR), TPR_s = mean_{i in s, y_i = 1} sigma(rho p_i)
- equalized odds: 1/2 [ (smax - smin)(TPR) + (smax - smin)(FPR) ], FPR over y_i = 0
- HSIC (linear kernel): ( 1/(n-1) sum_i (a_i - abar)(p_i - pbar) )^2
Disparate mistreatment and HSIC use the integer id a_i itself, so with more than two groups they
depend on how the groups are numbered (as in the paper).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError
from engine.fairness._inputs import as_groups, as_labels, as_scores
from engine.fairness.table import cell_sums, require_nonempty
from engine.numerics import sigmoid


def _inputs(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    p = as_scores(scores)
    g, n_groups = as_groups(groups, p.size)
    labels = np.zeros(p.size, dtype=np.int64) if y is None else as_labels(y, p.size)
    return p, g, labels, n_groups


def _check_rho(rho: float) -> float:
    rho = float(rho)
    if not (np.isfinite(rho) and rho > 0):
        raise UserError(f"the smoothing parameter rho must be a positive number, got {rho}.")
    return rho


def _smax(values: np.ndarray, rho: float) -> float:
    top = values.max()
    return float(top + np.log(np.sum(np.exp(rho * (values - top)))) / rho)


def _smooth_range(values: np.ndarray, rho: float) -> float:
    """smax_rho(v) - smin_rho(v) with smin_rho(v) = -smax_rho(-v)."""
    return _smax(values, rho) + _smax(-values, rho)


def _smoothed_label_rates(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, rho: float, labels_needed: list[int]
) -> np.ndarray:
    """(G, 2) mean of sigma(rho p) over each (group, label) cell: columns FPR_s, TPR_s."""
    p, g, labels, n_groups = _inputs(scores, groups, y)
    sizes = cell_sums(1.0, g, labels, n_groups)
    require_nonempty(sizes[:, labels_needed], "a smoothed true/false-positive rate")
    soft = sigmoid(rho * p)
    with np.errstate(invalid="ignore"):
        return cell_sums(soft, g, labels, n_groups) / sizes


def _group_score_covariance(scores: ArrayLike, groups: ArrayLike, ddof: int) -> float:
    p, g, _, _ = _inputs(scores, groups, None)  # two non-empty groups, so n >= 2
    return float(np.sum((g - g.mean()) * (p - p.mean())) / (p.size - ddof))


def badr_group_variance(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Population variance over groups of the mean logistic loss log(1 + exp(-(2y-1) p))."""
    p, g, labels, n_groups = _inputs(scores, groups, y)
    loss = np.logaddexp(0.0, -(2 * labels - 1) * p)
    per_group = cell_sums(loss, g, labels, n_groups).sum(axis=1) / np.bincount(g)
    return float(np.var(per_group))


def badr_individual_fairness(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Berk et al.'s individual fairness as generalised to G groups in paper 002, App. A.

    For 0/1 labels the weight exp(-|y_i - y_j|) takes two values, so the cross-group double sum
    expands into per-(group, label) sums of p and p^2: O(n), never the n_s x n_t pair matrix.
    """
    p, g, labels, n_groups = _inputs(scores, groups, y)
    p = p - p.mean()  # the pair differences are unchanged; this limits cancellation
    count = cell_sums(1.0, g, labels, n_groups)  # (G, 2)
    first = cell_sums(p, g, labels, n_groups)
    second = cell_sums(p * p, g, labels, n_groups)

    def across(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # (2, 2) sum over ordered group pairs s != t of a[s, l] * b[t, l']
        return np.outer(a.sum(axis=0), b.sum(axis=0)) - a.T @ b

    # sum over ordered s != t, i in (s, l), j in (t, l') of (p_i - p_j)^2, per label pair (l, l')
    squared_gaps = across(second, count) + across(count, second) - 2.0 * across(first, first)
    weight = np.exp(-np.abs(np.subtract.outer([0.0, 1.0], [0.0, 1.0])))
    unordered = 0.5 * float(np.sum(weight * squared_gaps))  # each s < t pair was counted twice
    sizes = count.sum(axis=1)
    ordered_pairs = sizes.sum() ** 2 - np.sum(sizes**2)
    return unordered / float(ordered_pairs)


def badr_demographic_parity(scores: ArrayLike, groups: ArrayLike, rho: float = 1.0) -> float:
    """Smoothed demographic parity of paper 002: smax_rho of |P_s - Pbar| (softened by 1e-6)."""
    rho = _check_rho(rho)
    p, g, _, _ = _inputs(scores, groups, None)
    per_group = np.bincount(g, weights=sigmoid(rho * p)) / np.bincount(g)
    return _smax(np.sqrt((per_group - per_group.mean()) ** 2 + 1e-6), rho)


def badr_disparate_mistreatment(scores: ArrayLike, groups: ArrayLike) -> float:
    """Squared covariance between the group id and the score, with 1/n (paper 002, App. A)."""
    return _group_score_covariance(scores, groups, ddof=0) ** 2


def badr_hsic(scores: ArrayLike, groups: ArrayLike) -> float:
    """Linear-kernel HSIC: squared empirical covariance of group id and score, with 1/(n-1)."""
    return _group_score_covariance(scores, groups, ddof=1) ** 2


def badr_equal_opportunity(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, rho: float = 1.0
) -> float:
    """smax_rho(TPR) - smin_rho(TPR) over groups, with smoothed TPRs (paper 002, App. A)."""
    rho = _check_rho(rho)
    return _smooth_range(_smoothed_label_rates(scores, groups, y, rho, [1])[:, 1], rho)


def badr_equalized_odds(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, rho: float = 1.0
) -> float:
    """Half the sum of the smoothed TPR range and FPR range over groups (paper 002, App. A)."""
    rho = _check_rho(rho)
    rates = _smoothed_label_rates(scores, groups, y, rho, [0, 1])
    return 0.5 * (_smooth_range(rates[:, 1], rho) + _smooth_range(rates[:, 0], rho))
