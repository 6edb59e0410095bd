"""Paper 000's stochastic switching subgradient (SSw, Alg. 3, after Huang & Lin 2023): its options
with the paper's Exp. 1 defaults, and its card. Implementation: `engine.solvers.paper000.ssw`."""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.options import Options, option
from engine.solvers.card import SolverCard
from engine.solvers.tuning import Score, TuningPlan

STEP_RULES = ("constant", "diminishing", "adaptive")
TOLERANCE_RULES = ("constant", "diminishing")


@dataclass(frozen=True)
class SSwConfig(Options):
    objective_rule: str = option(
        "constant",
        "η^f_k rule: 'constant' (η^f) or 'diminishing' (η^f/√(k+1)) (paper 000 B.1.1; Exp. 1: "
        "constant). 'adaptive' is a constraint-step rule only (Polyak c/‖S^c‖²)",
        choices=STEP_RULES[:2],
    )
    objective_step: float = option(
        0.05, "η^f, the objective step (paper 000 Exp. 1: 0.05)", above=0
    )
    constraint_rule: str = option(
        "constant",
        "η^c_k rule: 'constant' (η^c), 'diminishing' (η^c/√(k+1)) or 'adaptive' (Polyak: "
        "c(x,ζ)/‖S^c(x,ζ)‖²) (paper 000 B.1.1; Exp. 1: constant, Exp. 2: diminishing, η^c = 0.25)",
        choices=STEP_RULES,
    )
    constraint_step: float = option(
        0.04, "η^c, the constraint step (paper 000 Exp. 1: 0.04; unused by 'adaptive')", above=0
    )
    tolerance_rule: str = option(
        "constant",
        "ε_k rule: 'constant' (ε0) or 'diminishing' (ε0/√(k+1); the paper's ε_{k−1}/√k is read as "
        "this, spec 000 §2.3) (paper 000 B.1.1)",
        choices=TOLERANCE_RULES,
    )
    epsilon: float = option(
        0.01, "ε0, the switching tolerance (paper 000 B.1.1: ε0 = 0.01)", minimum=0
    )
    batch_size: int = option(
        8, "rows per objective batch ξ (paper 000's README command: --batch_size 8)", minimum=1
    )
    per_group: int = option(
        8,
        "J, rows of every group per constraint batch ζ (paper 000's code: batch_size per group)",
        minimum=1,
    )
    start_index: int = option(
        0,
        "k0: objective steps from iteration k0 on may be the output (paper 000 Alg. 3)",
        minimum=0,
    )
    max_step: float = option(
        10.0,
        "longest move of an 'adaptive' constraint step (guards the Polyak length as ‖S^c‖ → 0)",
        above=0,
    )
    iterations: int = option(
        10**9, "iterations at most (paper 000 stops by wall clock: 30 s)", minimum=1
    )


CARDS = (
    SolverCard(
        "ssw",
        SSwConfig,
        "000",
        "stochastic switching subgradient (paper 000, Alg. 3): an objective step when the "
        "sampled worst constraint is within ε_k, else a step on an independent sample's "
        "most violated row; reports a random objective-step iterate; any model",
        "engine.solvers.paper000.ssw:StochasticSwitching",
        needs={
            C.GRADIENTS: "it steps along backpropagated subgradients",
            C.MINIBATCH_LOSS: "paper 000, Alg. 3: objective steps use a batch ξ",
            C.SURROGATE: "paper 000, Alg. 3: constraint steps follow the most violated row",
        },
        warm_start="paper 000, Alg. 3 starts from any x⁰: a step along the most "
        "violated row while one is, along the objective once none is",
        tolerance_option="epsilon",
        tuning=TuningPlan(
            {"constraint_step": (0.05, 0.045, 0.04, 0.025)},
            Score.LOSS,
            "paper 000 Table 5, constant steps with η^f = 0.05",
        ),
    ),
)
