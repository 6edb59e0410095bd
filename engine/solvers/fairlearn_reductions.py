"""fairlearn's reductions (Agarwal et al. 2018) as solvers: ExponentiatedGradient and GridSearch,
with scikit-learn's logistic regression as the base estimator, stepped one base fit at a time
(`engine.solvers.fairlearn_steps`).

The constraint families map to fairlearn's moments with difference bound κ (`MOMENTS`): DP to
DemographicParity, EO to EqualizedOdds, EOpp to TruePositiveRateParity. fairlearn's moments hold
each group's rate within κ of the rate of all samples (of each label, for EO and EOpp), while
FairFront's gaps, which the verdict and the frontier use, are the largest differences between two
groups: a model within fairlearn's bound has gaps of at most 2κ (with two groups, κ divided by
the larger group's share).

The reported models (`engine.scoring`):
- ExponentiatedGradient: its randomised classifier, the mixture of the base classifiers it found
  with its weights (those of weight 0 left out), scored P(ŷ = 1 | x) − ½ as its `_pmf_predict`
  gives P; the exact metrics are those of its majority vote;
- GridSearch: the one base classifier its rule picked, a linear model scored by its log-odds.
"""

from __future__ import annotations

import numpy as np
from fairlearn.reductions import (
    DemographicParity,
    EqualizedOdds,
    ExponentiatedGradient,
    GridSearch,
    Moment,
    TruePositiveRateParity,
)

from engine.models import Params
from engine.scoring import MIXTURE_Q, MIXTURE_W
from engine.solvers.catalogue.fairlearn import ExponentiatedGradientConfig, GridSearchConfig
from engine.solvers.fairlearn_steps import FairlearnSolver, base_estimator, classifier_weights
from engine.solvers.stepped_loop import Ask
from engine.status import StopCode

MOMENTS: dict[str, type[Moment]] = {
    "DP": DemographicParity, "EO": EqualizedOdds, "EOpp": TruePositiveRateParity,
}  # fmt: skip


def moment(family: str, kappa: float) -> Moment:
    """fairlearn's moment of a constraint family, with difference bound κ."""
    return MOMENTS[family](difference_bound=kappa)


def fit_exponentiated_gradient(
    ask: Ask, config: ExponentiatedGradientConfig, family: str, kappa: float,
    X: np.ndarray, y: np.ndarray, groups: np.ndarray,
) -> ExponentiatedGradient:  # fmt: skip
    mitigator = ExponentiatedGradient(
        base_estimator(config, ask), moment(family, kappa), eps=config.eps,
        max_iter=config.max_iter, nu=config.nu, eta0=config.eta0,
    )  # fmt: skip
    return mitigator.fit(X, y, sensitive_features=groups)


def fit_grid_search(
    ask: Ask, config: GridSearchConfig, family: str, kappa: float,
    X: np.ndarray, y: np.ndarray, groups: np.ndarray,
) -> GridSearch:  # fmt: skip
    mitigator = GridSearch(
        base_estimator(config, ask), moment(family, kappa),
        constraint_weight=config.constraint_weight, grid_size=config.grid_size,
        grid_limit=config.grid_limit,
    )  # fmt: skip
    return mitigator.fit(X, y, sensitive_features=groups)


class ExponentiatedGradientSolver(FairlearnSolver):
    method = "ExponentiatedGradient"
    fit_mitigator = staticmethod(fit_exponentiated_gradient)

    def model(self, fitted: ExponentiatedGradient) -> Params:
        used = fitted.weights_[fitted.weights_ != 0.0]
        n_weights = len(self.latest)
        return {
            MIXTURE_W: np.stack(
                [classifier_weights(fitted.predictors_[i], n_weights) for i in used.index]
            ),  # fmt: skip
            MIXTURE_Q: used.to_numpy(dtype=np.float64),
        }

    def end(self, fitted: ExponentiatedGradient) -> tuple[StopCode, str]:
        iterations = fitted.last_iter_ + 1
        if fitted.best_gap_ < fitted.nu:
            return StopCode.CONVERGED, (f"ExponentiatedGradient's duality gap "
                                        f"{fitted.best_gap_:.3g} < ν = {fitted.nu:.3g} after "
                                        f"{iterations} iterations")  # fmt: skip
        return StopCode.ITERATION_CAP, (f"ExponentiatedGradient ran max_iter = {iterations} "
                                        f"iterations; its best duality gap "
                                        f"{fitted.best_gap_:.3g} ≥ ν = {fitted.nu:.3g}")  # fmt: skip


class GridSearchSolver(FairlearnSolver):
    method = "GridSearch"
    fit_mitigator = staticmethod(fit_grid_search)

    def model(self, fitted: GridSearch) -> Params:
        chosen = fitted.predictors_[fitted.best_idx_]
        return {"w": classifier_weights(chosen, len(self.latest)).copy()}

    def end(self, fitted: GridSearch) -> tuple[StopCode, str]:
        return StopCode.CONVERGED, (f"GridSearch tried {len(fitted.predictors_)} multipliers and "
                                    f"picked number {fitted.best_idx_ + 1}")  # fmt: skip
