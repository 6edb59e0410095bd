"""Feature columns that alone predict the label almost perfectly: the answer may have leaked in.

Each source column (its one-hot block taken together) is scored on the training rows alone.
A binary label: by the AUC of the column as a score, numbers by their value, categories by their
training positive rate (the best ordering of the categories, so a copy of the label in any
spelling scores 1); either direction counts, so a column is reported when max(AUC, 1 − AUC) ≥
`LEAK_AUC`. A real-valued label: numbers by |rank correlation| with the label (a copy of it, or
any monotone transform, scores 1), categories by the correlation ratio η (the share of the
label's spread the category means explain, as a correlation: 1 when the category fixes the
label); a column is reported when that is ≥ `LEAK_CORRELATION`.

Two kinds of numeric column give the label away without their value being in the label's order,
so the numbers are read from the training rows themselves when they are at hand (the design
holds a blank number as the training mean): a column blank for one class (an amount recovered,
known only for loans that defaulted) is scored with its blanks below every number and above
them, the better of the two; and a column of at most `FEW_VALUES` distinct values (a status
code whose odd values mean yes) is scored like categories, by the best order of its values, its
values rarer than `MIN_LEVEL_ROWS` pooled as the encoder pools rare categories.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from scipy import sparse

from engine.data.encoding import Design, Encoder
from engine.task import Task

LEAK_AUC = 0.98  # real predictors of a noisy social outcome stay far below; a copied label is 1
LEAK_CORRELATION = 0.98  # likewise
FEW_VALUES = 20  # distinct values (a blank counting as one) of a number scored as categories
MIN_LEVEL_ROWS = 5  # as the encoder's `min_category_count`: a value seen once "predicts" its row

ORDERED, BLANKS, LEVELS = "ordered", "ordered with blanks", "levels"  # how a column is scored


def column_aucs(
    X: Design, y: np.ndarray, encoder: Encoder, frame: pd.DataFrame | None = None
) -> dict[str, float]:
    """max(AUC, 1 − AUC) of each of the encoder's source columns alone as a score for `y`.

    `X` holds rows encoded by `encoder` (its columns first, as `Encoder.transform` writes them);
    `frame`, when given, the same rows' raw numeric columns (their blanks, which `X` has lost).
    """
    positive = np.asarray(y) == 1
    return {
        name: _column_auc(codes, positive, kind)
        for name, codes, kind in _column_codes(X, encoder, frame)
    }


def column_correlations(
    X: Design, y: np.ndarray, encoder: Encoder, frame: pd.DataFrame | None = None
) -> dict[str, float]:
    """For a real-valued `y`: |rank correlation| of each numeric source column with it, the
    correlation ratio η of each categorical one (`X` and `frame` as in `column_aucs`)."""
    y = np.asarray(y, dtype=np.float64)
    return {
        name: _column_correlation(codes, y, kind)
        for name, codes, kind in _column_codes(X, encoder, frame)
    }


def leakage_warnings(
    X: Design, y: np.ndarray, encoder: Encoder, task: Task, frame: pd.DataFrame | None = None
) -> list[str]:
    """One sentence for every column whose score reaches the cut, in the encoder's order."""
    if task is Task.CLASSIFICATION:
        scores, measure, cut = column_aucs(X, y, encoder, frame), "AUC", LEAK_AUC
    else:
        scores = column_correlations(X, y, encoder, frame)
        measure, cut = "correlation", LEAK_CORRELATION
    return [
        f"column '{name}' alone predicts the label ({measure} {score:.2f}): it may leak the answer"
        for name, score in scores.items()
        if score >= cut
    ]


def _column_auc(codes: np.ndarray, positive: np.ndarray, kind: str) -> float:
    if kind == BLANKS:  # the blanks hold the top code; try them below every number too
        below = np.where(codes == codes.max(), -1, codes) + 1
        return max(_auc(codes, positive, by_rate=False), _auc(below, positive, by_rate=False))
    return _auc(codes, positive, by_rate=kind == LEVELS)


def _column_correlation(codes: np.ndarray, y: np.ndarray, kind: str) -> float:
    if kind == LEVELS:
        return _eta(codes, y)
    if kind == BLANKS:
        below = np.where(codes == codes.max(), -1, codes) + 1
        return max(_rank_correlation(codes, y), _rank_correlation(below, y))
    return _rank_correlation(codes, y)


