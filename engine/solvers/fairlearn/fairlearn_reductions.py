"""fairlearn's reductions (Agarwal et al. 2018) as solvers: ExponentiatedGradient and GridSearch,
with scikit-learn's logistic regression as the base estimator, stepped one base fit at a time
(`engine.solvers.fairlearn.fairlearn_steps`).

The constraint families map to fairlearn's moments (`MOMENTS`): DP to DemographicParity, EO to
EqualizedOdds, EOpp to TruePositiveRateParity. fairlearn's moments hold each group's rate within
a bound b of the rate of all samples of an event (DP: all samples; EO: those of each label; EOpp:
the positives), while FairFront's gaps, which the verdict and the frontier use, are the largest
differences between two groups: b is translated from κ (`difference_bound`) so that the two
constraints agree.

The reported models (`engine.model_forms`):
- ExponentiatedGradient: its randomised classifier, the mixture of the base classifiers it found
  with its weights (those of weight 0 left out), scored P(ŷ = 1 | x) − ½ as its `_pmf_predict`
  gives P; the exact metrics are those of its majority vote;
- GridSearch: one base classifier of its grid, a linear model scored by its log-odds: the most
  accurate one on the training split whose exact gap there is within κ (option select = "kappa";
  none within κ: the one of the smallest gap), or the one fairlearn's own rule picks,
  (1 − w)·error + w·max violation, which does not use the bound (select = "fairlearn"). Every
  model of the grid is the run's front, placed by its Lagrange multipliers λ
  (`grid_multipliers`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from fairlearn.reductions import (
    DemographicParity,
    EqualizedOdds,
    ExponentiatedGradient,
    GridSearch,
    Moment,
    TruePositiveRateParity,
)

from engine.model_forms import MIXTURE_Q, MIXTURE_W
from engine.models import Params
from engine.problem import Problem
from engine.solvers.base import FrontPoint
from engine.solvers.fairlearn.cards import ExponentiatedGradientConfig, GridSearchConfig
from engine.solvers.fairlearn.fairlearn_steps import (
    FairlearnSolver,
    base_estimator,
    classifier_weights,
)
from engine.solvers.stepped_loop import Ask
from engine.status import StopCode

MOMENTS: dict[str, type[Moment]] = {
    "DP": DemographicParity,
    "EO": EqualizedOdds,
    "EOpp": TruePositiveRateParity,
}
# the events within which each moment compares the groups' rates: the label the samples of an
# event have (None: all samples)
EVENTS: dict[str, tuple[int | None, ...]] = {"DP": (None,), "EO": (1, 0), "EOpp": (1,)}


def difference_bound(family: str, kappa: float, groups: np.ndarray, y: np.ndarray) -> float:
    """fairlearn's difference bound b that holds FairFront's gap ≤ κ on these training samples.

    Within an event, fairlearn bounds each group's distance to the rate of the event's samples,
    |r_a − r̄| ≤ b with r̄ = Σ_c p_c r_c the share-weighted mean (p_c: group c's share of the
    event), while FairFront's gap is max_{a,c} |r_a − r_c|. As Σ_c p_c = 1,
    r_a − r̄ = Σ_c p_c (r_a − r_c):
    - two groups: |r_a − r̄| = (1 − p_a)·gap, so {gap ≤ κ} = {∀a: |r_a − r̄| ≤ κ(1 − p_a)}. One b
      for both groups gives that set exactly when b = κ(1 − p_min), p_min the smaller group's
      share: the smaller group's constraint is then gap ≤ κ, the larger's gap ≤ κ(1 − p_min)/p_min,
      which is looser;
    - more groups: |r_a − r̄| ≤ b for all a implies gap ≤ 2b (through r̄), so b = κ/2 holds
      gap ≤ κ, conservatively.
    With two events (EO: y = 1 and y = 0) fairlearn has one b for both: the smaller of the two
    events' bounds, exact for the event that gives it and conservative for the other. An event
    with fewer than two groups constrains nothing."""
    bounds = []
    for label in EVENTS[family]:
        counts = np.bincount(groups if label is None else groups[y == label])
        shares = counts[counts > 0] / counts.sum()
        if len(shares) == 2:
            bounds.append(kappa * (1.0 - shares.min()))
        elif len(shares) > 2:
            bounds.append(kappa / 2.0)
    return min(bounds, default=kappa)


def moment(family: str, bound: float) -> Moment:
    """fairlearn's moment of a constraint family, with difference bound `bound`."""
    return MOMENTS[family](difference_bound=bound)


