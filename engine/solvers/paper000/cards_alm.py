"""Paper 000's stochastic smoothed and linearized augmented Lagrangian (SSL-ALM, Alg. 2, after
Huang, Zhang & Alacaoglu 2025) and its μ = 0 special case ALM: their options with the paper's
Exp. 1 defaults, and their cards. Implementation: `engine.solvers.paper000.alm` (one class for
both, in either form of the augmented Lagrangian, `AUGMENTATIONS`)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.errors import UserError
from engine.options import Options, option
from engine.solvers.card import SolverCard
from engine.solvers.tuning import Score, TuningPlan

# "slack": paper 000, Alg. 2 (c + s = 0, s ≥ 0); "hpr": Hestenes–Powell–Rockafellar (y ≥ 0)
AUGMENTATIONS = ("slack", "hpr")


@dataclass(frozen=True)
class SSLALMConfig(Options):
    mu: float = option(
        2.0, "μ, weight of the proximal term (μ/2)‖x − z‖² (paper 000 Exp. 1: 2)", minimum=0
    )
    rho: float = option(
        1.0,
        "ρ, weight of the augmented term (ρ/2)‖c + s‖² (paper 000 Exp. 1: 1); for 'hpr' the ρ "
        "of L_ρ, which must then be > 0",
        minimum=0,
    )
    tau: float = option(
        0.01, "τ, the primal step (paper 000 Exp. 1 and Table 6's choice: 0.01)", above=0
    )
    eta: float = option(
        0.05, "η, the dual step (paper 000 Exp. 1 and Table 6's choice: 0.05)", above=0
    )
    beta: float = option(
        0.5,
        "β, the smoothing step z ← z + β(x − z) (paper 000 Exp. 1: 0.5)",
        minimum=0,
        maximum=1,
    )
    dual_bound: float = option(
        10.0,
        "M_y: the duals y are reset to 0 when ‖y‖₂ ≥ M_y (paper 000 Alg. 2, step 3; the "
        "paper-era code's norm test with lambda_bound = 10, not 0.1.0's per-coordinate reset at "
        "25)",
        above=0,
    )
    batch_size: int = option(
        8, "rows per objective batch ξ (paper 000's README command: --batch_size 8)", minimum=1
    )
    per_group: int = option(
        8,
        "J, rows of every group in each of the two constraint batches ζ1, ζ2 (paper 000's code: "
        "batch_size per group)",
        minimum=1,
    )
    iterations: int = option(
        10**9, "iterations at most (paper 000 stops by wall clock: 30 s)", minimum=1
    )
    augmentation: str = option(
        "slack",
        "the augmented Lagrangian of c ≤ 0: 'slack' (paper 000, Alg. 2: c + s = 0 with slacks "
        "s ≥ 0 in x, duals y free, L_ρ = f + yᵀ(c + s) + (ρ/2)‖c + s‖²) or 'hpr': the "
        "Hestenes–Powell–Rockafellar augmented Lagrangian for inequalities (what "
        "humancompatible-train 0.4.2 runs for is_ineq=True with penalty > 0, spec 000 §5 item 1, "
        "unless its augmentation='quadratic' is passed): no slacks, "
        "L_ρ = f + (1/(2ρ)) Σ_i (max(0, y_i + ρc_i)² − y_i²), duals y ← max(0, y + ηc) "
        "(Rockafellar 1973; Bertsekas 1982, §3.1)",
        choices=AUGMENTATIONS,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.augmentation == "hpr" and self.rho == 0:
            raise UserError("SSL-ALM option rho must be > 0 for 'hpr': L_ρ divides by ρ")


@dataclass(frozen=True)
class ALMConfig(SSLALMConfig):
    mu: float = option(
        0.0,
        "μ = 0: plain stochastic linearized ALM, no proximal term (paper 000: ALM is SSL-ALM with "
        "μ = 0, all else the same; alm.yaml's beta = 1 is then irrelevant)",
        minimum=0,
    )


_IMPLEMENTATION = "engine.solvers.paper000.alm:SSLALM"
# paper 000, Table 6: τ × η at ρ = 1, each 5 × 30 s, chosen by validation loss and violation
_TUNING = TuningPlan({"tau": (0.05, 0.01), "eta": (0.05, 0.01)}, Score.LOSS, "paper 000 Table 6")
_START = "paper 000, Alg. 2 starts from any primal x⁰; its duals start at 0 as from a cold start"
_NEEDS = {
    C.GRADIENTS: "it steps along backpropagated gradients",
    C.MINIBATCH_LOSS: "paper 000, Alg. 2: its primal step uses a batch ξ",
    C.SURROGATE: "paper 000, Alg. 2: its steps linearise the rows",
}
_SUMMARY = (
    "slack variables s ≥ 0 turn c ≤ 0 into c + s = 0; dual step y ← y + η(c(x,ζ1) + s), "
    "reset to 0 when ‖y‖ ≥ M_y, then a projected step on the augmented Lagrangian with "
    "an independent batch ζ2 in the ρ term (augmentation='hpr': no slacks, the "
    "Hestenes–Powell–Rockafellar form with duals y ≥ 0, what humancompatible-train 0.4.2 runs for "
    "is_ineq=True with penalty > 0, spec 000 §5 item 1); reports the last iterate; any model"
)
CARDS = (
    SolverCard(
        "ssl_alm",
        SSLALMConfig,
        "000",
        "stochastic smoothed linearized augmented Lagrangian (paper 000, Alg. 2): "
        + _SUMMARY
        + "; proximal term (μ/2)‖x − z‖² with z ← z + β(x − z)",
        _IMPLEMENTATION,
        needs=_NEEDS,
        warm_start=_START,
        tuning=_TUNING,
    ),
    SolverCard(
        "alm",
        ALMConfig,
        "000",
        "stochastic linearized augmented Lagrangian (paper 000's ALM: Alg. 2 with μ = 0): "
        + _SUMMARY,
        _IMPLEMENTATION,
        needs=_NEEDS,
        warm_start=_START,
        tuning=_TUNING,
    ),
)
