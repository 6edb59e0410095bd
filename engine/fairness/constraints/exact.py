"""The one place that maps a constraint family to the exact metric in `engine.fairness`.

Families ask for their metric by key; the function is looked up when called, so this package
imports without the metrics and always uses the current ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# family metric key -> function name exported by engine.fairness
EXACT_FUNCTIONS: dict[str, str] = {
    "pSP": "psp",  # (scores, groups, alpha, beta)
    "pDP": "pdp",  # (scores, groups, alpha, beta, threshold)
    "DP": "demographic_parity_gap",  # (scores, groups, threshold)
    "EO": "equalized_odds_gap",  # (scores, groups, y, threshold)
    "EOpp": "equal_opportunity_gap",  # (scores, groups, y, threshold)
    "group_losses": "group_losses",  # (scores, groups, y) -> (G,)
    "auc_gap:group": "group_auc_gap",  # (scores, groups)
    "auc_gap:inter": "inter_group_auc_gap",  # (scores, groups, y)
    "auc_gap:intra": "intra_group_auc_gap",  # (scores, groups, y)
    "auc_gap:average_positive": "positive_average_equality_gap",  # (scores, groups, y)
    "auc_gap:average_negative": "negative_average_equality_gap",  # (scores, groups, y)
    "auc_gap:bpsn": "bpsn_bnsp_gap",  # (scores, groups, y)
}


class MissingExactMetric(RuntimeError):
    """The exact metric a family stands for is not available in engine.fairness."""


def exact_metric(key: str) -> Callable[..., Any]:
    """The exact metric function for `key` (see EXACT_FUNCTIONS)."""
    try:
        name = EXACT_FUNCTIONS[key]
    except KeyError:
        raise MissingExactMetric(f"No exact metric is registered for {key!r}.") from None
    module = importlib.import_module("engine.fairness")
    fn = getattr(module, name, None)
    if fn is None:
        raise MissingExactMetric(
            f"engine.fairness.{name} (the exact metric for {key}) is not available."
        )
    return fn
