"""The solvers of paper 000 (stochastic constrained training of networks): their options with
the paper's defaults, and their cards. Implementations: `engine.solvers.paper000.sgd`."""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.options import Options, option
from engine.solvers.card import SolverCard


@dataclass(frozen=True)
class SGDConfig(Options):
    step: float = option(
        5e-3, "learning rate (paper 000's code, sgd.yaml: 5e-3; the paper states none)", above=0
    )
    batch_size: int = option(
        8, "rows per objective batch (paper 000's README command: --batch_size 8)", minimum=1
    )
    iterations: int = option(
        10**9, "iterations at most (paper 000 stops by wall clock: 30 s)", minimum=1
    )


CARDS = (
    SolverCard(
        "sgd",
        SGDConfig,
        "000",
        "minibatch SGD on the objective, no constraint (paper 000, Sec. 2.4 baseline); any model",
        "engine.solvers.paper000.sgd:SGD",
        constrained=False,
        needs={
            C.GRADIENTS: "it steps along backpropagated gradients",
            C.MINIBATCH_LOSS: "paper 000, Sec. 2.4: it steps on minibatches",
        },
    ),
)
