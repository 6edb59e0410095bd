"""fairlearn's mitigators as comparators: ExponentiatedGradient and GridSearch (Agarwal et al.
2018, "A reductions approach to fair classification") and ThresholdOptimizer (Hardt et al. 2016,
"Equality of opportunity in supervised learning"), run by fairlearn itself with scikit-learn's
logistic regression as the base estimator. Their options with fairlearn's (and scikit-learn's)
defaults, and their cards. Implementations: `engine.solvers.fairlearn.fairlearn_reductions` and
`engine.solvers.fairlearn.fairlearn_threshold`.

What every card says once: fairlearn's randomised classifiers predict ŷ = 1 with a probability
P(ŷ = 1 | x); FairFront scores them by P − ½, so its exact metrics at the threshold 0 are those of
the majority vote (ŷ = 1 when P > ½), while fairlearn's `predict` draws ŷ at random; pSP and the
other rank measures are computed on these probabilities, which take few distinct values.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.options import Options, option
from engine.solvers.card import SolverCard

# fairlearn's ThresholdOptimizer: the performance objectives it accepts under a constraint on one
# rate, and those it accepts under equalized odds (fairlearn.postprocessing, 0.15)
THRESHOLD_OBJECTIVES = (
    "accuracy_score",
    "balanced_accuracy_score",
    "selection_rate",
    "true_positive_rate",
    "true_negative_rate",
)
EQUALIZED_ODDS_OBJECTIVES = ("accuracy_score", "balanced_accuracy_score")
# where the base model's scores are thresholded: its probability (fairlearn's "auto" on a
# LogisticRegression) or its log-odds
PREDICT_METHODS = ("predict_proba", "decision_function")
# which model of GridSearch's grid a run reports: by κ on the training split, or fairlearn's pick
GRID_SELECTIONS = ("kappa", "fairlearn")


@dataclass(frozen=True)
class LogisticBaseConfig(Options):
    """The base estimator every fairlearn mitigator here fits: scikit-learn's LogisticRegression
    with L-BFGS (deterministic: it draws no random numbers), as fairlearn's examples use it."""

    C: float = option(
        1.0,
        "C, the inverse strength of the base logistic regression's l2 penalty "
        "(scikit-learn's default)",
        above=0,
    )
    base_max_iter: int = option(
        100,
        "L-BFGS iterations of one base fit at most (scikit-learn's default max_iter)",
        minimum=1,
    )


@dataclass(frozen=True)
class ExponentiatedGradientConfig(LogisticBaseConfig):
    eps: float = option(
        0.01, "ε: the multipliers' L1 norm is at most B = 1/ε (fairlearn's default)", above=0
    )
    max_iter: int = option(
        50,
        "exponentiated-gradient iterations at most (fairlearn's default); each fits the "
        "base estimator one to five times",
        minimum=1,
    )
    nu: float | None = option(
        None,
        "ν, the duality gap at which it stops; unset: fairlearn's automatic ν, "
        "½·std|h₀(x) − y|/√n of its first classifier h₀",
        above=0,
    )
    eta0: float = option(2.0, "η₀, the initial learning rate (fairlearn's default)", above=0)


@dataclass(frozen=True)
class GridSearchConfig(LogisticBaseConfig):
    grid_size: int = option(10, "multiplier vectors on the grid (fairlearn's default)", minimum=1)
    grid_limit: float = option(
        2.0,
        "largest multiplier on the grid, which spans [−limit, limit] (fairlearn's default)",
        above=0,
    )
    constraint_weight: float = option(
        0.5,
        "weight of the largest constraint violation against 1 − it on the error rate in "
        "fairlearn's rule that picks the model, select 'fairlearn' (fairlearn's default)",
        minimum=0,
        maximum=1,
    )
    select: str = option(
        "kappa",
        "the model of the grid reported: 'kappa', the most accurate on the training "
        "split whose exact gap there is within κ (none within κ: the one of the smallest gap); "
        "'fairlearn', the one of least (1 − w)·error + w·violation, w the constraint_weight, a "
        "rule that does not use κ",
        choices=GRID_SELECTIONS,
    )


