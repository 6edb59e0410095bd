"""Whether a model is worth showing, whatever its fairness (pure; no torch, no Streamlit): a
constant score, accuracy not above always predicting the majority class, an AUC no better than
chance, R² ≤ 0 (`degenerate`); an accuracy its split cannot tell from the majority's
(`near_majority`); a held-out score too good to be true (`leak_finding`); scores that take few
distinct values (`few_scores`). `engine.verdict` puts these beside a run's fairness judgement."""

from __future__ import annotations

import math

DEGENERATE_MARGIN = 1e-9  # accuracy must exceed the majority rate by more than rounding
CONSTANT_SCORE_STD = 1e-12
# scores with at most this many distinct values put most samples in ties, whose order is
# arbitrary: pSP and the other measures on ranks or quantiles of the scores then move in coarse
# steps. fairlearn's randomised classifiers, scored by their probability P(ŷ = 1 | x), have a
# few: a mixture of k classifiers at most 2^k values (k is a handful), two randomised thresholds
# per group at most four values per group.
FEW_DISTINCT_SCORES = 20
# held-out AUC or accuracy from which a model is flagged as a likely leak: a copy of the label
# among the features, or a value known only after the outcome, predicts it (almost) perfectly
LEAK_SCORE = 0.995
HELD_OUT = ("test", "val")
LOW, HIGH = "_low", "_high"  # a metric's interval names


def few_scores(distinct: float | None) -> bool:
    """Whether a model's scores take more than one value (one: a constant score, degenerate) but
    no more than FEW_DISTINCT_SCORES (`distinct` is its "distinct_scores" metric, None if
    unknown)."""
    return distinct is not None and 1 < distinct <= FEW_DISTINCT_SCORES


def few_scores_words(distinct: float) -> str:
    """Why few distinct scores matter, as a clause: "its scores take only 3 distinct values: ..."."""
    return (
        f"its scores take only {distinct:.0f} distinct values: samples tied at a value "
        "have no order among them, so pSP and other measures on ranks or quantiles of the "
        "scores are coarse"
    )


def leak_finding(
    metrics: dict[str, dict[str, float | None]], thresholded: bool = True
) -> str | None:
    """Why a model is likely to have been given the answer, or None: the first held-out split
    (test, then validation) whose AUC, or accuracy, is at least LEAK_SCORE. The accuracy counts
    only for a model judged at its threshold and where always predicting the majority class
    scores below LEAK_SCORE (else a rare outcome alone explains it)."""
    for split in HELD_OUT:
        values = metrics.get(split) or {}
        auc, accuracy = finite_number(values.get("auc")), finite_number(values.get("accuracy"))
        majority = finite_number(values.get("majority"))
        high = []
        if (
            thresholded
            and accuracy is not None
            and accuracy >= LEAK_SCORE
            and (majority is None or majority < LEAK_SCORE)
        ):
            high.append(f"accuracy {accuracy:.3f}")
        if auc is not None and auc >= LEAK_SCORE:
            high.append(f"AUC {auc:.3f}")
        if high:
            return (
                f"Likely leak: on {split_words(split)} {' and '.join(high)} (≥ "
                f"{LEAK_SCORE:g}). Real outcomes are almost never predicted this well: a "
                "feature probably holds the answer (a copy of the label, or a value known "
                "only after the outcome); look for it among the data's leak warnings, "
                "leave it out of the features and run again."
            )
    return None


def near_majority(values: dict[str, float | None], thresholded: bool) -> str | None:
    """Why a split cannot tell the model's accuracy from always predicting the majority
    class (the accuracy's interval reaches the majority rate), or None."""
    accuracy, majority = (
        finite_number(values.get("accuracy")),
        finite_number(values.get("majority")),
    )
    low = finite_number(values.get("accuracy" + LOW))
    if not thresholded or None in (accuracy, majority, low) or low > majority:
        return None
    return (
        f"accuracy {accuracy:.4f} (95 % interval {low:.4f}–"
        f"{finite_number(values.get('accuracy' + HIGH)) or accuracy:.4f}) cannot be told from "
        f"always predicting the majority class ({majority:.4f}) at this size"
    )


def degenerate(values: dict[str, float | None], thresholded: bool) -> str | None:
    """Why a model is not worth showing on a split, or None."""
    accuracy, majority = (
        finite_number(values.get("accuracy")),
        finite_number(values.get("majority")),
    )
    auc, spread = finite_number(values.get("auc")), finite_number(values.get("score_std"))
    positive_rate, r2 = finite_number(values.get("positive_rate")), finite_number(values.get("r2"))
    if spread is not None and spread <= CONSTANT_SCORE_STD:
        return "every sample gets the same score"
    if r2 is not None and r2 <= 0.0:
        return f"R² {r2:.4f} ≤ 0: its predictions are no better than predicting the mean label"
    if (
        thresholded
        and accuracy is not None
        and majority is not None
        and accuracy <= majority + DEGENERATE_MARGIN
    ):
        always = ""
        if positive_rate in (0.0, 1.0):
            always = f" (it predicts everyone {'positive' if positive_rate else 'negative'})"
        return (
            f"accuracy {accuracy:.4f} is not above always predicting the majority class "
            f"({majority:.4f}){always}"
        )
    if auc is not None and auc <= 0.5:
        return f"AUC {auc:.4f} ≤ 0.5: its scores rank no better than chance"
    return None


def split_words(split: str) -> str:
    return {"test": "the test set", "val": "the validation set", "train": "the training set"}.get(
        split, split
    )


def finite_number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)
