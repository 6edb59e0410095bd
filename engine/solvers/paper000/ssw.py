"""Stochastic switching subgradient (SSw; paper 000, Alg. 3, after Huang & Lin 2023), any model.

Step k: the worst row c̄ = max_i c̄_i(x_k, ζ) of a constraint batch ζ (J rows of every group)
decides the branch. If c̄ ≤ ε_k, x ← x − η^f_k ∇f(x, ξ) on an objective batch ξ; otherwise
x ← x − η^c_k ∇c_i(x, ζ') on the most violated row i of an independent constraint batch ζ'. The
output is x_τ with P(τ = k) ∝ η^f_k over the objective-step iterations k ≥ k0, chosen on the fly
(`WeightedReservoir`). pSP's auxiliary θ is stepped with the weights, from
`bound.aux_init(scores of x_0)`.
"""

from __future__ import annotations

import math

import numpy as np

from engine.models import Params
from engine.problem import Problem
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper000.cards_ssw import SSwConfig
from engine.solvers.switching import polyak_move, worst_row
from engine.solvers.tail_sample import WeightedReservoir


def decayed(base: float, rule: str, k: int) -> float:
    """`base` ("constant") or base/√(k+1) ("diminishing"), paper 000 B.1.1 (its η_{k−1}/√k and
    ε_{k−1}/√k read as η0/√(k+1), spec 000 §2.3)."""
    return base if rule == "constant" else base / math.sqrt(k + 1)


class StochasticSwitching(MinibatchSolver):
    """SSw (paper 000, Alg. 3); the state has the branch, c̄, ε_k, the step taken and how many
    steps each branch has taken ("branch.objective", "branch.constraint")."""

    def __init__(self, problem: Problem, config: SSwConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.sampler = self.batch_sampler()
        self.output: WeightedReservoir[Params] = WeightedReservoir(rng)
        self.objective_steps = 0
        self.last: dict[str, float | str] = {}

    def iterate(self) -> float:
        config, k = self.config, self.t
        epsilon = decayed(config.epsilon, config.tolerance_rule, k)
        zeta = self.sampler.per_group(config.per_group)
        _, c_bar = worst_row(self.oracles.constraint(self.x, zeta.rows))
        if c_bar <= epsilon:
            branch, (value, eta) = "objective", self._objective_step()
        else:
            branch, (value, eta) = "constraint", self._constraint_step()
        self.last = {"branch": branch, "c_bar": c_bar, "epsilon": epsilon, "step": eta}
        return value

    def state(self) -> dict[str, float | str]:
        steps = {"objective": self.objective_steps, "constraint": self.t - self.objective_steps}
        return self.last | {f"branch.{name}": float(count) for name, count in steps.items()}

    def _objective_step(self) -> tuple[float, float]:
        """x ← x − η^f_k ∇f(x, ξ); x_k joins the output's candidates when k ≥ k0.
        Returns the batch loss and η^f_k."""
        eta = decayed(self.config.objective_step, self.config.objective_rule, self.t)
        if self.t >= self.config.start_index:
            self.output.offer(eta, self.current)
        xi = self.sampler.objective(self.config.batch_size)
        value, grad = self.oracles.objective(self.x, xi.rows)
        self.move(eta, grad)
        self.objective_steps += 1
        return value, eta

    def _constraint_step(self) -> tuple[float, float]:
        """x ← x − η^c_k ∇c_i(x, ζ') with i the most violated row of an independent batch ζ'.
        Returns the loss on ζ' (the iterate's objective as far as this step saw it) and η^c_k."""
        zeta = self.sampler.per_group(self.config.per_group)
        rows, gradient = self.oracles.constraint_linearised(self.x, zeta.rows)
        worst, violation = worst_row(rows)
        direction = gradient(np.eye(len(rows))[worst])
        if self.config.constraint_rule == "adaptive":
            # Polyak c/‖S^c‖² (B.1.1); a row that is feasible on ζ' gives no move, not a step uphill
            norm_squared = float(direction @ direction)
            eta = polyak_move(max(violation, 0.0), norm_squared, self.config.max_step).scale
        else:
            eta = decayed(self.config.constraint_step, self.config.constraint_rule, self.t)
        value = self.oracles.objective_value(self.x, zeta.rows)
        self.move(eta, direction)
        return value, float(eta)

    def candidate(self) -> Params:
        """Alg. 3's output: the reservoir's x_τ, P(τ = k) ∝ η^f_k over the objective steps
        k ≥ k0 so far; the current iterate while there is none."""
        kept = self.output.item
        return self.current() if kept is None else {k: v.copy() for k, v in kept.items()}
