"""Train/validation/test splits, stratified by group × label (by group alone for a real-valued
label), reproducible from a seed."""

from __future__ import annotations

import numpy as np

from engine.errors import UserError


def check_fractions(fractions: tuple[float, ...]) -> tuple[float, float, float]:
    if len(fractions) != 3 or any(f < 0 for f in fractions) or not np.isclose(sum(fractions), 1):
        raise UserError(
            f"split fractions must be three non-negative numbers (train, val, test) adding up "
            f"to 1, not {fractions}"
        )
    if fractions[0] <= 0:
        raise UserError("the training split cannot be empty")
    return (float(fractions[0]), float(fractions[1]), float(fractions[2]))


def stratified_split(strata: np.ndarray, fractions: tuple[float, ...], seed: int) -> np.ndarray:
    """Assign every row to split 0 (train), 1 (val) or 2 (test).

    Within each stratum the rows are shuffled and cut so that each split receives its fraction,
    rounded by largest remainder: split sizes per stratum differ from the exact share by < 1.
    """
    share = np.asarray(check_fractions(fractions))
    rng = np.random.default_rng(seed)
    assignment = np.empty(len(strata), dtype=np.int8)
    for stratum in np.unique(strata):
        rows = rng.permutation(np.flatnonzero(strata == stratum))
        exact = share * len(rows)
        sizes = np.floor(exact).astype(int)
        leftover = len(rows) - sizes.sum()
        sizes[np.argsort(-(exact - sizes), kind="stable")[:leftover]] += 1
        assignment[rows] = np.repeat(np.arange(3, dtype=np.int8), sizes)
    return assignment


def strata_of(groups: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
    """Group × label for binary `labels`; the groups alone without (a real-valued label)."""
    if labels is None:
        return groups.astype(np.int64)
    return groups.astype(np.int64) * 2 + labels.astype(np.int64)
