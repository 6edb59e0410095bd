"""Independence, separation, sufficiency and inaccuracy (paper 000, Sec. 2, Table 2).

This module is the one place where Table 2's per-group rates and criteria are computed;
`engine.benchmark.criteria` reads them from here.

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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError
from engine.fairness.rates import accuracy, positive_rates_of
from engine.fairness.table import GroupTable, require_nonempty

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
