"""Independence, separation, sufficiency and inaccuracy (paper 000, Sec. 2, Table 2).

Predictions are Y_hat = 1[score > threshold]; threshold 0 on logits is sigmoid(logit) > 0.5, the
rule of paper 000's released code. Per group i (m groups):
    P^ind_i    = P(Y_hat = + | S = i)
    P^Sp_{i,v} = P(Y_hat = + | S = i, Y = v)      (TPR for v = +, FPR for v = -)
    P^Sf_{v,i} = P(Y = + | Y_hat = v, S = i)      (PPV for v = +, 1 - NPV for v = -)

Two normalisations exist and `convention` picks one:
- "paper" (Table 2): mean absolute deviation from the unweighted group mean,
      Ind = 1/m sum_i |P^ind_i - mean_j P^ind_j|
      Sp  = 1/2 sum_v 1/m sum_i |P^Sp_{i,v} - mean_j P^Sp_{j,v}|      (Sf likewise)
- "code" (the released benchmark's statistics, two groups only):
      Ind = |PR_0 - PR_1|,  Sp = |TPR_0 - TPR_1| + |FPR_0 - FPR_1|,
      Sf = |PPV_0 - PPV_1| + |NPV_0 - NPV_1|
  For m = 2 the "code" values are 2x ("Ind") and 4x ("Sp", "Sf") the "paper" values.
Inaccuracy is P(Y_hat != Y) in both.

Sufficiency conditions on the predictions: when a group has no predicted positives (or no
predicted negatives) its PPV (or NPV) is undefined and `sufficiency` returns NaN.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError
from engine.fairness.rates import accuracy, label_rates_of, positive_rates_of
from engine.fairness.table import GroupTable

Convention = Literal["paper", "code"]


def _check_convention(convention: Convention, n_groups: int) -> None:
    if convention not in ("paper", "code"):
        raise UserError(f'convention must be "paper" or "code", got {convention!r}.')
    if convention == "code" and n_groups != 2:
        raise UserError(
            'convention="code" follows paper 000\'s released code, which is defined for two '
            f'groups only; got {n_groups}. Use convention="paper" for more groups.'
        )


def _spread(per_group: np.ndarray, convention: Convention) -> float:
    """Aggregate one per-group statistic: mean |deviation| ("paper") or |P_0 - P_1| ("code")."""
    if convention == "paper":
        return float(np.mean(np.abs(per_group - per_group.mean())))
    return float(abs(per_group[0] - per_group[1]))


def _two_sided(pos: np.ndarray, neg: np.ndarray, convention: Convention) -> float:
    # paper 000, Table 2: 1/2 sum_v for "paper"; the released code sums the two gaps unhalved
    total = _spread(pos, convention) + _spread(neg, convention)
    return 0.5 * total if convention == "paper" else total


def independence(
    scores: ArrayLike, groups: ArrayLike, threshold: float = 0.0, convention: Convention = "paper"
) -> float:
    """Ind of paper 000, Table 2 (demographic parity, normalised by `convention`)."""
    table = GroupTable.build(scores, groups)
    _check_convention(convention, table.n_groups)
    return _spread(positive_rates_of(table, threshold), convention)


def separation(
    scores: ArrayLike,
    groups: ArrayLike,
    y: ArrayLike,
    threshold: float = 0.0,
    convention: Convention = "paper",
) -> float:
    """Sp of paper 000, Table 2 (equalized odds over TPR and FPR, normalised by `convention`)."""
    table = GroupTable.build(scores, groups, y)
    _check_convention(convention, table.n_groups)
    tpr = label_rates_of(table, threshold, 1)
    fpr = label_rates_of(table, threshold, 0)
    return _two_sided(tpr, fpr, convention)


def sufficiency(
    scores: ArrayLike,
    groups: ArrayLike,
    y: ArrayLike,
    threshold: float = 0.0,
    convention: Convention = "paper",
) -> float:
    """Sf of paper 000, Table 2 (parity of P(Y=+ | Y_hat, S)); NaN if a PPV/NPV is undefined."""
    table = GroupTable.build(scores, groups, y)
    _check_convention(convention, table.n_groups)
    predicted_pos = table.above(threshold)  # (G, 2): columns y = 0, y = 1
    predicted_neg = table.cell_sizes() - predicted_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        ppv = predicted_pos[:, 1] / predicted_pos.sum(axis=1)
        pos_among_neg = predicted_neg[:, 1] / predicted_neg.sum(axis=1)  # 1 - NPV
    if np.isnan(ppv).any() or np.isnan(pos_among_neg).any():
        return float("nan")
    return _two_sided(ppv, pos_among_neg, convention)


def inaccuracy(scores: ArrayLike, y: ArrayLike, threshold: float = 0.0) -> float:
    """Ina of paper 000: P(Y_hat != Y)."""
    return 1.0 - accuracy(scores, y, threshold)