def fit_exponentiated_gradient(
    ask: Ask,
    config: ExponentiatedGradientConfig,
    family: str,
    bound: float,
    X: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
) -> ExponentiatedGradient:
    mitigator = ExponentiatedGradient(
        base_estimator(config, ask),
        moment(family, bound),
        eps=config.eps,
        max_iter=config.max_iter,
        nu=config.nu,
        eta0=config.eta0,
    )
    return mitigator.fit(X, y, sensitive_features=groups)


def fit_grid_search(
    ask: Ask,
    config: GridSearchConfig,
    family: str,
    bound: float,
    X: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
) -> GridSearch:
    mitigator = GridSearch(
        base_estimator(config, ask),
        moment(family, bound),
        constraint_weight=config.constraint_weight,
        grid_size=config.grid_size,
        grid_limit=config.grid_limit,
    )
    return mitigator.fit(X, y, sensitive_features=groups)


def kappa_pick(
    gaps: np.ndarray, accuracy: np.ndarray, majority: np.ndarray, kappa: float
) -> tuple[int, str]:
    """The index of the most accurate model whose exact training gap is within κ (the first of
    equals); when none is, of the one of the smallest gap among those more accurate than always
    predicting the majority class (a model worse than a constant is no answer to a κ out of
    reach), among all when none is; and why, in words."""
    within = gaps <= kappa
    if within.any():
        index = int(np.argmax(np.where(within, accuracy, -np.inf)))
        among = f"the {int(within.sum())} of {len(gaps)} grid models within κ = {kappa:g} there"
        return index, f"the most accurate on the training split of {among}"
    useful = accuracy > majority
    index = int(np.argmin(np.where(useful, gaps, np.inf) if useful.any() else gaps))
    among = ""
    if not useful.any():
        among = ", though none is more accurate there than always predicting the majority class"
    elif not useful.all():
        among = " among those more accurate there than always predicting the majority class"
    smallest = f"the one of the smallest gap ({gaps[index]:.4f}){among}"
    return index, f"{smallest}, as no model of the grid has a training gap within κ = {kappa:g}"


def grid_multipliers(fitted: GridSearch, group_names: Sequence[str]) -> list[dict[str, float]]:
    """The Lagrange multipliers of each model of a fitted GridSearch, in its grid's order: for
    each (event, group) of fairlearn's basis (every group but one, per event), λ = λ₊ − λ₋ on
    that group's rate minus the event's ("lambda.<group>", under EO and EOpp
    "lambda.<group>|y=<label>"); λ > 0 weighs the group's positive predictions down."""
    basis = fitted.constraints_.pos_basis.loc["+"]  # (event, group) × basis direction
    pairs = [basis[direction].idxmax() for direction in basis.columns]
    signed = fitted.lambda_vecs_.loc["+"] - fitted.lambda_vecs_.loc["-"]
    names = {
        (event, group): f"lambda.{group_names[group]}"
        + ("" if event == "all" else "|" + event.replace("label=", "y="))
        for event, group in pairs
    }
    return [
        {names[pair]: float(signed.at[pair, model]) + 0.0 for pair in pairs}
        for model in signed.columns
    ]


def multiplier_labels(multipliers: list[dict[str, float]]) -> list[str]:
    """Each model's label, λ = 0.4 (one multiplier) or λ = (0.4, −1.2), with as many
    significant digits as keep the labels distinct."""
    for digits in range(3, 18):
        texts = [", ".join(f"{v:.{digits}g}" for v in m.values()) for m in multipliers]
        if len(set(texts)) == len(texts):
            break
    return [
        f"λ = {t}" if len(m) == 1 else f"λ = ({t})" for t, m in zip(texts, multipliers, strict=True)
    ]