def _column_codes(
    X: Design, encoder: Encoder, frame: pd.DataFrame | None
) -> Iterator[tuple[str, np.ndarray, str]]:
    """Each source column as integer codes, with how it is scored (ORDERED, BLANKS, LEVELS): a
    number's code is the rank of its distinct value (blanks, when `frame` shows them, above all
    of them), a category's the position of its one-hot column. `X` may be dense or CSR
    (`engine.data.encoding.Design`)."""
    for j, column in enumerate(encoder.numeric):
        if frame is not None and column.name in frame.columns:
            values = pd.to_numeric(frame[column.name], errors="coerce").to_numpy(dtype=float)
        else:
            values = _column(X, j)
        yield (column.name, *_number_codes(values))
    start = len(encoder.numeric)
    for column in encoder.categorical:
        stop = start + len(column.categories)
        unseen = len(column.categories)  # rows of a value training never had (no RARE column)
        yield column.name, _block_codes(X, start, stop, unseen), LEVELS
        start = stop


def _number_codes(values: np.ndarray) -> tuple[np.ndarray, str]:
    """Ranks of the distinct values, blanks above them; a few values as pooled levels."""
    present = ~np.isnan(values)
    distinct, ranks = np.unique(values[present], return_inverse=True)
    codes = np.full(len(values), len(distinct), dtype=np.int64)
    codes[present] = ranks
    blanks = not present.all()
    if len(distinct) + blanks <= FEW_VALUES:
        return _pool_rare(codes), LEVELS
    return codes, BLANKS if blanks else ORDERED


def _pool_rare(codes: np.ndarray) -> np.ndarray:
    """Codes of fewer than MIN_LEVEL_ROWS rows share one code."""
    counts = np.bincount(codes)
    rare = counts < MIN_LEVEL_ROWS
    if not rare[counts > 0].any():
        return codes
    return np.where(rare[codes], len(counts), codes)


def _column(X: Design, j: int) -> np.ndarray:
    return X[:, [j]].toarray().ravel() if sparse.issparse(X) else X[:, j]


def _block_codes(X: Design, start: int, stop: int, unseen: int) -> np.ndarray:
    """The position of each row's 1 in the one-hot columns start..stop-1, `unseen` for none."""
    if not sparse.issparse(X):
        block = X[:, start:stop]
        return np.where(block.any(axis=1), block.argmax(axis=1), unseen)
    block = sparse.csr_array(X[:, start:stop])
    block.eliminate_zeros()
    codes = np.full(block.shape[0], unseen, dtype=np.int64)
    filled = np.diff(block.indptr) > 0
    codes[filled] = block.indices[block.indptr[:-1][filled]]  # at most one entry per row
    return codes


def _auc(codes: np.ndarray, positive: np.ndarray, by_rate: bool) -> float:
    """AUC of scores given as integer codes: ordered by code, or by each code's positive rate.

    Ties count 1/2 (Mann–Whitney): AUC = Σ_j pos_j (neg below j + neg_j / 2) / (P · N).
    """
    pos = np.bincount(codes[positive], minlength=codes.max(initial=0) + 1).astype(float)
    neg = np.bincount(codes[~positive], minlength=len(pos)).astype(float)
    if pos.sum() == 0 or neg.sum() == 0:
        return 0.5
    if by_rate:
        order = np.argsort(pos / np.maximum(pos + neg, 1), kind="stable")
        pos, neg = pos[order], neg[order]
    below = np.cumsum(neg) - neg
    auc = float(np.dot(pos, below + neg / 2) / (pos.sum() * neg.sum()))
    return max(auc, 1.0 - auc)


def _rank_correlation(codes: np.ndarray, y: np.ndarray) -> float:
    """|Pearson correlation| of the codes (ranks of a column's distinct values) and the ranks
    of y's distinct values; 0 when either is constant."""
    ranks = np.unique(y, return_inverse=True)[1].astype(float)
    a, b = codes - codes.mean(), ranks - ranks.mean()
    spread = np.sqrt(np.dot(a, a) * np.dot(b, b))
    return float(abs(np.dot(a, b)) / spread) if spread > 0 else 0.0


def _eta(codes: np.ndarray, y: np.ndarray) -> float:
    """√(Σ_c n_c (ȳ_c − ȳ)² / Σ_i (y_i − ȳ)²): 1 when each code fixes y; 0 for a constant y."""
    deviations = y - y.mean()
    total = np.dot(deviations, deviations)
    if total == 0:
        return 0.0
    sizes = np.bincount(codes)
    sums = np.bincount(codes, deviations)
    between = np.sum(sums[sizes > 0] ** 2 / sizes[sizes > 0])
    return float(np.sqrt(between / total))
