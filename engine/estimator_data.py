"""A scikit-learn style `fit(X, y, sensitive_features=...)` as the engine's data: a `Dataset`
prepared by `engine.data.prepare`, as the app prepares a data set.

Numeric columns of X are standardised and the other columns (text, categories, booleans)
one-hot encoded by the app's encoder (`engine.data.encoding`), fitted on the training rows. The
protected groups are the values of the sensitive features (`GroupingSpec(mode="all")`, no
merging of small groups), the intersection of their values when there are several. Rows are
matched by position, never by a pandas index, so that a row's sensitive features stay with it
whatever index X carries (e.g. after cross-validation slicing).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.group_map import GroupMap
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.errors import UserError
from engine.task import Task

DATASET_NAME = "X"  # what messages call the data ("data set X's label 'y'")
SENSITIVE = "sensitive"  # the name of sensitive features given as values, unless they have one


class InputError(UserError, ValueError):
    """Bad input to an estimator: a `UserError` with a sentence for the user, and the
    ValueError that scikit-learn and its callers expect of bad input."""


def feature_frame(X: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """X with the column names `names` and its rows numbered 0, 1, …, n − 1."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"X has repeated column names: {', '.join(repeated)}")
    return X.set_axis(list(names), axis=1).reset_index(drop=True)


def positional_frame(values: np.ndarray, names: Sequence[str]) -> pd.DataFrame:
    """A 2-D array as a frame whose columns are `names`."""
    return pd.DataFrame(values, columns=list(names))


