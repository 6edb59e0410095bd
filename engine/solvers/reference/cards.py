"""The unconstrained reference: its options and its card. Implementation:
`engine.solvers.reference.unconstrained`. The solvers that train an unconstrained model first
(paper 004's post-processing, reweighing, group thresholds) take its options as theirs.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.options import Options, option
from engine.solvers.card import SolverCard


@dataclass(frozen=True)
class UnconstrainedConfig(Options):
    l2: float = option(0.0, "ridge penalty l2/2·‖w‖² (0: plain maximum likelihood)", minimum=0)
    max_iterations: int = option(2000, "L-BFGS iterations at most", minimum=1)
    tolerance: float = option(
        1e-8,
        "stop when an L-BFGS iteration changes the loss (or the weights) by less than this",
        above=0,
    )
    chunk: int = option(25, "L-BFGS iterations per logged step", minimum=1)


CARDS = (
    SolverCard(
        "unconstrained",
        UnconstrainedConfig,
        "reference",
        "unconstrained minimisation of the objective (the logistic loss unless chosen; "
        "ridge regression for a real-valued label) by L-BFGS (the frontier's start)",
        "engine.solvers.reference.unconstrained:Unconstrained",
        constrained=False,
        needs={
            C.GRADIENTS: "L-BFGS on the parameters of any model",
            C.SMOOTH: "L-BFGS with a strong-Wolfe line search",
        },
    ),
)
