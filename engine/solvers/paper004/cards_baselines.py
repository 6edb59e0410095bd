"""Two of paper 004's baselines (App. E.2): the stochastic proxy-Lagrangian method of Cotter,
Jiang & Sridharan (2019) and the correlation penalty of Beutel et al. (2019), with their options
and cards. Implementations: `engine.solvers.paper004.proxy_lagrangian`,
`engine.solvers.paper004.corr_penalty`.

Paper 004 gives for both: minibatches of 100, learning rates tuned over {0.01, 0.1, 1} on
validation AUC, and the reported model chosen as for SFLS (App. E.3). It leaves open the proxy
of the constraints, η_λ and the penalty weight's candidates; ours are in the options' help.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.options import Options, option
from engine.solvers.card import SolverCard
from engine.solvers.paper004.cards_sfls import SELECTIONS
from engine.solvers.tuning import Score, TuningPlan

NETWORK_RATE = 0.1  # the unset learning rate where L_F is unknown (a network): ours, on Adult
_DERIVED_RATE = (
    "1/(2L_F) for a linear model, L_F = λ_max(X̃ᵀX̃)·(the pairwise loss's curvature) "
    "(`engine.solvers.smoothness`: 0.012 on Adult with cross-terms, 0.004 on Crime, where 0.1 "
    "diverges, as it does on 800 rows of Adult), else "
    f"{NETWORK_RATE:g}, chosen on Adult (1 diverges there, as plain SGD on the square loss does)"
)


@dataclass(frozen=True)
class _BaselineOptions(Options):
    """What both baselines take: the batch, the reported iterate and the step budget."""

    batch_size: int = option(
        100, "rows per SGD step, drawn uniformly (paper 004, App. E.3: 100)", minimum=1
    )
    select: str = option(
        "validation",
        "the reported iterate: 'validation', the best validation AUC among the iterates (every "
        "select_every steps) within κ on validation for the exact AUC gap (paper 004, "
        "App. E.3), else the judged one nearest to κ; 'last', the last iterate",
        choices=SELECTIONS,
    )
    select_every: int = option(
        100,
        "SGD steps between iterates judged on validation (App. E.3 tracks every iteration; a "
        "judgement is not charged to the run's clock; ours: 100, as SFLS's)",
        minimum=1,
    )
    iterations: int = option(10**9, "SGD steps at most (paper 004 gives no budget)", minimum=1)


@dataclass(frozen=True)
class ProxyLagrangianConfig(_BaselineOptions):
    step: float | None = option(
        None,
        "η_w, the constant learning rate of the w-player (Cotter et al. 2019, Alg. 2; paper 004, "
        f"App. E.3 tunes it over {{0.01, 0.1, 1}}); unset (None): {_DERIVED_RATE}",
        above=0,
    )
    dual_step: float = option(
        1.0,
        "η_λ of the λ-player's update M ← M ⊙ exp(η_λ ℓ λᵀ) on the indicator violations ℓ "
        "(Cotter et al. 2019, Alg. 2; paper 004 gives none; ours: 1, under which λ of a row "
        "violated by 0.05 grows e-fold against λ0 within about a hundred steps; on Adult, 0.1 "
        "to 100 selected about the same model)",
        above=0,
    )


@dataclass(frozen=True)
class CorrPenaltyConfig(_BaselineOptions):
    penalty: float = option(
        1.0,
        "λ, the weight of |Corr(h, γ)| (Beutel et al. 2019; paper 004 picks it from a candidate "
        "set it does not list; ours: 1, as |Corr| and the AUC loss are of the same order)",
        above=0,
    )
    step: float | None = option(
        None,
        "the constant SGD learning rate (paper 004, App. E.3 tunes it over {0.01, 0.1, 1}); "
        f"unset (None): {_DERIVED_RATE}",
        above=0,
    )


_SGD_GRADIENTS = "paper 004, App. E.2: one SGD step on w per minibatch, backpropagated"
# paper 004, App. E.3: the baselines' learning rates tuned on SFLS's grid, by validation AUC
_RATE_TUNING = TuningPlan({"step": (0.01, 0.1, 1.0)}, Score.AUC, "paper 004 App. E.3")

CARDS = (
    SolverCard(
        "proxy_lagrangian",
        ProxyLagrangianConfig,
        "004",
        "stochastic proxy-Lagrangian (Cotter, Jiang & Sridharan 2019, Alg. 2; paper 004, "
        "App. E.2): SGD on λ0 × the square pairwise AUC loss + Σ λ_j × hinge proxies of "
        "the AUC-gap rows, λ the stationary distribution of a matrix updated by swap "
        "regret on the rows' indicator (true AUC) violations; max AUC under the exact "
        "AUC gap; reports the best iterate within κ on validation (App. E.3), or the last",
        "engine.solvers.paper004.proxy_lagrangian:ProxyLagrangian",
        needs={
            C.GRADIENTS: _SGD_GRADIENTS,
            C.PAIRWISE_AUC: "paper 004, App. E.2: only the objective's indicator becomes "
            "the square surrogate (3)",
            C.AUC_PAIR_SETS: "paper 004, eq. (2) and App. A: each row compares the AUCs "
            "of two set pairs (G1, G1'), (G2, G2'), proxied and counted "
            "over the minibatch's pairs",
        },
        tuning=_RATE_TUNING,
    ),
    SolverCard(
        "corr_penalty",
        CorrPenaltyConfig,
        "004",
        "correlation penalty (Beutel et al. 2019; paper 004, App. E.2): SGD on the "
        "square pairwise AUC loss + λ |Corr(h, γ)|, the Pearson correlation of scores "
        "and protected group on the minibatch; max AUC with a decorrelation penalty; "
        "reports the best iterate within κ of the group AUC gap on validation "
        "(App. E.3), or the last",
        "engine.solvers.paper004.corr_penalty:CorrPenalty",
        needs={
            C.GRADIENTS: _SGD_GRADIENTS,
            C.PAIRWISE_AUC: "paper 004, App. E.2: it optimises the AUC, through the "
            "square surrogate (3)",
            C.AUC_PAIR_SETS: "paper 004, App. E.3: its iterates are judged by the exact "
            "group AUC gap of Ex. 1, whose sets (G1, G1') are the pair "
            "of groups it decorrelates",
        },
        tuning=_RATE_TUNING,
        auc_variants=("group",),
        auc_variants_why="paper 004, App. E.2: only Ex. 1 can be written as a penalty on "
        "the correlation of scores and group",
    ),
)
