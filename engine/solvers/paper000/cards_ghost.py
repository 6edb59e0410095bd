"""Paper 000's Stochastic Ghost (StGh, Alg. 1, after Facchinei & Kungurtsev 2023): its options with
the paper's Exp. 1 defaults, and its card. Implementation: `engine.solvers.paper000.ghost`."""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.errors import UserError
from engine.options import Options, option
from engine.solvers.card import SolverCard
from engine.solvers.tuning import Score, TuningPlan


@dataclass(frozen=True)
class GhostConfig(Options):
    p0: float = option(
        0.4,
        "p0 of the level N ~ Geom(p0) on {0, 1, …}, P(N = n) = (1 − p0)ⁿ p0, and J = 2^(N+1) "
        "(paper 000 Exp. 1: 0.4; ghost.yaml's alpha = 0.4). Without the cap max_batch the "
        "expected J diverges for p0 ≤ 0.5",
        above=0,
        below=1,
    )
    max_batch: int | None = option(
        None,
        "cap on J = 2^(N+1): N is redrawn while 2^(N+1) exceeds it, as the paper-era code does "
        "(the paper is silent). Unset: the largest training group, the code's cap (for families "
        "sampled by (group, label) cell, the largest cell). Eq. 9 then "
        "divides by the truncated P(N = n | 2^(N+1) ≤ cap), so d is unbiased for the direction "
        "of the capped batch (the code divides by the untruncated probability: spec 000 §2.1)",
        minimum=2,
    )
    alpha0: float = option(0.05, "α0, the first step size (paper 000 Exp. 1: 0.05)", above=0)
    alpha_hat: float = option(
        0.05,
        "α̂ of the step rule α_k = α_(k−1)(1 − α̂ α_(k−1)) (the code's 'dimin'; paper 000 "
        "Exp. 1: 0.05; ghost.yaml: gamma0 = 0.02, zeta = 0.001)",
        minimum=0,
    )
    rho: float = option(
        0.8,
        "ρ, the box ‖d‖∞ ≤ ρ of κ's LP (paper 000 Exp. 1 main text and ghost.yaml: 0.8; its "
        "appendix B.1.3 says 0.1). Passed as ρ: the paper-era code swaps ρ and λ in its "
        "compute_kappa call (spec 000 §2.1), which is not reproduced",
        above=0,
    )
    tau: float = option(1.0, "τ, the weight of (τ/2)‖d‖² in the QP (paper 000 Exp. 1: 1)", above=0)
    beta: float = option(
        20.0, "β, the box ‖d‖∞ ≤ β of the QP (paper 000 Exp. 1: 20; ghost.yaml: 10)", above=0
    )
    lam: float = option(
        0.5,
        "λ, the weight of the linearized term in κ = (1 − λ) max[c]₊ + λ·LP (paper 000 Exp. 1: "
        "0.5)",
        minimum=0,
        maximum=1,
    )
    iterations: int = option(
        10**9, "iterations at most (paper 000 stops by wall clock: 30 s)", minimum=1
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.alpha_hat * self.alpha0 >= 1:
            raise UserError("Stochastic Ghost options need 0 ≤ alpha_hat·alpha0 < 1")


CARDS = (
    SolverCard(
        "stochastic_ghost",
        GhostConfig,
        "000",
        "Stochastic Ghost (paper 000, Alg. 1, after Facchinei & Kungurtsev 2023): a "
        "stochastic SQP step d = argmin gᵀd + (τ/2)‖d‖² s.t. c + ∇c d ≤ κ, ‖d‖∞ ≤ β, "
        "estimated without bias by a randomized multilevel batch of J = 2^(N+1) rows "
        "(eq. 9), with diminishing steps; one backward per constraint row, 4 LPs and 4 "
        "QPs in n variables per step, so slow for large models; any model",
        "engine.solvers.paper000.ghost:StochasticGhost",
        needs={
            C.GRADIENTS: "one backward per constraint row",
            C.MINIBATCH_LOSS: "paper 000, Alg. 1, eq. 9: g is estimated on i.i.d. rows",
            C.SURROGATE: "paper 000, eq. 8: its QP linearises the rows",
        },
        tuning=TuningPlan(
            {"alpha0": (0.01, 0.025, 0.05), "beta": (5.0, 10.0, 20.0)},
            Score.LOSS,
            "paper 000 Table 7, at α̂ = 0.05, ρ = 0.1",
        ),
    ),
)
