"""Overlapping subgroups from thresholds on several numeric attributes (paper 001, §5.3).

Paper 001's intersectional experiment on Communities and Crime takes "ten thresholds on three
criteria" (the shares of Black, Hispanic and Asian residents) and keeps the groups holding more
than 1 % of the rows as constraints. A subgroup here is the set of rows whose value of every
attribute is at least its threshold; the thresholds of an attribute are the quantiles of its
training values at the levels 0, 1/T, …, (T − 1)/T (the paper gives no thresholds; quantiles make
every threshold meaningful whatever the attribute's scale). The subgroups overlap, so they are
not the run's groups (one per row): each split holds them as a sparse membership matrix, rows ×
subgroups, so that all subgroup means of a per-row quantity cost one sparse product.

A subgroup is kept when more than `min_share` of the training rows are in it; threshold tuples
that coincide (tied quantiles) give one subgroup, and the tuple of all the smallest thresholds
(every row) is left out: its hinge gap to the whole sample is identically 0.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from engine.errors import UserError


@dataclass(frozen=True)
class SubgroupSpec:
    """Subgroups from `thresholds` quantile thresholds on each of `attributes` (paper 001 §5.3:
    ten thresholds on three attributes), kept above `min_share` of the training rows (1 %)."""

    attributes: tuple[str, ...]
    thresholds: int = 10
    min_share: float = 0.01

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", tuple(self.attributes))
        if not self.attributes:
            raise UserError("subgroups need at least one numeric attribute")
        if len(set(self.attributes)) != len(self.attributes):
            raise UserError("each subgroup attribute may be named once")
        if not 2 <= self.thresholds <= 100:
            raise UserError("subgroups take between 2 and 100 thresholds per attribute")
        if not 0.0 <= self.min_share < 1.0:
            raise UserError("the smallest subgroup share must be in [0, 1)")


@dataclass(frozen=True)
class Subgroups:
    """The kept subgroups: their names, the quantile level of each threshold (subgroups ×
    attributes: the features a Lagrange-multiplier model reads, Narasimhan et al. 2020) and the
    threshold values."""

    names: tuple[str, ...]
    levels: np.ndarray  # (k, a) in [0, 1)
    thresholds: np.ndarray  # (k, a)
    attributes: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.names)

    def membership(self, values: np.ndarray) -> sparse.csr_matrix:
        """Rows × subgroups, 1 where a row (its attribute values, rows × attributes) is in a
        subgroup. A missing value is below every threshold."""
        return sparse.csr_matrix(_inside(values, self.thresholds), dtype=np.float64)


def attribute_values(frame: pd.DataFrame, attributes: tuple[str, ...]) -> np.ndarray:
    """The attributes' values (rows × attributes) as numbers; a non-numeric one is refused."""
    columns = []
    for name in attributes:
        if name not in frame.columns:
            raise UserError(f"subgroup attribute '{name}' is not a column of the data set")
        values = pd.to_numeric(frame[name], errors="coerce")
        if values.isna().all() or values.isna().sum() > frame[name].isna().sum():
            raise UserError(
                f"subgroup attribute '{name}' is not numeric: subgroups are cut at "
                "thresholds on numbers"
            )
        columns.append(values.to_numpy(dtype=np.float64))
    return np.column_stack(columns)


def threshold_subgroups(train_values: np.ndarray, spec: SubgroupSpec) -> Subgroups:
    """The subgroups of `spec` with thresholds from the training rows' values (rows ×
    attributes)."""
    levels = np.arange(spec.thresholds) / spec.thresholds
    cuts = [np.nanquantile(train_values[:, j], levels) for j in range(train_values.shape[1])]
    kept: dict[tuple[float, ...], tuple[float, ...]] = {}  # thresholds -> their levels
    for index in itertools.product(range(spec.thresholds), repeat=len(cuts)):
        if not any(index):
            continue  # every row: its gap to the whole sample is 0
        thresholds = tuple(float(cuts[j][i]) for j, i in enumerate(index))
        kept.setdefault(thresholds, tuple(float(levels[i]) for i in index))
    if not kept:
        raise UserError("the subgroup thresholds leave no subgroup")
    thresholds = np.array(list(kept), dtype=np.float64)
    share = _inside(train_values, thresholds).mean(axis=0)
    chosen = share > spec.min_share
    if not chosen.any():
        raise UserError(f"no subgroup holds more than {spec.min_share:.0%} of the training rows")
    thresholds = thresholds[chosen]
    levels_kept = np.array(list(kept.values()), dtype=np.float64)[chosen]
    names = tuple(
        _name(spec.attributes, t, q) for t, q in zip(thresholds, levels_kept, strict=True)
    )
    return Subgroups(names, levels_kept, thresholds, spec.attributes)


CHUNK_ROWS = 4096  # rows × subgroups × attributes booleans at a time


def _inside(values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """rows × subgroups: every attribute at least its threshold (a missing value never is)."""
    filled = np.where(np.isnan(values), -np.inf, values)
    return np.concatenate(
        [
            np.all(filled[i : i + CHUNK_ROWS, None, :] >= thresholds[None, :, :], axis=2)
            for i in range(0, max(len(filled), 1), CHUNK_ROWS)
        ]
    )


def _name(attributes: tuple[str, ...], thresholds: np.ndarray, levels: np.ndarray) -> str:
    """ "racepctblack≥0.12 & racePctAsian≥0.05": the attributes cut above their minimum."""
    return " & ".join(
        f"{a}≥{t:.3g}" for a, t, q in zip(attributes, thresholds, levels, strict=True) if q > 0
    )
