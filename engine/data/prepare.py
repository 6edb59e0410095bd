"""From a Dataset to Prepared arrays: group, split, encode (fitted on train only)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.data.dataset import Dataset
from engine.data.encoding import add_group_cross_terms, cross_term_names, fit_encoder
from engine.data.grouping import GroupingSpec, make_groups, one_group
from engine.data.leakage import leakage_warnings
from engine.data.prepared import Prepared, SplitArrays
from engine.data.split import check_fractions, strata_of, stratified_split
from engine.data.subgroups import SubgroupSpec, attribute_values, threshold_subgroups
from engine.errors import UserError
from engine.task import Task

# Above this size of the dense float64 design (rows × encoded columns × 8 bytes), the prepared X
# is a CSR matrix of float32 (`SplitArrays.X`). One-hot rows are mostly zeros: the ACS income task
# has about 10 nonzeros in hundreds of columns, so at 1.66 M rows the dense design would take
# gigabytes (and its copies and cross-terms several times that) where CSR takes about 130 MB.
# Below it the design stays dense float64, exactly as small data sets always had it. Part of the
# cache key (`engine.data.sources.cache_key`), so changing it never reads an entry of the other kind.
SPARSE_FROM_BYTES = 512 * 2**20


@dataclass(frozen=True)
class PrepareOptions:
    """Everything besides the data source that decides the prepared arrays (part of the cache key)."""

    grouping: tuple[GroupingSpec, ...]
    split: tuple[float, float, float] = (0.6, 0.2, 0.2)
    seed: int = 0
    min_group_size: int = 50
    small_groups: str = "merge"
    cross_terms: bool = False
    drop_protected: bool = False
    min_category_count: int = 5
    subgroups: SubgroupSpec | None = None  # overlapping subgroups besides the groups

    def __post_init__(self) -> None:
        object.__setattr__(self, "split", check_fractions(tuple(self.split)))
        if self.min_group_size < 1:
            raise UserError("the minimum group size must be at least 1")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UserError(f"the split seed must be a whole number ≥ 0, not {self.seed!r}")


def prepare(dataset: Dataset, options: PrepareOptions, key: str = "") -> Prepared:
    y = _label(dataset)
    groups = (
        make_groups(dataset, options.grouping, options.min_group_size, options.small_groups)
        if options.grouping
        else one_group(len(dataset.frame))  # no protected attribute: one group of every row
    )
    assignment = _assign_splits(dataset, groups.ids, options)
    dropped = (
        {dataset.column(g.attribute) for g in options.grouping} if options.drop_protected else set()
    )
    numeric = tuple(c for c in dataset.numeric if c not in dropped)
    categorical = tuple(c for c in dataset.categorical if c not in dropped)
    split_rows = [np.flatnonzero(assignment == s) for s in range(3)]
    encoder = fit_encoder(
        dataset.frame.iloc[split_rows[0]],
        numeric,
        categorical,
        dataset.value_labels,
        options.min_category_count,
    )
    names = encoder.feature_names
    if options.cross_terms:
        names = cross_term_names(names, groups.names)
    sparse_design = len(dataset.frame) * len(names) * 8 > SPARSE_FROM_BYTES
    subgroups, members = _subgroups(dataset, options.subgroups, assignment)
    encode = encoder.transform_sparse if sparse_design else encoder.transform
    # split by split, so that the whole design is never held besides its parts
    designs = [encode(dataset.frame.iloc[rows]) for rows in split_rows]
    # the training rows' own numbers: the design holds a blank as the mean, and a blank can leak
    numbers = dataset.frame.iloc[split_rows[0], dataset.frame.columns.get_indexer(list(numeric))]
    leaks = leakage_warnings(designs[0], y[split_rows[0]], encoder, dataset.task, numbers)
    if options.cross_terms:
        designs = [
            add_group_cross_terms(X, groups.ids[rows], len(groups.names))
            for X, rows in zip(designs, split_rows, strict=True)
        ]
    parts = [
        SplitArrays(
            X=X,
            y=y[rows],
            groups=groups.ids[rows],
            members=None if members is None else members[rows],
        )
        for X, rows in zip(designs, split_rows, strict=True)
    ]
    _check_groups_in_train(parts[0], groups.names)
    notes = [*dataset.notes, *groups.notes]
    if dataset.fixed_test is not None:
        notes.append("the published test split is kept as the test set")
    return Prepared(
        train=parts[0],
        val=parts[1],
        test=parts[2],
        feature_names=names,
        group_names=groups.names,
        encoder=encoder,
        dataset_name=dataset.name,
        label_name=dataset.label_name,
        synthetic=dataset.synthetic,
        missing_features=dataset.missing_features,
        warnings=(*groups.warnings, *leaks),
        notes=tuple(notes),
        key=key,
        subgroups=subgroups,
        task=dataset.task,
        group_map=groups.map,
    )


def _label(dataset: Dataset) -> np.ndarray:
    """The label as the prepared arrays hold it: int8 0/1 for classification, float64 for
    regression (never cast to an integer), whose values must all be numbers."""
    if dataset.task is Task.CLASSIFICATION:
        return dataset.label.astype(np.int8)
    y = np.asarray(dataset.label, dtype=np.float64)
    if not np.isfinite(y).all():
        raise UserError(
            f"{dataset.name}: the label '{dataset.label_name}' is blank or infinite "
            f"in {int((~np.isfinite(y)).sum()):,} rows; a real-valued label needs a "
            "number in every row"
        )
    return y


def _subgroups(dataset: Dataset, spec: SubgroupSpec | None, assignment: np.ndarray):
    """The subgroups of `spec`, thresholds from the training rows, and every row's membership
    (rows × subgroups, sparse); (None, None) without a spec."""
    if spec is None:
        return None, None
    columns = tuple(dataset.column(a) for a in spec.attributes)
    values = attribute_values(dataset.frame, columns)
    subgroups = threshold_subgroups(values[assignment == 0], spec)
    return subgroups, subgroups.membership(values)


def _assign_splits(dataset: Dataset, group_ids: np.ndarray, options: PrepareOptions) -> np.ndarray:
    """Stratified by group × label for a binary label, by group alone for a real-valued one."""
    labels = dataset.label if dataset.task is Task.CLASSIFICATION else None
    strata = strata_of(group_ids, labels)
    if dataset.fixed_test is None:
        return stratified_split(strata, options.split, options.seed)
    train_share, val_share, _ = options.split
    pool = ~dataset.fixed_test
    within = stratified_split(
        strata[pool],
        (train_share / (train_share + val_share), val_share / (train_share + val_share), 0.0),
        options.seed,
    )
    assignment = np.full(len(strata), 2, dtype=np.int8)
    assignment[pool] = within
    return assignment


def _check_groups_in_train(train: SplitArrays, names: tuple[str, ...]) -> None:
    present = np.bincount(train.groups, minlength=len(names))
    empty = [names[g] for g in np.flatnonzero(present == 0)]
    if empty:
        raise UserError(
            f"no training rows for group(s) {', '.join(empty)}; raise the training share"
        )
