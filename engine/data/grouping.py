"""Protected groups: which attribute, how its values are grouped, and what to do with tiny groups."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.group_map import (
    JOIN,
    MISSING,
    OTHER,
    AttributeMap,
    GroupMap,
    bin_labels,
    fold,
    value_key,
)
from engine.errors import UserError

MODES = ("auto", "all", "binary", "top-k", "bins")
AGE_COLUMNS = frozenset({"age", "agep"})
AGE_BINS = (25.0, 45.0, 65.0)
# a numeric attribute with at most this many distinct values is grouped by value under "auto":
# its quartile bins could give no more groups, only names like "0–0" and "1+"
FEW_VALUES = 4
ONE_GROUP = "all"  # the name of the one group of data prepared without a protected attribute


@dataclass(frozen=True)
class GroupingSpec:
    """How one protected attribute becomes groups.

    - `all`: every value is a group;
    - `binary`: the most frequent value against all others (RAC1P: White / not White);
    - `top-k`: the k most frequent values, the rest pooled as "other";
    - `bins`: a numeric attribute cut at `bins` (age defaults to <25, 25–44, 45–64, 65+);
    - `auto`: `bins` for numeric attributes with more than `FEW_VALUES` distinct values, `all`
      otherwise (a 0/1 column gives the groups "0" and "1", not bins around its quartiles).
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
    map: GroupMap | None = None  # how raw values give these ids, for rows not seen here


def one_group(n_rows: int) -> Groups:
    """Every row in one group, ONE_GROUP: data prepared without a protected attribute (a model
    fitted by the estimator without sensitive features), on which no fairness constraint can
    hold; there are no protected values to map."""
    return Groups(ids=np.zeros(n_rows, dtype=np.int64), names=(ONE_GROUP,), warnings=())


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
    labels, order, notes, part = _labels_for(dataset, specs[0])
    parts = [part]
    for spec in specs[1:]:
        more, more_order, more_notes, more_part = _labels_for(dataset, spec)
        labels = labels + JOIN + more
        order = [f"{a}{JOIN}{b}" for a in order for b in more_order]
        notes += more_notes
        parts.append(more_part)
    groups, other = _merge_small(labels, min_group_size, small_groups, order)
    codes, uniques = pd.factorize(labels)
    _, first = np.unique(codes, return_index=True)
    label_ids = {str(uniques[c]): int(groups.ids[i]) for c, i in enumerate(first)}
    group_map = GroupMap(
        tuple(p.column for p in parts), tuple(parts), label_ids, groups.names, other
    )
    return replace(groups, notes=(*notes, *groups.notes), map=group_map)


def _labels_for(
    dataset: Dataset, spec: GroupingSpec
) -> tuple[pd.Series, list[str], list[str], AttributeMap]:
    """Each row's group name, the names in display order (codes and bins in their natural
    order, the majority first for binary, "other" and missing values last), notes, and how the
    column's values give the names (for rows not seen here)."""
    column = dataset.column(spec.attribute)
    values = dataset.frame[column]
    numeric = pd.api.types.is_numeric_dtype(values) and column in dataset.numeric
    binned = numeric and values.nunique(dropna=True) > FEW_VALUES
    mode = spec.mode if spec.mode != "auto" else ("bins" if binned else "all")
    if mode == "bins":
        labels, order, edges, names = _binned(values, column, spec.bins)
        return labels, order, [], AttributeMap(column, "bins", edges=edges, bin_names=names)
    readable = _readable(values, dataset.value_labels.get(column, {}))
    natural = list(readable.loc[values.sort_values(kind="stable").index].unique())
    named, natural, notes = _merge_spellings(readable, natural)
    unseen = None
    if mode == "binary":
        top = named.value_counts().index[0]
        unseen = f"not {top}"
        named, natural = named.where(named == top, unseen), [top, unseen]
    elif mode == "top-k":
        keep = set(named.value_counts().index[: spec.k])
        natural = [n for n in natural if n in keep] + [OTHER]
        named, unseen = named.where(named.isin(keep), OTHER), OTHER
    return named, natural, notes, _value_map(column, values, readable, named, unseen)


def _value_map(
    column: str, values: pd.Series, readable: pd.Series, labels: pd.Series, unseen: str | None
) -> AttributeMap:
    """The group name each distinct raw value was given, found by its key and by its readable
    name without regard to case and spacing."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    _, first = np.unique(codes, return_index=True)
    by_key, by_spelling = {}, {}
    for code, row in enumerate(first):
        by_key.setdefault(value_key(uniques[code]), str(labels.iloc[row]))
        by_spelling.setdefault(fold(str(readable.iloc[row])), str(labels.iloc[row]))
    return AttributeMap(column, "values", labels=by_key, spellings=by_spelling, unseen=unseen)


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
        if isinstance(v, float | np.floating) and float(v).is_integer():  # ACS codes: float32
            v = int(v)
        return " ".join(str(value_labels.get(v, v)).split()) or MISSING

    codes, uniques = pd.factorize(values, use_na_sentinel=False)  # name each value once
    names = np.array([name(v) for v in uniques], dtype=object)
    return pd.Series(names[codes], index=values.index).astype("string")


def _binned(
    values: pd.Series, column: str, bins: tuple[float, ...]
) -> tuple[pd.Series, list[str], tuple[float, ...], tuple[str, ...]]:
    """Each row's bin name, the names in order with MISSING last, the edges (`bins`, else the
    age stages for an age, else the quartiles) and the bins' names."""
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().sum() == 0:
        raise UserError(f"'{column}' has no numbers to cut into bins")
    if not bins:
        if column.lower() in AGE_COLUMNS:
            bins = AGE_BINS
        else:
            bins = tuple(np.unique(np.quantile(numbers.dropna(), [0.25, 0.5, 0.75])))
    bins = tuple(float(b) for b in bins)
    edges = (-np.inf, *bins, np.inf)
    whole = bool((numbers.dropna() % 1 == 0).all()) and all(b.is_integer() for b in bins)
    names = tuple(_bin_name(lo, hi, whole) for lo, hi in zip(edges[:-1], edges[1:], strict=True))
    return bin_labels(numbers, bins, names), [*names, MISSING], bins, names


def _bin_name(lo: float, hi: float, whole: bool) -> str:
    """Bins are [lo, hi); on whole numbers (ages) [25, 45) reads "25–44"."""
    if lo == -np.inf:
        return f"<{hi:g}"
    if hi == np.inf:
        return f"{lo:g}+"
    return f"{lo:g}–{hi - 1:g}" if whole else f"{lo:g} to <{hi:g}"


def _merge_small(
    labels: pd.Series, min_size: int, policy: str, order: list[str]
) -> tuple[Groups, int | None]:
    """The groups, small ones merged into "other" (or refused), and the id of "other" (None
    without it)."""
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
    before = labels
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
    pooled = (before == OTHER).to_numpy()
    other = int(ids[pooled][0]) if pooled.any() else None  # named by a spelling of it, maybe
    return Groups(ids=ids, names=tuple(names), warnings=tuple(warnings), notes=tuple(notes)), other
