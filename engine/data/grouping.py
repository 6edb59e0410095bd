"""Protected groups: which attribute, how its values are grouped, and what to do with tiny groups."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import UserError

MODES = ("auto", "all", "binary", "top-k", "bins")
AGE_COLUMNS = frozenset({"age", "agep"})
AGE_BINS = (25.0, 45.0, 65.0)
OTHER = "other"
MISSING = "(missing)"


@dataclass(frozen=True)
class GroupingSpec:
    """How one protected attribute becomes groups.

    - `all`: every value is a group;
    - `binary`: the most frequent value against all others (RAC1P: White / not White);
    - `top-k`: the k most frequent values, the rest pooled as "other";
    - `bins`: a numeric attribute cut at `bins` (age defaults to <25, 25–44, 45–64, 65+);
    - `auto`: `bins` for numeric attributes, `all` otherwise.
    """

    attribute: str
    mode: str = "auto"
    k: int = 3
    bins: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise UserError(f"grouping must be one of {', '.join(MODES)}, not '{self.mode}'")
        if self.mode == "top-k" and self.k < 1:
            raise UserError("top-k grouping needs k of at least 1")
        if list(self.bins) != sorted(set(self.bins)):
            raise UserError("age/number bins must be increasing and distinct")


@dataclass(frozen=True)
class Groups:
    ids: np.ndarray  # int64 in 0..G-1, one per row
    names: tuple[str, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...] = ()


def make_groups(
    dataset: Dataset,
    specs: tuple[GroupingSpec, ...],
    min_group_size: int = 50,
    small_groups: str = "merge",
) -> Groups:
    """Group rows by one attribute or the intersection of several.

    Groups with fewer than `min_group_size` rows are merged into "other" (`small_groups="merge"`)
    or refused (`"refuse"`); either way the outcome is reported in `warnings`. Names that differ
    only in case or spacing ("Other" and "other") are one group, reported in `notes`.
    """
    if not specs:
        raise UserError("choose a protected attribute")
    if small_groups not in ("merge", "refuse"):
        raise UserError("small groups are either merged ('merge') or refused ('refuse')")
    labels, order, notes = _labels_for(dataset, specs[0])
    for spec in specs[1:]:
        more, more_order, more_notes = _labels_for(dataset, spec)
        labels = labels + " × " + more
        order = [f"{a} × {b}" for a in order for b in more_order]
        notes += more_notes
    groups = _merge_small(labels, min_group_size, small_groups, order)
    return replace(groups, notes=(*notes, *groups.notes))


def _labels_for(dataset: Dataset, spec: GroupingSpec) -> tuple[pd.Series, list[str], list[str]]:
    """Each row's group name, the names in display order (codes and bins in their natural
    order, the majority first for binary, "other" and missing values last), and notes."""
    column = dataset.column(spec.attribute)
    values = dataset.frame[column]
    numeric = pd.api.types.is_numeric_dtype(values) and column in dataset.numeric
    mode = spec.mode if spec.mode != "auto" else ("bins" if numeric else "all")
    if mode == "bins":
        return (*_binned(values, column, spec.bins), [])
    named = _readable(values, dataset.value_labels.get(column, {}))
    natural = list(dict.fromkeys(named.loc[values.sort_values(kind="stable").index]))
    named, natural, notes = _merge_spellings(named, natural)
    if mode == "binary":
        top = named.value_counts().index[0]
        return named.where(named == top, f"not {top}"), [top, f"not {top}"], notes
    if mode == "top-k":
        keep = set(named.value_counts().index[: spec.k])
        natural = [n for n in natural if n in keep] + [OTHER]
        return named.where(named.isin(keep), OTHER), natural, notes
    return named, natural, notes


def _merge_spellings(labels: pd.Series, order: list[str]) -> tuple[pd.Series, list[str], list[str]]:
    """One group for names equal after case-folding and collapsing spaces, named by the most
    frequent spelling; a note says which names were merged."""
    counts = labels.value_counts()
    spellings: dict[str, list[str]] = {}
    for name in sorted(counts.index, key=lambda n: (-counts[n], n)):
        spellings.setdefault(" ".join(name.split()).casefold(), []).append(name)
    renames = {other: names[0] for names in spellings.values() for other in names[1:]}
    if not renames:
        return labels, order, []
    notes = [
        f"the group names {', '.join(repr(n) for n in names)} differ only in case or spacing "
        f"and are one group, '{names[0]}'"
        for names in spellings.values()
        if len(names) > 1
    ]
    return labels.replace(renames), [n for n in order if n not in renames], notes


def _readable(values: pd.Series, value_labels: dict) -> pd.Series:
    """Each value's group name: its label, on one line (a value holding line breaks or runs of
    spaces is named with single spaces; one of spaces only is missing)."""

    def name(v: object) -> str:
        if pd.isna(v):
            return MISSING
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        return " ".join(str(value_labels.get(v, v)).split()) or MISSING

    codes, uniques = pd.factorize(values, use_na_sentinel=False)  # name each value once
    names = np.array([name(v) for v in uniques], dtype=object)
    return pd.Series(names[codes], index=values.index).astype("string")


def _binned(values: pd.Series, column: str, bins: tuple[float, ...]) -> tuple[pd.Series, list[str]]:
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().sum() == 0:
        raise UserError(f"'{column}' has no numbers to cut into bins")
    if not bins:
        if column.lower() in AGE_COLUMNS:
            bins = AGE_BINS
        else:
            bins = tuple(np.unique(np.quantile(numbers.dropna(), [0.25, 0.5, 0.75])))
    edges = (-np.inf, *bins, np.inf)
    whole = bool((numbers.dropna() % 1 == 0).all()) and all(float(b).is_integer() for b in bins)
    names = [_bin_name(lo, hi, whole) for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
    cut = pd.cut(numbers, edges, right=False, labels=names)
    return cut.astype("string").fillna(MISSING), [*names, MISSING]


def _bin_name(lo: float, hi: float, whole: bool) -> str:
    """Bins are [lo, hi); on whole numbers (ages) [25, 45) reads "25–44"."""
    if lo == -np.inf:
        return f"<{hi:g}"
    if hi == np.inf:
        return f"{lo:g}+"
    return f"{lo:g}–{hi - 1:g}" if whole else f"{lo:g} to <{hi:g}"


def _merge_small(labels: pd.Series, min_size: int, policy: str, order: list[str]) -> Groups:
    counts = labels.value_counts()
    order = [n for n in order if n in counts]
    small = [n for n in order if counts[n] < min_size and n != OTHER]
    warnings = []
    if small:
        listed = ", ".join(f"{n} ({counts[n]})" for n in small)
        if policy == "refuse":
            raise UserError(
                f"groups with fewer than {min_size} rows: {listed}; "
                "merge them into 'other', group the attribute differently, or lower the minimum"
            )
        labels = labels.where(~labels.isin(small), OTHER)
        warnings.append(f"groups with fewer than {min_size} rows merged into '{OTHER}': {listed}")
    labels, order, notes = _merge_spellings(labels, order)
    counts = labels.value_counts()
    if OTHER in counts and counts[OTHER] < min_size:
        raise UserError(
            f"even merged, the '{OTHER}' group has only {counts[OTHER]} rows (minimum {min_size}); "
            "group the attribute more coarsely (e.g. binary) or lower the minimum"
        )
    names = [n for n in order if n in counts and n != OTHER] + ([OTHER] if OTHER in counts else [])
    if len(names) < 2:
        raise UserError(
            f"the protected attribute gives a single group ({names[0]}); fairness needs two or more"
        )
    index = {n: i for i, n in enumerate(names)}
    ids = labels.map(index).to_numpy(dtype=np.int64)
    return Groups(ids=ids, names=tuple(names), warnings=tuple(warnings), notes=tuple(notes))