def column_kinds(frame: pd.DataFrame) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(numeric, categorical) column names: numbers are standardised, text, categories and
    booleans one-hot encoded; any other kind of column (dates, …) is refused."""
    numeric, categorical = [], []
    for name, values in frame.items():
        dtype = values.dtype
        if pd.api.types.is_bool_dtype(dtype) or _is_text_or_category(dtype):
            categorical.append(name)
        elif pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
            numeric.append(name)
        else:
            raise InputError(
                f"column '{name}' of X holds {dtype} values; the columns of X are "
                "numbers, text, categories or booleans"
            )
    return tuple(numeric), tuple(categorical)


def _is_text_or_category(dtype) -> bool:
    return (
        isinstance(dtype, pd.CategoricalDtype)
        or pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
    )


def check_numbers(frame: pd.DataFrame, numeric: Sequence[str]) -> None:
    """Refuse a numeric column with a missing (NaN), infinite or non-numeric value: the
    encoder would silently put the training mean in its place. (A text or category column may
    have missing values: they are a category of their own.)"""
    for name in numeric:
        values = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            raise InputError(
                f"column '{name}' of X has {int(bad.sum()):,} NaN, infinite or "
                "non-numeric values; give a finite number in every row (or "
                "impute them first)"
            )


def sensitive_frame(
    sensitive_features: object, features: pd.DataFrame, named: bool
) -> pd.DataFrame:
    """The protected columns `sensitive_features` gives for the rows of `features`, one column
    per attribute (several: their intersection).

    `sensitive_features` is a column name of X or a list of them (only when X has column names,
    `named`), or values: a 1-D array or Series (one attribute) or a 2-D array or DataFrame, one
    row per row of X. Columns of X keep their names; given values keep their own name when it
    is free, else are called "sensitive" ("sensitive 1", … for several)."""
    if _is_column_names(sensitive_features, features):
        if not named:
            raise InputError(
                f"sensitive_features names columns ({sensitive_features!r}), but X "
                "is an array without column names: pass the values themselves"
            )
        names = [sensitive_features] if isinstance(sensitive_features, str) else sensitive_features
        missing = [n for n in names if n not in features.columns]
        if missing:
            raise InputError(
                f"sensitive_features names {', '.join(map(repr, missing))}, not a "
                f"column of X; the columns are {', '.join(features.columns)}"
            )
        return features[list(names)]
    values = _sensitive_values(sensitive_features)
    if len(values) != len(features):
        raise InputError(
            f"sensitive_features has {len(values):,} rows and X {len(features):,}; "
            "give one row of sensitive features per row of X"
        )
    taken = set(features.columns)
    names = []
    for j, given in enumerate(values.columns):
        name = given if isinstance(given, str) and given not in taken else _free_name(j, taken)
        taken.add(name)
        names.append(name)
    return values.set_axis(names, axis=1)


def _is_column_names(value: object, features: pd.DataFrame) -> bool:
    """A name, or a list or tuple of names that are all columns of X (a list of values that
    are not all column names is values)."""
    if isinstance(value, str):
        return True
    return (
        isinstance(value, list | tuple)
        and len(value) > 0
        and all(isinstance(v, str) and v in features.columns for v in value)
    )


def _sensitive_values(value: object) -> pd.DataFrame:
    """Sensitive features given as values, as a frame of one column per attribute with rows
    numbered from 0."""
    if value is None:
        raise InputError("sensitive_features is None; give the protected attribute(s)")
    if isinstance(value, pd.DataFrame):
        frame = value.copy()
    elif isinstance(value, pd.Series):
        frame = value.to_frame()
    else:
        array = np.asarray(value, dtype=object)
        if array.ndim == 1:
            array = array[:, None]
        if array.ndim != 2 or array.shape[1] == 0:
            raise InputError(
                f"sensitive_features must be a column name, a list of column "
                f"names, a 1-D array or a 2-D array, not an array of shape "
                f"{array.shape}"
            )
        frame = pd.DataFrame(array, columns=[None] * array.shape[1])
    return frame.reset_index(drop=True)


def _free_name(index: int, taken: set[str], base: str = SENSITIVE) -> str:
    name = base if index == 0 else f"{base} {index}"
    while name in taken:
        name += "_"
    return name


def training_dataset(
    features: pd.DataFrame,
    protected: pd.DataFrame | None,
    label: np.ndarray,
    label_name: str,
    task: Task,
) -> Dataset:
    """The data to prepare: `features` (every column of X, encoded), the protected columns
    (`sensitive_frame`, which may be columns of X too; None: none) and the label (0/1 for a
    classifier, real numbers for a regression)."""
    numeric, categorical = column_kinds(features)
    check_numbers(features, numeric)
    protected = features.iloc[:, :0] if protected is None else protected
    extra = protected.drop(columns=[c for c in protected.columns if c in features.columns])
    return Dataset(
        name=DATASET_NAME,
        frame=pd.concat([features, extra], axis=1),
        label=label,
        numeric=numeric,
        categorical=categorical,
        protected=tuple(protected.columns),
        label_name=label_name,
        task=task,
    )


def preparation(
    dataset: Dataset, validation_fraction: float, seed: int, min_category_count: int
) -> PrepareOptions:
    """Training and validation rows in `validation_fraction` (no test rows), groups by the
    values of the protected columns, none merged whatever its size; one group of every row
    without protected columns."""
    return PrepareOptions(
        grouping=tuple(GroupingSpec(name, mode="all") for name in dataset.protected),
        split=(1.0 - validation_fraction, validation_fraction, 0.0),
        seed=seed,
        min_group_size=1,
        small_groups="refuse",
        min_category_count=min_category_count,
    )


def group_ids(
    group_map: GroupMap, sensitive_features: object, features: pd.DataFrame, named: bool
) -> np.ndarray:
    """Each row's group id by the map learnt at fit (`Prepared.group_map`), from sensitive
    features given as at fit: columns of X or values of as many attributes, taken in order."""
    protected = sensitive_frame(sensitive_features, features, named)
    if protected.shape[1] != len(group_map.columns):
        raise InputError(
            f"sensitive_features gives {protected.shape[1]} attribute(s); the "
            f"model was fitted with {len(group_map.columns)} "
            f"({', '.join(group_map.columns)})"
        )
    return group_map.ids(protected.set_axis(list(group_map.columns), axis=1))
