"""The solvers of paper 002 (badr: fairness-informed Pareto optimisation over group weights):
their options with the paper's defaults, and their cards.

Every one trains the weighted-sum scalarisation w*(λ) = argmin_w Σ_s λ_s F_s(w) of the group
losses, λ on the simplex; they differ in how λ is chosen. Their fairness is an upper-level
measure (option `measure`, engine.fairness.badr_measures), not a constraint: a run needs no
`--constraint`, and one given is ignored. Implementations: `engine.solvers.paper002.badr`,
`engine.solvers.paper002.badr_implicit`, `engine.solvers.paper002.badr_references`,
`engine.solvers.paper002.badr_fronts`.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.errors import UserError
from engine.fairness.badr_measures import BADR_MEASURES
from engine.options import Options, option
from engine.solvers.card import SolverCard, StatePanel

IMPLICIT_METHODS = ("slsqp", "frank_wolfe")


@dataclass(frozen=True)
class WeightedFitConfig(Options):
    """What every paper 002 run shares: the lower level's μ and the measure it is judged by."""

    measure: str = option(
        "dp", "the unfairness measure of paper 002, App. A", choices=tuple(BADR_MEASURES)
    )
    rho: float = option(
        1.0, "smoothing ρ of the dp, eopp and eodds measures (paper 002's code: 1)", above=0
    )
    l2: float = option(
        1e-2,
        "μ of the group losses' ridge term (μ/2)‖w‖², intercept unpenalised (paper 002, "
        "Exp 2 and 3, logistic regression: 1e-2; its ridge runs use 1e-1)",
        above=0,
    )


MINIMAX_METHODS = ("dual", "epigraph")


@dataclass(frozen=True)
class MinimaxConfig(WeightedFitConfig):
    method: str = option(
        "dual",
        "dual: SLSQP on the concave Lagrange dual over the simplex, with exact fits "
        "(ours: fast and reliable); epigraph: the epigraph by a conic solver, as paper 002's "
        "code does (slow on large data)",
        choices=MINIMAX_METHODS,
    )


@dataclass(frozen=True)
class UpperConfig(WeightedFitConfig):
    beta: float = option(
        0.0,
        "trade-off β of Φ_β = Fair + β·(ERM loss): 0 is badr, large β is ERM (spec 002 §5(b))",
        minimum=0,
    )


@dataclass(frozen=True)
class BadrGDConfig(UpperConfig):
    step_w: float | None = option(
        None,
        "ρ, the step of the w- and v-updates; unset: 1/L with L a bound on the lower "
        "level's smoothness over the whole simplex (ours; the paper tunes ρ by grid search and "
        "its code's default is 0.1, which diverges on unscaled data)",
        above=0,
    )
    step_lambda: float = option(
        1.0, "γ, the step on λ (paper 002's code: step_lambda = 1)", above=0
    )
    iterations: int = option(
        1000, "iterations at most (paper 002's code: max_iter = 1000)", above=0
    )
    tolerance: float = option(
        1e-7,
        "stop when the stationarity ‖(λ_t − λ_{t+1})/γ‖ and the lower level's gradient norm "
        "are both below this (ours; the paper runs a fixed number of iterations)",
        above=0,
    )


@dataclass(frozen=True)
class BadrSGDConfig(BadrGDConfig):
    step_lambda: float = option(
        2.0, "γ, the step on λ (paper 002's scalability runs: 2.0)", above=0
    )
    iterations: int = option(
        150, "iterations at most (paper 002's scalability runs: T = 150)", above=0
    )
    batch_size: int | None = option(
        None,
        "rows of every batch, drawn equally from each group without replacement; unset: "
        "n/20 (paper 002's scalability runs)",
        minimum=1,
    )
    clip: float = option(
        1.0, "C of the clipped λ-step Clip_C(d) = min(1, C/‖d‖)·d (Alg. 2: 1.0)", above=0
    )


@dataclass(frozen=True)
class BadrImplicitConfig(UpperConfig):
    method: str = option(
        "slsqp",
        "the method on the simplex: slsqp (paper 002's default, Fig. 3) or frank_wolfe",
        choices=IMPLICIT_METHODS,
    )
    iterations: int = option(
        500, "iterations at most (paper 002's code: SLSQP maxiter = 500)", above=0
    )
    starts: int = option(
        11,
        "weights tried before the descent, whose lowest Φ_β starts it: with two groups a grid "
        "of this many λ, with more the vertices, the centre and Dirichlet(1) draws up to this "
        "many (ours: Φ is multimodal, paper 002, Exp 1, and a descent from λ = 1/S often ends "
        "at the worse of two minima; 1 starts at 1/S as the paper's code does)",
        above=0,
    )
    tolerance: float = option(
        1e-10,
        "SLSQP's ftol (paper 002's code: 1e-10); Frank–Wolfe stops when its duality gap "
        "is below 1e-6 (the code's threshold, applied to the gap itself: spec 002 §4, defect 7)",
        above=0,
    )


FRONT_KNOBS = ("lambda", "beta")


@dataclass(frozen=True)
class FrontConfig(UpperConfig):
    knob: str = option(
        "lambda",
        "what varies along the front: lambda, the group weights of the weighted sum "
        "(paper 002, Exp 1–3), or beta, the trade-off of Φ_β = Fair + β·(ERM loss), each point "
        "minimised over λ (spec 002 §5(b)); both fronts are Pareto-efficient in the group losses",
        choices=FRONT_KNOBS,
    )
    points: int | None = option(
        None,
        "models on the front; unset: for lambda, a grid of 101 λ with two groups (paper "
        "002, Exp 1–2) and 200 Dirichlet(1) draws with more (Exp 3); for beta, 13 values: 0 and "
        "10^−3 … 10^3 (ours)",
        minimum=2,
    )


