"""Paper 000's criteria: independence, separation, sufficiency and inaccuracy (Sec. 2, Table
2), and the set every run reports (`report_criteria`) with the groups' accuracy difference (Fig. 4)
and the Wasserstein distance between their predicted probabilities (Table 4, Fig. 3).

This module is the one place where Table 2's per-group rates and criteria are computed.

Predictions are Y_hat = 1[score > threshold]; threshold 0 on logits is sigmoid(logit) > 0.5, the
rule of paper 000's released code. Per group i (m groups), `group_rates` gives
    P^ind_i    = P(Y_hat = + | S = i)
    P^Sp_{i,v} = P(Y_hat = + | S = i, Y = v)      (TPR for v = +, FPR for v = -)
    P^Sf_{v,i} = P(Y = + | Y_hat = v, S = i)      (PPV for v = +, 1 - NPV for v = -)
    Acc_i      = P(Y_hat = Y | S = i)
and NaN for a rate whose conditioning cell is empty.

`table2_criterion` turns one of these per-group rates into its criterion under one of two
normalisations, picked by `convention`:
- "paper" (Table 2): mean absolute deviation from the unweighted group mean,
      Ind = 1/m sum_i |P^ind_i - mean_j P^ind_j|
      Sp  = 1/2 sum_v 1/m sum_i |P^Sp_{i,v} - mean_j P^Sp_{j,v}|      (Sf likewise)
- "code" (the released benchmark's statistics, two groups only):
      Ind = |PR_0 - PR_1|,  Sp = |TPR_0 - TPR_1| + |FPR_0 - FPR_1|,
      Sf = |PPV_0 - PPV_1| + |NPV_0 - NPV_1|
  For m = 2 the "code" values are 2x ("Ind") and 4x ("Sp", "Sf") the "paper" values.
Inaccuracy is P(Y_hat != Y) in both.

Empty cells: a group without positive or without negative labels is a property of the data
split, so `separation` refuses it with a `UserError`. A group without predicted positives (or
predicted negatives) is a property of the model: its PPV (or NPV) is undefined and `sufficiency`
returns NaN.

`criteria` and `report_criteria` take scores (logits) h, labels y in {0, 1} and group ids g in 0..m-1, every group present
(an absent id is a `UserError`). The prediction is Ŷ = + when σ(h) > 0.5, that is h > 0, and the
per-group rates are `group_rates`' at threshold 0. On top of them:
    DifAcc = max_i Acc_i − min_i Acc_i   (|Acc_0 − Acc_1| for two groups)
For two groups Table 2 gives half of |PR_0 − PR_1| (Ind) and a quarter of
|TPR_0 − TPR_1| + |FPR_0 − FPR_1| (Sp; Sf likewise with PPV, NPV), the sums the paper's released
code reports (`convention="code"`); the benchmark reports Table 2's
values, the paper's stated definition, valid for any m.

Wd is the exact 1-Wasserstein distance (p = 1) between two groups' empirical distributions of
σ(h), the largest over pairs of groups: the L1 distance between their CDFs, summed exactly over
the pooled values (`engine.fairness.wasserstein`). The released code's "Wd" (a squared W2
between 50-bin histograms, group 1 binned on group 0's edges, so group 1's mass outside them is
dropped) is not reproduced.

Where the rates give NaN or a `UserError` for a rate whose conditioning cell is empty
(Sp: a group without positive or without negative labels; Sf: a group without predicted
positives or without predicted negatives), the benchmark gives None, and `Criteria.reasons`
says which group lacks which cell. `report_criteria` is the same numbers as a flat dict under
the run report's metric names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError
from engine.fairness.rates import accuracy, positive_rates_of
from engine.fairness.table import GroupTable, require_nonempty
from engine.fairness.wasserstein import wasserstein_pairs
from engine.numerics import sigmoid

Convention = Literal["paper", "code"]


@dataclass(frozen=True)
class GroupRates:
    """Per-group rates of paper 000, Table 2, at Y_hat = 1[score > threshold].

    `separation[i, v]` is P^Sp_{i,v} and `sufficiency[i, v]` is P^Sf_{v,i}, column 0 for v = +
    and column 1 for v = -; a rate whose conditioning cell is empty is NaN.
    """

    independence: np.ndarray  # (m,)
    separation: np.ndarray  # (m, 2): TPR, FPR
    sufficiency: np.ndarray  # (m, 2): PPV, 1 - NPV
    accuracy: np.ndarray  # (m,)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0."""
    out = np.full(numerator.shape, np.nan)
    return np.divide(numerator, denominator, out=out, where=denominator > 0)


