"""Feature columns that alone predict the label almost perfectly: the answer may have leaked in.

Each source column (its one-hot block taken together) is scored on the training rows by the AUC
of that column alone: numbers by their value, categories by their training positive rate (the
best ordering of the categories, so a copy of the label in any spelling scores 1). Either
direction counts, so a column is reported when max(AUC, 1 − AUC) ≥ `LEAK_AUC`.
"""

from __future__ import annotations

import numpy as np

from engine.data.encoding import Encoder

LEAK_AUC = 0.98  # real predictors of a noisy social outcome stay far below; a copied label is 1


def column_aucs(X: np.ndarray, y: np.ndarray, encoder: Encoder) -> dict[str, float]:
    """max(AUC, 1 − AUC) of each of the encoder's source columns alone as a score for `y`.

    `X` holds rows encoded by `encoder` (its columns first, as `Encoder.transform` writes them).
    """
    positive = np.asarray(y) == 1
    aucs = {}
    for j, column in enumerate(encoder.numeric):
        _, codes = np.unique(X[:, j], return_inverse=True)
        aucs[column.name] = _auc(codes, positive, by_rate=False)
    start = len(encoder.numeric)
    for column in encoder.categorical:
        block = X[:, start : start + len(column.categories)]
        start += len(column.categories)
        unseen = len(column.categories)  # rows of a value training never had (no RARE column)
        codes = np.where(block.any(axis=1), block.argmax(axis=1), unseen)
        aucs[column.name] = _auc(codes, positive, by_rate=True)
    return aucs


def leakage_warnings(X: np.ndarray, y: np.ndarray, encoder: Encoder) -> list[str]:
    return [
        f"column '{name}' alone predicts the label (AUC {auc:.2f}): it may leak the answer"
        for name, auc in column_aucs(X, y, encoder).items()
        if auc >= LEAK_AUC
    ]


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
