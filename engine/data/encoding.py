"""Feature encoding, fitted on the training split only: one-hot codes, standardised numbers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import sparse

MISSING = "(missing)"
RARE = "(other)"
CHUNK_ROWS = 1 << 18  # rows encoded at a time into a sparse matrix; bounds the per-row scratch

Design = np.ndarray | sparse.csr_array  # dense float64, or CSR float32 for large one-hot data


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

    @property
    def width(self) -> int:
        """Columns of an encoded row."""
        return len(self.numeric) + sum(len(c.categories) for c in self.categorical)

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Rows of `frame` as a dense float64 matrix; missing numbers become the training mean."""
        X = np.zeros((len(frame), self.width))
        X[:, : len(self.numeric)] = self._numbers(frame)
        columns = self._one_hot_columns(frame)
        rows, blocks = np.nonzero(columns >= 0)
        X[rows, columns[rows, blocks]] = 1.0
        return X

    def transform_sparse(
        self, frame: pd.DataFrame, chunk_rows: int = CHUNK_ROWS
    ) -> sparse.csr_array:
        """The rows of `transform` as a float32 CSR matrix, built from the category codes and the
        numbers `chunk_rows` rows at a time, never as a dense matrix."""
        pieces = [
            self._sparse_rows(frame.iloc[start : start + chunk_rows])
            for start in range(0, len(frame), chunk_rows)
        ]
        data = np.concatenate([p[0] for p in pieces] or [np.zeros(0, np.float32)])
        indices = np.concatenate([p[1] for p in pieces] or [np.zeros(0, np.int32)])
        per_row = np.concatenate([p[2] for p in pieces] or [np.zeros(0, np.int64)])
        index_type = np.int32 if len(data) < np.iinfo(np.int32).max else np.int64
        indptr = np.concatenate([[0], np.cumsum(per_row)]).astype(index_type)
        return sparse.csr_array(
            (data, indices.astype(index_type, copy=False), indptr), shape=(len(frame), self.width)
        )

    def _sparse_rows(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(values, column indices, entries per row) of `frame`'s nonzero entries, row by row in
        increasing column order (numbers first, then one column per category block)."""
        numbers = self._numbers(frame).astype(np.float32)
        columns = self._one_hot_columns(frame)
        n_numeric = len(self.numeric)
        values = np.hstack([numbers, np.ones(columns.shape, dtype=np.float32)])
        indices = np.hstack([np.broadcast_to(np.arange(n_numeric), numbers.shape), columns])
        kept = np.hstack([numbers != 0, columns >= 0])
        return values[kept], indices[kept].astype(np.int32), kept.sum(axis=1)

    def _numbers(self, frame: pd.DataFrame) -> np.ndarray:
        """The numeric columns standardised, (rows, numeric columns) float64; missing ones 0."""
        numbers = np.zeros((len(frame), len(self.numeric)))
        for j, column in enumerate(self.numeric):
            values = pd.to_numeric(frame[column.name], errors="coerce").to_numpy(dtype=float)
            numbers[:, j] = np.nan_to_num((values - column.mean) / column.std, nan=0.0)
        return numbers

    def _one_hot_columns(self, frame: pd.DataFrame) -> np.ndarray:
        """Per row and categorical column, the encoded column its value sets to 1, (rows,
        categorical columns) int64; -1 for a value training never had when there is no RARE."""
        columns = np.full((len(frame), len(self.categorical)), -1, dtype=np.int64)
        start = len(self.numeric)
        for k, column in enumerate(self.categorical):
            codes, keys = _factorized_keys(frame[column.name])
            positions = pd.Index(column.categories).get_indexer(keys).astype(np.int64)
            if RARE in column.categories:
                positions[positions < 0] = column.categories.index(RARE)
            positions[positions >= 0] += start
            columns[:, k] = positions[codes]
            start += len(column.categories)
        return columns

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
        values = pd.to_numeric(train[name], errors="coerce").astype(np.float64)
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


def add_group_cross_terms(X: Design, groups: np.ndarray, n_groups: int) -> Design:
    """Append group indicators γ and products γ·x (paper 003, §7.1: features (1, x, γ, γ·x)).

    Group 0 is the reference, so G − 1 indicators are added; the constant 1 is the model's bias.
    A sparse X gives a CSR matrix of its dtype (each row's products sit in its own group's block).
    """
    if sparse.issparse(X):
        return _sparse_cross_terms(sparse.csr_array(X), np.asarray(groups), n_groups)
    indicators = (groups[:, None] == np.arange(1, n_groups)[None, :]).astype(X.dtype)
    products = (indicators[:, :, None] * X[:, None, :]).reshape(
        len(X), indicators.shape[1] * X.shape[1]
    )
    return np.ascontiguousarray(np.hstack([X, indicators, products]))


def _sparse_cross_terms(X: sparse.csr_array, groups: np.ndarray, n_groups: int) -> sparse.csr_array:
    n = X.shape[0]
    rows = np.flatnonzero(groups > 0)
    indicators = sparse.csr_array(
        (np.ones(len(rows), dtype=X.dtype), (rows, groups[rows] - 1)), shape=(n, n_groups - 1)
    )
    products = []
    for g in range(1, n_groups):
        members = np.flatnonzero(groups == g)
        keep = sparse.csr_array(
            (np.ones(len(members), dtype=X.dtype), (members, members)), shape=(n, n)
        )
        products.append(keep @ X)  # the rows of group g, the others empty
    return sparse.hstack([X, indicators, *products], format="csr", dtype=X.dtype)


def cross_term_names(
    feature_names: tuple[str, ...], group_names: tuple[str, ...]
) -> tuple[str, ...]:
    extra = [f"[{g}]" for g in group_names[1:]]
    products = [f"[{g}]·{f}" for g in group_names[1:] for f in feature_names]
    return tuple(feature_names) + tuple(extra) + tuple(products)


def _keys(values: pd.Series) -> np.ndarray:
    """Values as strings, whole floats written as integers (ACS codes read as 1.0), NaN as MISSING."""
    codes, keys = _factorized_keys(values)
    return keys[codes]


def _factorized_keys(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, keys): each row's index into `keys`, the distinct values as `_keys` writes them;
    only the distinct values are written out, so a million rows cost what their few values do."""
    codes, uniques = pd.Series(values).factorize(use_na_sentinel=True)
    keys = _written(pd.Series(np.asarray(uniques), dtype=values.dtype))
    if (codes < 0).any():
        keys = np.append(keys, np.array([MISSING], dtype=object))
        codes = np.where(codes < 0, len(keys) - 1, codes)
    return codes, keys


def _written(values: pd.Series) -> np.ndarray:
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