@dataclass(frozen=True)
class RegularisedPathConfig(WeightedFitConfig):
    strengths: int = option(10, "penalty strengths κ on the path (paper 002, Fig. 1: 10)", above=0)
    weakest: float = option(1e-6, "smallest κ (paper 002, Fig. 1: 1e-6)", above=0)
    strongest: float = option(0.2, "largest κ (paper 002, Fig. 1: 10^−0.7 ≈ 0.2)", above=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.weakest >= self.strongest:
            raise UserError("fair_reg needs weakest < strongest")


_NEEDS = {
    C.AFFINE_SCORES: "paper 002 trains ℓ2-regularised linear models (logistic, squared-hinge "
    "SVM, ridge) and differentiates their exact solution",
    C.CONVEX: "paper 002, Prop. 2: strongly convex group losses make every w*(λ) Pareto-efficient",
    C.MINIBATCH_LOSS: "each group loss F_s is a mean over the group's rows",
}

# what a paper 002 run's trajectory draws of its state: the group weights and losses, the
# smoothed measure of the upper level and its stationarity ‖(λ_t − λ_{t+1})/γ‖
BADR_PANELS = (
    StatePanel("lambda", "group weights λ<br>(paper 002, on the simplex)", per_row=True),
    StatePanel("group_loss", "group losses F_s(w)<br>(paper 002)", per_row=True),
    StatePanel("fair", "unfairness measure<br>(paper 002, smoothed: surrogate)", name="measure"),
    StatePanel(
        "stationarity", "stationarity in λ<br>(paper 002)", name="‖(λ_t − λ_{t+1})/γ‖", log=True
    ),
)


def _card(
    name: str, config: type, summary: str, implementation: str, front_words: str = ""
) -> SolverCard:
    return SolverCard(
        name,
        config,
        "002",
        summary,
        implementation,
        needs=_NEEDS,
        constrained=False,
        measure_option="measure",
        front_words=front_words,
        state_panels=BADR_PANELS,
    )


CARDS = (
    _card(
        "badr_gd",
        BadrGDConfig,
        "badr-gd (paper 002, Alg. 1): single-loop steps on w, the adjoint v (Hessian-vector "
        "products only) and λ on the simplex, minimising the measure over the group-loss "
        "Pareto front; then w*(λ) is refit exactly",
        "engine.solvers.paper002.badr:BadrGD",
    ),
    _card(
        "badr_sgd",
        BadrSGDConfig,
        "badr-sgd (paper 002, Alg. 2): badr-gd on group-balanced minibatches, an independent "
        "batch for each estimate, with clipped λ-steps",
        "engine.solvers.paper002.badr:BadrSGD",
    ),
    _card(
        "badr_implicit",
        BadrImplicitConfig,
        "the two-loop reference of paper 002: w*(λ) refit by Newton's method, the implicit "
        "gradient −∇F_sᵀH⁻¹∇Fair, and SLSQP or Frank–Wolfe on the simplex",
        "engine.solvers.paper002.badr_implicit:BadrImplicit",
    ),
    _card(
        "uniform",
        WeightedFitConfig,
        "reference of paper 002: equal group weights λ_s = 1/S",
        "engine.solvers.paper002.badr_references:Uniform",
    ),
    _card(
        "balanced",
        WeightedFitConfig,
        "reference of paper 002: weights λ_s ∝ 1/n_s",
        "engine.solvers.paper002.badr_references:Balanced",
    ),
    _card(
        "one_fit",
        WeightedFitConfig,
        "reference of paper 002: one group's loss alone (λ = e_s), the group whose model has "
        "the lowest measure on the training data",
        "engine.solvers.paper002.badr_references:OneFit",
    ),
    _card(
        "minimax",
        MinimaxConfig,
        "reference of paper 002: minimax group fairness, min_w max_s F_s(w); λ are the duals "
        "of its epigraph, found by the Lagrange dual or a conic solver",
        "engine.solvers.paper002.badr_references:Minimax",
    ),
    _card(
        "badr_front",
        FrontConfig,
        "the Pareto front of the group losses (paper 002, Exp 1–3): one model w*(λ) for each "
        "λ of a grid, or for each β of Φ_β; the run reports the one with the lowest Φ_β on "
        "the training data",
        "engine.solvers.paper002.badr_fronts:WeightedSumFront",
        "On a weighted-sum front (paper 002) every model is one that no group's loss can "
        "improve on without another group's loss growing; badr picks the fairest of them, the "
        "one with the lowest unfairness measure.",
    ),
    _card(
        "fair_reg",
        RegularisedPathConfig,
        "fairness regularisation (paper 002, Fig. 1): min_w Σ_s F_s/S + κ·Fair(w) along a "
        "path of κ, one model each; not Pareto-efficient in the group losses",
        "engine.solvers.paper002.badr_fronts:RegularisedPath",
        "fair_reg's models are the fairness-regularisation path (paper 002, Fig. 1), one per "
        "strength κ of the unfairness penalty; unlike a weighted-sum front they are not "
        "Pareto-efficient in the group losses.",
    ),
)
