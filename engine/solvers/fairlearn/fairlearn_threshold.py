"""fairlearn's ThresholdOptimizer (Hardt et al. 2016) as a solver: scikit-learn's logistic
regression fitted without constraint (one step, `engine.solvers.fairlearn.fairlearn_steps`), then
randomised thresholds per group of its probability (or log-odds, option `predict_method`).

The constraint families map to fairlearn's constraints (`CONSTRAINTS`): DP to
demographic_parity and EOpp to true_positive_rate_parity, with tolerance `tol` = κ on the range
of the groups' rates (largest minus smallest), which is FairFront's gap between two groups, so κ
passes unchanged; EO to equalized_odds, which fairlearn solves with both rates equal and no
tolerance.

The reported model (`engine.model_forms.THRESHOLDS`) is the base linear model and, for each
group, fairlearn's two threshold rules with their probabilities and, under EO, the probability
p_ignore of its constant prediction instead: it scores P(ŷ = 1 | x, group) − ½ as
`_pmf_predict` gives P; the exact metrics are those of its majority vote.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from fairlearn.postprocessing import ThresholdOptimizer
from sklearn.utils import Bunch

from engine.errors import UserError
from engine.model_forms import (
    THRESHOLD_AT,
    THRESHOLD_CONSTANT,
    THRESHOLD_IGNORE,
    THRESHOLD_ON_PROBABILITY,
    THRESHOLD_P,
    THRESHOLD_SIGN,
)
from engine.models import Params
from engine.problem import Problem
from engine.solvers.fairlearn.cards import (
    EQUALIZED_ODDS_OBJECTIVES,
    ThresholdOptimizerConfig,
)
from engine.solvers.fairlearn.fairlearn_steps import FairlearnSolver, base_estimator
from engine.solvers.stepped_loop import Ask

CONSTRAINTS = {
    "DP": "demographic_parity",
    "EO": "equalized_odds",
    "EOpp": "true_positive_rate_parity",
}


def fit_threshold_optimizer(
    ask: Ask,
    config: ThresholdOptimizerConfig,
    family: str,
    bound: float | None,
    X: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
) -> ThresholdOptimizer:
    mitigator = ThresholdOptimizer(
        estimator=base_estimator(config, ask),
        constraints=CONSTRAINTS[family],
        objective=config.objective,
        grid_size=config.grid_size,
        flip=config.flip,
        predict_method=config.predict_method,
        tol=bound,
    )
    return mitigator.fit(X, y, sensitive_features=groups)


class ThresholdOptimizerSolver(FairlearnSolver):
    method = "ThresholdOptimizer"
    fit_mitigator = staticmethod(fit_threshold_optimizer)

    def __init__(
        self, problem: Problem, config: ThresholdOptimizerConfig, rng: np.random.Generator
    ) -> None:
        if problem.constraint.family == "EO" and config.objective not in EQUALIZED_ODDS_OBJECTIVES:
            raise UserError(
                f"threshold_optimizer under EO maximises "
                f"{' or '.join(EQUALIZED_ODDS_OBJECTIVES)} only (fairlearn's rule), "
                f"not {config.objective}"
            )
        super().__init__(problem, config, rng)

    def fairlearn_bound(self) -> float | None:
        """`tol`: κ itself, None (equal rates) under EO (module docstring)."""
        spec = self.problem.constraint
        return None if spec.family == "EO" else spec.kappa

    def bound_text(self) -> str:
        return f"fairlearn's tol = κ = {self.bound:g} on the range of the groups' rates"

    def model(self, fitted: ThresholdOptimizer) -> Params:
        rules = fitted.interpolated_thresholder_.interpolation_dict
        on_probability = self.config.predict_method == "predict_proba"
        return threshold_params(
            fitted.estimator_.weights_, rules, self.problem.data.n_groups, on_probability
        )


def threshold_params(
    weights: np.ndarray, rules: Mapping[int, Bunch], n_groups: int, on_probability: bool
) -> Params:
    """The model (`engine.model_forms.THRESHOLDS`) of the base linear model's `weights` and
    fairlearn's randomised thresholds `rules` by group id (an InterpolatedThresholder's
    `interpolation_dict`: p0, operation0, p1, operation1 and, under equalized odds, p_ignore and
    prediction_constant), of the base model's probability when `on_probability`."""
    at, sign, p = np.zeros((n_groups, 2)), np.ones((n_groups, 2)), np.zeros((n_groups, 2))
    ignore, constant = np.zeros(n_groups), np.zeros(n_groups)
    for group, rule in rules.items():
        for k, (probability, operation) in enumerate(
            ((rule.p0, rule.operation0), (rule.p1, rule.operation1))
        ):
            p[group, k], at[group, k] = probability, operation.threshold
            sign[group, k] = 1.0 if operation.operator == ">" else -1.0
        if "p_ignore" in rule:
            ignore[group], constant[group] = rule.p_ignore, rule.prediction_constant
    return {
        "w": np.array(weights, dtype=np.float64),
        THRESHOLD_AT: at,
        THRESHOLD_SIGN: sign,
        THRESHOLD_P: p,
        THRESHOLD_IGNORE: ignore,
        THRESHOLD_CONSTANT: constant,
        THRESHOLD_ON_PROBABILITY: np.array([float(on_probability)]),
    }
