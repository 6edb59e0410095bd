"""Plain minibatch SGD (paper 000, Sec. 2.4): x ← x − η ∇f(x, ξ) with ξ a uniform batch, the
unconstrained baseline of the stochastic solvers, for any model. Its step follows the gradient of
`batch_terms()`, which the penalised baselines (`engine.solvers.paper000.penalised_sgd`) extend
with a penalty."""

from __future__ import annotations

import numpy as np

from engine.problem import Problem
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper000.cards_sgd import SGDConfig


class SGD(MinibatchSolver):
    uses_constraint = False  # it ignores the constraint

    def __init__(self, problem: Problem, config: SGDConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.sampler = self.batch_sampler()
        self.last: tuple[float, float | None] = (np.nan, None)

    def batch_terms(self) -> tuple[float, float | None, np.ndarray]:
        """This step's objective estimate, the penalty added to it (plain SGD: none) and the
        gradient of their sum, from the step's minibatches, drawn here in order."""
        value, grad = self.oracles.objective(
            self.x, self.sampler.objective(self.config.batch_size).rows
        )
        return value, None, grad

    def iterate(self) -> float:
        value, penalty, grad = self.batch_terms()
        self.move(self.config.step, grad)
        self.last = (value, penalty)
        return value

    def state(self) -> dict[str, float | str]:
        value, penalty = self.last
        state: dict[str, float | str] = {"batch_loss": value}
        if penalty is not None:
            state["batch_penalty"] = penalty
        return state
