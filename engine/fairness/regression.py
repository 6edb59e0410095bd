"""Exact metrics of a regression (real-valued labels y, predictions h): its errors, and the gaps
between groups that paper 002 measures its ridge regressions by, unsmoothed.

    rmse            √(mean (h − y)²)
    mae             mean |h − y|
    r2              1 − Σ(h − y)² / Σ(y − ȳ)², ȳ the mean of the same rows: 0 for predicting
                    their mean, < 0 for worse (sklearn's r2_score)
    mean_gap        max_s − min_s of the groups' mean predictions: demographic parity of a
                    regression, the exact form of paper 002's smoothed dp on mean predictions
                    (App. A, Table 3's regression DP), without its smoothing or offset
    squared_loss_gap  max_s − min_s of the groups' mean squared loss ½(h − y)² (the objective's
                    group losses F_s of paper 002, Sec. 2, without the penalty)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError
from engine.fairness._inputs import as_groups, as_scores, as_targets


def rmse(scores: ArrayLike, y: ArrayLike) -> float:
    h, targets = _pair(scores, y)
    return float(np.sqrt(np.mean((h - targets) ** 2)))


def mae(scores: ArrayLike, y: ArrayLike) -> float:
    h, targets = _pair(scores, y)
    return float(np.mean(np.abs(h - targets)))


def r2(scores: ArrayLike, y: ArrayLike) -> float:
    """The coefficient of determination on these rows (about their own mean label)."""
    h, targets = _pair(scores, y)
    total = float(np.sum((targets - targets.mean()) ** 2))
    if total == 0.0:
        raise UserError("R² needs labels that are not all equal; these rows have one value.")
    return 1.0 - float(np.sum((h - targets) ** 2)) / total


def mean_gap(scores: ArrayLike, groups: ArrayLike) -> float:
    """The largest difference between two groups' mean predictions."""
    h = as_scores(scores)
    return _group_mean_range(h, groups)


def squared_loss_gap(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """The largest difference between two groups' mean squared loss ½(h − y)²."""
    h, targets = _pair(scores, y)
    return _group_mean_range(0.5 * (h - targets) ** 2, groups)


def _group_mean_range(values: np.ndarray, groups: ArrayLike) -> float:
    """max − min over the groups (at least two) of the mean of `values`."""
    g, n_groups = as_groups(groups, values.size)
    return float(np.ptp(np.bincount(g, values, n_groups) / np.bincount(g, minlength=n_groups)))


def _pair(scores: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    h = as_scores(scores)
    return h, as_targets(y, h.size)
