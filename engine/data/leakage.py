"""Feature columns that alone predict the label almost perfectly: the answer may have leaked in.

Each source column (its one-hot block taken together) is scored on the training rows alone.
A binary label: by the AUC of the column as a score, numbers by their value, categories by their
training positive rate (the best ordering of the categories, so a copy of the label in any
spelling scores 1); either direction counts, so a column is reported when max(AUC, 1 − AUC) ≥
`LEAK_AUC`. A real-valued label: numbers by |rank correlation| with the label (a copy of it, or
any monotone transform, scores 1), categories by the correlation ratio η (the share of the
label's spread the category means explain, as a correlation: 1 when the category fixes the
label); a column is reported when that is ≥ `LEAK_CORRELATION`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy import sparse

from engine.data.encoding import Design, Encoder
from engine.task import Task

LEAK_AUC = 0.98  # real predictors of a noisy social outcome stay far below; a copied label is 1
LEAK_CORRELATION = 0.98  # likewise


def column_aucs(X: Design, y: np.ndarray, encoder: Encoder) -> dict[str, float]:
    """max(AUC, 1 − AUC) of each of the encoder's source columns alone as a score for `y`.

    `X` holds rows encoded by `encoder` (its columns first, as `Encoder.transform` writes them).
    """
    positive = np.asarray(y) == 1
    return {name: _auc(codes, positive, by_rate=categorical)
            for name, codes, categorical in _column_codes(X, encoder)}  # fmt: skip


def column_correlations(X: Design, y: np.ndarray, encoder: Encoder) -> dict[str, float]:
    """For a real-valued `y`: |rank correlation| of each numeric source column with it, the
    correlation ratio η of each categorical one (`X` as in `column_aucs`)."""
    y = np.asarray(y, dtype=np.float64)
    return {name: _eta(codes, y) if categorical else _rank_correlation(codes, y)
            for name, codes, categorical in _column_codes(X, encoder)}  # fmt: skip


def leakage_warnings(X: Design, y: np.ndarray, encoder: Encoder, task: Task) -> list[str]:
    if task is Task.CLASSIFICATION:
        scores, measure, cut = column_aucs(X, y, encoder), "AUC", LEAK_AUC
    else:
        scores, measure, cut = column_correlations(X, y, encoder), "correlation", LEAK_CORRELATION
    return [
        f"column '{name}' alone predicts the label ({measure} {score:.2f}): it may leak the answer"
        for name, score in scores.items()
        if score >= cut
    ]


def _column_codes(X: Design, encoder: Encoder) -> Iterator[tuple[str, np.ndarray, bool]]:
    """Each source column as integer codes, with whether it is categorical: a number's code is
    the rank of its distinct value, a category's the position of its one-hot column. `X` may be
    dense or CSR (`engine.data.encoding.Design`)."""
    for j, column in enumerate(encoder.numeric):
        _, codes = np.unique(_column(X, j), return_inverse=True)
        yield column.name, codes, False
    start = len(encoder.numeric)
    for column in encoder.categorical:
        stop = start + len(column.categories)
        unseen = len(column.categories)  # rows of a value training never had (no RARE column)
        yield column.name, _block_codes(X, start, stop, unseen), True
        start = stop


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
