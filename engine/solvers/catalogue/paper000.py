"""The solvers of paper 000 (stochastic constrained training of networks): their options with
the paper's defaults, and their cards. Implementations: `engine.solvers.sgd`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.errors import UserError
from engine.solvers.catalogue.card import SolverCard
from engine.solvers.options import option


@dataclass(frozen=True)
class SGDConfig:
    step: float = option(
        5e-3, "learning rate (paper 000's code, sgd.yaml: 5e-3; the paper states none)"
    )
    batch_size: int = option(
        8, "rows per objective batch (paper 000's README command: --batch_size 8)"
    )
    iterations: int = option(10**9, "iterations at most (paper 000 stops by wall clock: 30 s)")

    def __post_init__(self) -> None:
        if not (math.isfinite(self.step) and self.step > 0):
            raise UserError("SGD option step must be a finite number > 0")
        if self.batch_size < 1 or self.iterations < 1:
            raise UserError("SGD options batch_size and iterations must be at least 1")


CARDS = (
    SolverCard("sgd", SGDConfig, "000",
               "minibatch SGD on the objective, no constraint (paper 000, Sec. 2.4 baseline); "
               "any model", "engine.solvers.sgd:SGD", constrained=False, needs={
                   C.GRADIENTS: "it steps along backpropagated gradients",
                   C.MINIBATCH_LOSS: "paper 000, Sec. 2.4: it steps on minibatches",
               }),
)  # fmt: skip