def group_rates_of(table: GroupTable, threshold: float = 0.0) -> GroupRates:
    """`GroupRates` of a labelled table: two `bincount`s over the samples, no sort."""
    if table.labels is None:
        raise UserError("Table 2's group rates need the labels y; pass y=... .")
    cells = table.cell_sizes()  # (m, 2): columns y = 0, y = 1
    predicted = table.above(threshold)  # (m, 2): Y_hat = + per (group, label) cell
    unpredicted = cells - predicted
    by_prediction = np.stack([predicted.sum(axis=1), unpredicted.sum(axis=1)], axis=1)
    return GroupRates(
        independence=positive_rates_of(table, threshold),
        separation=_ratio(predicted[:, ::-1], cells[:, ::-1]),  # columns v = +, -
        sufficiency=_ratio(np.stack([predicted[:, 1], unpredicted[:, 1]], axis=1), by_prediction),
        accuracy=(predicted[:, 1] + unpredicted[:, 0]) / table.group_sizes,
    )


def group_rates(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, threshold: float = 0.0
) -> GroupRates:
    """P^ind, P^Sp, P^Sf and the accuracy of every group (paper 000, Table 2)."""
    return group_rates_of(GroupTable.build(scores, groups, y), threshold)


def _check_convention(convention: Convention, n_groups: int) -> None:
    if convention not in ("paper", "code"):
        raise UserError(f'convention must be "paper" or "code", got {convention!r}.')
    if convention == "code" and n_groups != 2:
        raise UserError(
            'convention="code" follows paper 000\'s released code, which is defined for two '
            f'groups only; got {n_groups}. Use convention="paper" for more groups.'
        )


def table2_criterion(per_group: ArrayLike, convention: Convention = "paper") -> float:
    """A criterion of Table 2 from its per-group rates: (m,) for Ind, (m, 2) for Sp and Sf
    (columns v = +, -). "paper": the mean over the columns of 1/m sum_i |P_i - mean_j P_j|;
    "code": the sum over the columns of |P_0 - P_1|. NaN when any rate is NaN."""
    rates = np.asarray(per_group, dtype=np.float64)
    columns = rates.reshape(rates.shape[0], -1)
    _check_convention(convention, columns.shape[0])
    if convention == "paper":
        return float(np.mean(np.abs(columns - columns.mean(axis=0))))
    return float(np.sum(np.abs(columns[0] - columns[1])))


def independence(
    scores: ArrayLike, groups: ArrayLike, threshold: float = 0.0, convention: Convention = "paper"
) -> float:
    """Ind of paper 000, Table 2 (demographic parity, normalised by `convention`)."""
    table = GroupTable.build(scores, groups)
    return table2_criterion(positive_rates_of(table, threshold), convention)


def separation(
    scores: ArrayLike,
    groups: ArrayLike,
    y: ArrayLike,
    threshold: float = 0.0,
    convention: Convention = "paper",
) -> float:
    """Sp of paper 000, Table 2 (equalized odds over TPR and FPR, normalised by `convention`);
    `UserError` if a group lacks positive or negative labels."""
    table = GroupTable.build(scores, groups, y)
    require_nonempty(table.cell_sizes(), "separation (the true- and false-positive rates)")
    return table2_criterion(group_rates_of(table, threshold).separation, convention)


def sufficiency(
    scores: ArrayLike,
    groups: ArrayLike,
    y: ArrayLike,
    threshold: float = 0.0,
    convention: Convention = "paper",
) -> float:
    """Sf of paper 000, Table 2 (parity of P(Y=+ | Y_hat, S)); NaN if a PPV/NPV is undefined."""
    table = GroupTable.build(scores, groups, y)
    return table2_criterion(group_rates_of(table, threshold).sufficiency, convention)


def inaccuracy(scores: ArrayLike, y: ArrayLike, threshold: float = 0.0) -> float:
    """Ina of paper 000: P(Y_hat != Y)."""
    return 1.0 - accuracy(scores, y, threshold)


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
    for name, per_group, condition in (
        ("Sp", rates.separation, "Y"),
        ("Sf", rates.sufficiency, "Ŷ"),
    ):
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