class ReductionSolver(FairlearnSolver):
    """A reduction given the difference bound b of `difference_bound`."""

    def fairlearn_bound(self) -> float:
        train, spec = self.problem.data.train, self.problem.constraint
        return difference_bound(spec.family, spec.kappa, train.groups, train.y)

    def bound_text(self) -> str:
        return (
            f"fairlearn's difference bound b = {self.bound:.4g} on each group's rate minus "
            f"everyone's, for a gap ≤ κ = {self.problem.constraint.kappa:g}"
        )


class ExponentiatedGradientSolver(ReductionSolver):
    method = "ExponentiatedGradient"
    fit_mitigator = staticmethod(fit_exponentiated_gradient)

    def model(self, fitted: ExponentiatedGradient) -> Params:
        used = fitted.weights_[fitted.weights_ != 0.0]
        n_weights = len(self.latest)
        return {
            MIXTURE_W: np.stack(
                [classifier_weights(fitted.predictors_[i], n_weights) for i in used.index]
            ),
            MIXTURE_Q: used.to_numpy(dtype=np.float64),
        }

    def end(self, fitted: ExponentiatedGradient) -> tuple[StopCode, str]:
        iterations = fitted.last_iter_ + 1
        if fitted.best_gap_ < fitted.nu:
            return StopCode.CONVERGED, (
                f"ExponentiatedGradient's duality gap "
                f"{fitted.best_gap_:.3g} < ν = {fitted.nu:.3g} after "
                f"{iterations} iterations"
            )
        return StopCode.ITERATION_CAP, (
            f"ExponentiatedGradient ran max_iter = {iterations} "
            f"iterations; its best duality gap "
            f"{fitted.best_gap_:.3g} ≥ ν = {fitted.nu:.3g}"
        )


class GridSearchSolver(ReductionSolver):
    method = "GridSearch"
    fit_mitigator = staticmethod(fit_grid_search)

    def __init__(
        self, problem: Problem, config: GridSearchConfig, rng: np.random.Generator
    ) -> None:
        super().__init__(problem, config, rng)
        self.note = ""  # which model of the grid `model` reported, and why

    def bound_text(self) -> str:
        return f"{super().bound_text()} (unused by GridSearch's fit)"

    def grid(self, fitted: GridSearch) -> list[FrontPoint]:
        """Every model of the grid, in its order, labelled and placed by its multipliers."""
        multipliers = grid_multipliers(fitted, self.problem.data.group_names)
        labels, n_weights = multiplier_labels(multipliers), len(self.latest)
        return [
            FrontPoint(label, {"w": classifier_weights(predictor, n_weights).copy()}, m)
            for label, predictor, m in zip(labels, fitted.predictors_, multipliers, strict=True)
        ]

    def model(self, fitted: GridSearch) -> Params:
        grid = self.grid(fitted)
        if self.config.select == "fairlearn":
            chosen = grid[fitted.best_idx_]
            self.note = (
                f"reported {chosen.label}, fairlearn's pick by "
                f"(1 − {self.config.constraint_weight:g})·error + "
                f"{self.config.constraint_weight:g}·violation"
            )
            return chosen.params
        index, self.note = self.within_kappa(grid)
        return grid[index].params

    def within_kappa(self, grid: list[FrontPoint]) -> tuple[int, str]:
        """The index of `grid`'s model that `kappa_pick` picks on the training split, and a note
        that says which."""
        kappa = self.problem.constraint.kappa
        metrics = [
            self.problem.report_scores(
                self.problem.scores(point.params),
                "train",
                only=("accuracy", "constraint", "majority"),
            )
            for point in grid
        ]
        gaps = np.array([np.inf if m["constraint"] is None else m["constraint"] for m in metrics])
        accuracy = np.array([m["accuracy"] for m in metrics])
        majority = np.array([m["majority"] for m in metrics])
        index, reason = kappa_pick(gaps, accuracy, majority, kappa)
        return index, f"reported {grid[index].label}, {reason}"

    def selection_note(self) -> str:
        return super().selection_note() if self.fitted is None else self.note

    def front(self) -> list[FrontPoint]:
        """The models of the grid (none when fairlearn did not finish)."""
        return [] if self.fitted is None else self.grid(self.fitted)

    def end(self, fitted: GridSearch) -> tuple[StopCode, str]:
        return StopCode.CONVERGED, (
            f"GridSearch fitted the {len(fitted.predictors_)} models of its grid"
        )
