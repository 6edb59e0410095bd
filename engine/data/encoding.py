"""Feature encoding, fitted on the training split only: one-hot codes, standardised numbers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

MISSING = "(missing)"
RARE = "(other)"


@dataclass(frozen=True)
class NumericColumn:
    name: str
    mean: float
    std: float


@dataclass(frozen=True)
class CategoricalColumn:
    """Categories seen at least `min_category_count` times in training get a column each;
    rarer and unseen values share one RARE column (if training had rare values at all)."""

    name: str
    categories: tuple[str, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Encoder:
    numeric: tuple[NumericColumn, ...]
    categorical: tuple[CategoricalColumn, ...]

    @property
    def feature_names(self) -> tuple[str, ...]:
        names = [c.name for c in self.numeric]
        for column in self.categorical:
            names += [f"{column.name}={label}" for label in column.labels]
        return tuple(names)

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Rows of `frame` as a dense float64 matrix; missing numbers become the training mean."""
        width = len(self.numeric) + sum(len(c.categories) for c in self.categorical)
        X = np.zeros((len(frame), width))
        for j, column in enumerate(self.numeric):
            values = pd.to_numeric(frame[column.name], errors="coerce").to_numpy(dtype=float)
            standardised = (values - column.mean) / column.std
            X[:, j] = np.nan_to_num(standardised, nan=0.0)
        start = len(self.numeric)
        for column in self.categorical:
            keys = _keys(frame[column.name])
            codes = pd.Index(column.categories).get_indexer(keys).astype(np.int64)
            if RARE in column.categories:
                codes[codes < 0] = column.categories.index(RARE)
            seen = codes >= 0
            X[np.flatnonzero(seen), start + codes[seen]] = 1.0
            start += len(column.categories)
        return X

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping) -> Encoder:
        return cls(
            numeric=tuple(NumericColumn(**c) for c in data["numeric"]),
            categorical=tuple(
                CategoricalColumn(c["name"], tuple(c["categories"]), tuple(c["labels"]))
                for c in data["categorical"]
            ),
        )


def fit_encoder(
    train: pd.DataFrame,
    numeric: tuple[str, ...],
    categorical: tuple[str, ...],
    value_labels: Mapping[str, Mapping[object, str]],
    min_category_count: int = 5,
) -> Encoder:
    numeric_columns = []
    for name in numeric:
        values = pd.to_numeric(train[name], errors="coerce")
        mean = float(values.mean()) if values.notna().any() else 0.0
        std = float(values.std(ddof=0)) if values.notna().sum() > 1 else 0.0
        numeric_columns.append(NumericColumn(name, mean, std if std > 0 else 1.0))
    categorical_columns = []
    for name in categorical:
        counts = pd.Series(_keys(train[name])).value_counts()
        kept = sorted(counts.index[counts >= min_category_count], key=_natural)
        categories = tuple(kept) + ((RARE,) if (counts < min_category_count).any() else ())
        labels = tuple(_label(key, value_labels.get(name, {})) for key in categories)
        categorical_columns.append(CategoricalColumn(name, categories, labels))
    return Encoder(tuple(numeric_columns), tuple(categorical_columns))


def add_group_cross_terms(X: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Append group indicators γ and products γ·x (paper 003, §7.1: features (1, x, γ, γ·x)).

    Group 0 is the reference, so G − 1 indicators are added; the constant 1 is the model's bias.
    """
    indicators = (groups[:, None] == np.arange(1, n_groups)[None, :]).astype(X.dtype)
    products = (indicators[:, :, None] * X[:, None, :]).reshape(len(X), -1)
    return np.ascontiguousarray(np.hstack([X, indicators, products]))


def cross_term_names(
    feature_names: tuple[str, ...], group_names: tuple[str, ...]
) -> tuple[str, ...]:
    extra = [f"[{g}]" for g in group_names[1:]]
    products = [f"[{g}]·{f}" for g in group_names[1:] for f in feature_names]
    return tuple(feature_names) + tuple(extra) + tuple(products)


def _keys(values: pd.Series) -> np.ndarray:
    """Values as strings, whole floats written as integers (ACS codes read as 1.0), NaN as MISSING."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        numbers = pd.Series(values.to_numpy(dtype=float))
        text = numbers.astype(str)
        whole = numbers.notna() & (numbers % 1 == 0)
        text[whole] = numbers[whole].astype(np.int64).astype(str)
        text[numbers.isna()] = MISSING
        return text.to_numpy(dtype=object)
    text = values.astype("string").fillna(MISSING)
    return text.to_numpy(dtype=object)


def _natural(key: str) -> tuple:
    try:
        return (0, float(key), key)
    except ValueError:
        return (1, 0.0, key)


def _label(key: str, value_labels: Mapping[object, str]) -> str:
    try:
        number = float(key)
    except ValueError:
        return value_labels.get(key, key)
    return value_labels.get(int(number) if number.is_integer() else number, key)
