"""Exact fairness metrics: numpy arrays in, floats (or per-pair matrices) out.

Common arguments: `scores` (float array, higher = more positive), `groups` (integer ids 0..G-1,
every id present: an empty group raises `UserError`), and where needed `y` (0/1 labels).
A prediction is positive when `score > threshold` (strict). Functions named `*_pairs` return a
symmetric (G, G) array with zero diagonal; the matching scalar is its maximum over pairs.

Reported "fairness" in paper 003's plots is 1 - psp(...) (or 1 - pdp(...)).
"""

from engine.fairness.auc import (
    average_equality_gaps,
    bpsn_bnsp_gap,
    bpsn_bnsp_gaps,
    group_auc_gap,
    group_auc_pairs,
    group_roc_aucs,
    inter_group_auc_gap,
    inter_group_auc_pairs,
    intra_group_auc_gap,
    intra_group_auc_pairs,
    negative_average_equality_gap,
    positive_average_equality_gap,
    roc_auc,
)
from engine.fairness.badr_measures import (
    BADR_MEASURES,
    BadrMeasure,
    LossFn,
    badr_demographic_parity,
    badr_disparate_mistreatment,
    badr_equal_opportunity,
    badr_equalized_odds,
    badr_group_variance,
    badr_hsic,
    badr_individual_fairness,
    badr_measure,
)
from engine.fairness.criteria import (
    GroupRates,
    group_rates,
    inaccuracy,
    independence,
    separation,
    sufficiency,
    table2_criterion,
)
from engine.fairness.group_loss import (
    group_losses,
    loss_accuracy_equality_gap,
    loss_accuracy_equality_pairs,
    loss_equal_opportunity_gap,
    loss_equal_opportunity_pairs,
    loss_equalized_odds_gap,
    loss_equalized_odds_pairs,
)
from engine.fairness.partial import GapWitness, pdp, pdp_pairs, psp, psp_pairs, psp_witness
from engine.fairness.rates import (
    accuracy,
    demographic_parity_gap,
    demographic_parity_pairs,
    equal_opportunity_gap,
    equal_opportunity_pairs,
    equalized_odds_gap,
    equalized_odds_pairs,
    false_positive_rates,
    positive_rates,
    true_positive_rates,
)
from engine.fairness.table import GroupTable
from engine.fairness.wasserstein import wasserstein_gap, wasserstein_pairs

__all__ = [
    "BADR_MEASURES",
    "BadrMeasure",
    "GapWitness",
    "GroupRates",
    "GroupTable",
    "LossFn",
    "accuracy",
    "average_equality_gaps",
    "badr_demographic_parity",
    "badr_disparate_mistreatment",
    "badr_equal_opportunity",
    "badr_equalized_odds",
    "badr_group_variance",
    "badr_hsic",
    "badr_individual_fairness",
    "badr_measure",
    "bpsn_bnsp_gap",
    "bpsn_bnsp_gaps",
    "demographic_parity_gap",
    "demographic_parity_pairs",
    "equal_opportunity_gap",
    "equal_opportunity_pairs",
    "equalized_odds_gap",
    "equalized_odds_pairs",
    "false_positive_rates",
    "group_auc_gap",
    "group_auc_pairs",
    "group_losses",
    "group_rates",
    "group_roc_aucs",
    "inaccuracy",
    "independence",
    "inter_group_auc_gap",
    "inter_group_auc_pairs",
    "intra_group_auc_gap",
    "intra_group_auc_pairs",
    "loss_accuracy_equality_gap",
    "loss_accuracy_equality_pairs",
    "loss_equal_opportunity_gap",
    "loss_equal_opportunity_pairs",
    "loss_equalized_odds_gap",
    "loss_equalized_odds_pairs",
    "negative_average_equality_gap",
    "pdp",
    "pdp_pairs",
    "positive_average_equality_gap",
    "positive_rates",
    "psp",
    "psp_pairs",
    "psp_witness",
    "roc_auc",
    "separation",
    "sufficiency",
    "table2_criterion",
    "true_positive_rates",
    "wasserstein_gap",
    "wasserstein_pairs",
]

# Per-group distributions on paper 003's rank scale (the numbers behind the CCDF, rank-rank,
# density and interval-helper plots).
from engine.fairness.distributions import (  # noqa: E402
    candidate_intervals,
    group_ccdf,
    interval_scan,
    rank_rank_curve,
    slice_bounds,
    suggested_interval,
)

__all__ += [
    "candidate_intervals",
    "group_ccdf",
    "interval_scan",
    "rank_rank_curve",
    "slice_bounds",
    "suggested_interval",
]