@dataclass(frozen=True)
class ThresholdOptimizerConfig(LogisticBaseConfig):
    objective: str = option(
        "accuracy_score",
        "the performance it maximises over the thresholds (fairlearn's "
        "default); under EO accuracy_score or balanced_accuracy_score only",
        choices=THRESHOLD_OBJECTIVES,
    )
    grid_size: int = option(
        1000,
        "points of the grid of the constrained rate in [0, 1] (fairlearn's default)",
        minimum=1,
    )
    flip: bool = option(
        False, "also consider rules that predict positive below a threshold (fairlearn's default)"
    )
    predict_method: str = option(
        "predict_proba",
        "the base model's output that is thresholded: its probability "
        "(fairlearn's 'auto' takes it from a logistic regression) or its log-odds",
        choices=PREDICT_METHODS,
    )


_S = "engine.solvers.fairlearn."
_BASE = (
    "its base estimator is scikit-learn's logistic regression, a linear model of the "
    "features, group cross-terms included when the model has them"
)
_MOMENTS = (
    "fairlearn bounds DP as DemographicParity, EO as EqualizedOdds and EOpp as "
    "TruePositiveRateParity"
)
_CLASSIFIER = "fairlearn's mitigators for classification predict a 0/1 label"
_BOUND = (
    "b is set so that the largest gap between two groups is at most κ: b = κ·(1 − the "
    "smaller group's share) with two groups (exact), κ/2 with more (conservative)"
)
_VOTE = (
    "FairFront scores its randomised classifier by P(ŷ = 1 | x) − ½: exact metrics are "
    "those of its majority vote (fairlearn's predict draws ŷ at random), pSP is computed on "
    "these probabilities, which take few distinct values"
)

CARDS = (
    SolverCard(
        "exponentiated_gradient",
        ExponentiatedGradientConfig,
        "fairlearn",
        "fairlearn's ExponentiatedGradient (Agarwal et al. 2018): a randomised classifier, "
        "a mixture of logistic regressions, under DP, EO or EOpp; fairlearn holds each "
        f"group's rate within a bound b of the overall rate, {_BOUND}; {_VOTE}",
        _S + "fairlearn_reductions:ExponentiatedGradientSolver",
        needs={
            C.AFFINE_SCORES: _BASE,
            C.RATE_MOMENTS: _MOMENTS,
        },
        classifier_only=_CLASSIFIER,
    ),
    SolverCard(
        "grid_search",
        GridSearchConfig,
        "fairlearn",
        "fairlearn's GridSearch (Agarwal et al. 2018, Sec. 3.4): one logistic regression "
        "per Lagrange multiplier λ on a grid, every one of them the run's front; it "
        "reports the most accurate on the training split within κ there (option select; "
        "fairlearn's own pick, least (1 − w)·error + w·violation, does not use κ); a "
        "plain linear model, scored by its log-odds",
        _S + "fairlearn_reductions:GridSearchSolver",
        needs={
            C.AFFINE_SCORES: _BASE,
            C.RATE_MOMENTS: _MOMENTS,
        },
        classifier_only=_CLASSIFIER,
        front_words="GridSearch's front is its grid: one logistic regression per "
        "Lagrange multiplier λ; the run reports the most accurate of them whose training "
        "gap is within κ (option select = kappa) or fairlearn's own pick (select = "
        "fairlearn).",
    ),
    SolverCard(
        "threshold_optimizer",
        ThresholdOptimizerConfig,
        "fairlearn",
        "fairlearn's ThresholdOptimizer (Hardt et al. 2016): the unconstrained logistic "
        "regression, then randomised thresholds per group that maximise the objective "
        "with the groups' rates (DP: positive, EOpp: true positive) at most κ apart "
        "(EO: both rates equal, fairlearn allows no tolerance there); needs the group at "
        f"prediction time; {_VOTE}",
        _S + "fairlearn_threshold:ThresholdOptimizerSolver",
        needs={
            C.AFFINE_SCORES: _BASE,
            C.RATE_MOMENTS: "fairlearn's ThresholdOptimizer matches the positive rates "
            "(demographic_parity), the true positive rates "
            "(true_positive_rate_parity) or both rates (equalized_odds)",
        },
        classifier_only=_CLASSIFIER,
    ),
)
