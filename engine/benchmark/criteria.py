"""Paper 000's criteria as the benchmark reports them: Table 2's criteria and the inaccuracy
(computed by `engine.fairness.criteria`, in the paper's convention), plus the groups' accuracy
difference (Fig. 4) and the Wasserstein distance between the groups' predicted probabilities
(Table 4, Fig. 3).

Inputs are scores (logits) h, labels y in {0, 1} and group ids g in 0..m-1, every group present
(an absent id is a `UserError`). The prediction is Ŷ = + when σ(h) > 0.5, that is h > 0, and the
per-group rates are `engine.fairness.criteria.group_rates` at threshold 0. On top of them:
    DifAcc = max_i Acc_i − min_i Acc_i   (|Acc_0 − Acc_1| for two groups)
For two groups Table 2 gives half of |PR_0 − PR_1| (Ind) and a quarter of
|TPR_0 − TPR_1| + |FPR_0 − FPR_1| (Sp; Sf likewise with PPV, NPV), the sums the paper's released
code reports (`convention="code"` in `engine.fairness.criteria`); the benchmark reports Table 2's
values, the paper's stated definition, valid for any m.

Wd is the exact 1-Wasserstein distance (p = 1) between two groups' empirical distributions of
σ(h), the largest over pairs of groups: the L1 distance between their CDFs, summed exactly over
the pooled values (`engine.fairness.wasserstein`). The released code's "Wd" (a squared W2
between 50-bin histograms, group 1 binned on group 0's edges, so group 1's mass outside them is
dropped) is not reproduced.

Where `engine.fairness` gives NaN or a `UserError` for a rate whose conditioning cell is empty
(Sp: a group without positive or without negative labels; Sf: a group without predicted
positives or without predicted negatives), the benchmark gives None, and `Criteria.reasons`
says which group lacks which cell. `report_criteria` is the same numbers as a flat dict under
the run report's metric names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from engine.fairness.criteria import group_rates, inaccuracy, table2_criterion
from engine.fairness.wasserstein import wasserstein_pairs
from engine.numerics import sigmoid

CRITERIA = ("Ind", "Sp", "Sf", "Ina", "DifAcc", "Wd")  # paper 000, Table 4 and Fig. 4
# the run report's metric name of each criterion (`report_criteria`)
REPORT_NAMES = {
    "Ind": "independence",
    "Sp": "separation",
    "Sf": "sufficiency",
    "Ina": "inaccuracy",
    "DifAcc": "accuracy_gap",
    "Wd": "probability_wasserstein",
}
SIGNS = ("+", "−")  # the columns v of the label- and prediction-conditioned rates


@dataclass(frozen=True)
class Criteria:
    """`values[name]` for each name of `CRITERIA` (None when undefined) and, for each None,
    `reasons[name]`: the groups whose conditioning cell is empty."""

    values: dict[str, float | None]
    reasons: dict[str, str]


def probabilities(h: ArrayLike) -> np.ndarray:
    """The predicted probabilities σ(h) of scores (logits) h."""
    return sigmoid(h)


def probability_wasserstein(h: ArrayLike, g: ArrayLike) -> float:
    """Wd: the largest exact W1 distance between two groups' distributions of σ(h)."""
    return float(wasserstein_pairs(probabilities(h), g).max())


def _empty_cells(rates: np.ndarray, condition: str) -> str | None:
    """Which groups lack which conditioning cell (the NaN rates), or None when all are defined."""
    missing = [
        f"group(s) {np.flatnonzero(np.isnan(rates[:, v])).tolist()} have no samples with "
        f"{condition} = {sign}"
        for v, sign in enumerate(SIGNS)
        if np.isnan(rates[:, v]).any()
    ]
    return "; ".join(missing) or None


def criteria(h: ArrayLike, y: ArrayLike, g: ArrayLike) -> Criteria:
    """Ind, Sp, Sf (paper 000, Table 2), Ina, DifAcc (Fig. 4) and Wd (Table 4)."""
    rates = group_rates(h, g, y)
    values: dict[str, float | None] = {
        "Ind": table2_criterion(rates.independence),
        "Sp": None,
        "Sf": None,
        "Ina": inaccuracy(h, y),
        "DifAcc": float(rates.accuracy.max() - rates.accuracy.min()),
        "Wd": probability_wasserstein(h, g),
    }
    reasons = {}
    for name, per_group, condition in (("Sp", rates.separation, "Y"),
                                       ("Sf", rates.sufficiency, "Ŷ")):  # fmt: skip
        reason = _empty_cells(per_group, condition)
        if reason is None:
            values[name] = table2_criterion(per_group)
        else:
            reasons[name] = f"{name} is undefined: {reason}."
    return Criteria(values, reasons)


def report_criteria(h: ArrayLike, y: ArrayLike, g: ArrayLike) -> dict[str, float | None]:
    """`criteria(h, y, g).values` under the report's names ("independence", "separation",
    "sufficiency", "inaccuracy", "accuracy_gap", "probability_wasserstein"), None when
    undefined; cheap enough for every split of every run (one pass per rate, one sort for Wd)."""
    values = criteria(h, y, g).values
    return {REPORT_NAMES[name]: values[name] for name in CRITERIA}
