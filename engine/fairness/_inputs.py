"""Checks on the arrays and parameters that the fairness metrics receive.

Every metric goes through these functions, so a bad input fails the same way everywhere: with a
`UserError` that names the argument and says what was expected.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError


def as_scores(scores: ArrayLike) -> np.ndarray:
    """Return `scores` as a 1-D float64 array with at least one finite entry and no NaN/inf."""
    arr = np.asarray(scores)
    if arr.ndim != 1:
        raise UserError(f"scores must be a 1-D array, got shape {arr.shape}.")
    if arr.size == 0:
        raise UserError("scores is empty: there is nothing to evaluate.")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise UserError(f"scores must be numbers, got dtype {arr.dtype}.")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise UserError("scores contain NaN or infinite values; fix the model output first.")
    return arr


def as_groups(groups: ArrayLike, n: int, min_groups: int = 2) -> tuple[np.ndarray, int]:
    """Return `(groups as int64, G)` after checking that the ids are exactly 0..G-1.

    Empty groups are refused rather than skipped: a metric over "all pairs of groups" would
    otherwise change meaning silently when one group is missing from a split.
    """
    arr = np.asarray(groups)
    if arr.ndim != 1:
        raise UserError(f"groups must be a 1-D array, got shape {arr.shape}.")
    if arr.size != n:
        raise UserError(f"groups has {arr.size} entries but scores has {n}; they must match.")
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    whole_floats = np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr))
    if not (np.issubdtype(arr.dtype, np.integer) or whole_floats):
        raise UserError(f"groups must be integer ids 0..G-1, got dtype {arr.dtype}.")
    arr = arr.astype(np.int64, copy=False)
    if arr.min() < 0:
        raise UserError(f"groups must be ids 0..G-1; found the negative id {arr.min()}.")
    n_groups = int(arr.max()) + 1
    sizes = np.bincount(arr, minlength=n_groups)
    empty = np.flatnonzero(sizes == 0)
    if empty.size:
        raise UserError(
            f"group id(s) {empty.tolist()} have no samples; relabel the groups as 0..G-1 "
            "without gaps (or drop the empty group before evaluating)."
        )
    if n_groups < min_groups:
        raise UserError(
            f"this metric compares groups and needs at least {min_groups}; got {n_groups}."
        )
    return arr, n_groups


def as_labels(y: ArrayLike, n: int) -> np.ndarray:
    """Return binary labels `y` (0/1 or bool) as an int64 array of length `n`."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise UserError(f"y must be a 1-D array, got shape {arr.shape}.")
    if arr.size != n:
        raise UserError(f"y has {arr.size} entries but scores has {n}; they must match.")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise UserError(f"y must hold 0/1 labels, got dtype {arr.dtype}.")
    if not np.all((arr == 0) | (arr == 1)):
        bad = np.unique(arr[(arr != 0) & (arr != 1)])[:5]
        raise UserError(f"y must hold 0/1 labels only; found {bad.tolist()}.")
    return arr.astype(np.int64)


def as_targets(y: ArrayLike, n: int) -> np.ndarray:
    """Return real-valued labels `y` (a regression's) as a float64 array of length `n`."""
    arr = np.asarray(y)
    if arr.shape != (n,):
        raise UserError(f"y must be a 1-D array of {n} labels (one per score), got {arr.shape}.")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise UserError(f"y must hold numbers, got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise UserError("y contains NaN or infinite values.")
    return arr


def as_interval(alpha: float, beta: float) -> tuple[float, float]:
    """Check the percentile interval I = [alpha, beta) with 0 <= alpha < beta <= 1."""
    alpha, beta = float(alpha), float(beta)
    if not (np.isfinite(alpha) and np.isfinite(beta)):
        raise UserError(f"alpha and beta must be finite numbers, got {alpha} and {beta}.")
    if not 0.0 <= alpha < beta <= 1.0:
        raise UserError(
            "the interval [alpha, beta) must satisfy 0 <= alpha < beta <= 1; "
            f"got [{alpha}, {beta})."
        )
    return alpha, beta


def as_threshold(threshold: float) -> float:
    """Check a decision threshold on the score scale."""
    value = float(threshold)
    if np.isnan(value):
        raise UserError("threshold must be a number, got NaN.")
    return value
