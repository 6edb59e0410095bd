"""The single-loop switching subgradient method (SSG; Huang & Lin 2023, Alg. 1), paper 001's SSG
baseline of §5.1–5.2, on all training rows, any model.

Iteration t at θ_t, with G the family's surrogate rows (κ subtracted) and F the training loss:
  if max_j G_j(θ_t) ≤ ε:  θ_{t+1} = Π(θ_t − η ∇F(θ_t)),                t ∈ I (objective)
  else:                   θ_{t+1} = Π(θ_t − η_t ∇G_i(θ_t)), i the worst row,   t ∈ J (constraint)
with η_t = G_i(θ_t)/‖∇G_i(θ_t)‖² (Polyak) or a constant (`switching_step`, shared with paper 003's
SSG). Π is the family's boxes for its auxiliary variables (the weights are free). One forward
pass and one backward pass over the data per iteration (`FullData`).

Output (Alg. 1): θ_τ with τ drawn over I ∩ {S, …, T − 1}, P(τ = t) ∝ η: a weighted reservoir
(`TailSample`) keeps the draw without the iterates' history, with S the largest power of two at
most f·T since T is not known while a run stopped by seconds goes on. Before any objective
iteration from S on, the output is the current iterate; `output = "last"` reports θ_T.
"""

from __future__ import annotations

import numpy as np

from engine.models import Params
from engine.problem import Problem
from engine.solvers.full_data import FullData
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper001.cards_baselines import NETWORK_STEP, SSGHLConfig
from engine.solvers.smoothness import safe_step
from engine.solvers.switching import switching_step
from engine.solvers.tail_sample import TailSample


class SwitchingSubgradientHL(MinibatchSolver):
    """Huang & Lin (2023), Alg. 1, full batch. The state has the branch of the last step, the
    worst row's value ("violation"), the step taken, and how many steps each branch has taken
    ("branch.objective", "branch.constraint")."""

    def __init__(self, problem: Problem, config: SSGHLConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.full = FullData(self.oracles, problem)
        self.output: TailSample[Params] = TailSample(rng, config.start_fraction)
        self.polyak = config.constraint_rule == "polyak"
        self.objective_step = config.objective_step or safe_step(problem, NETWORK_STEP)
        self.constraint_step = config.constraint_step or self.objective_step
        self.objective_steps = 0
        self.last: dict[str, float | str] = {}

    def iterate(self) -> float:
        config = self.config
        point = self.full.point(self.x)
        step = switching_step(
            point.values,
            point.gradient,
            config.epsilon,
            self.objective_step,
            None if self.polyak else self.constraint_step,
            config.max_step,
        )
        if step.branch == "objective":
            self.objective_steps += 1
            if config.output == "random":  # Alg. 1's output: θ_t, t ∈ I, with weight η_t
                self.output.offer(self.t, step.scale, self.current)
        self.move(step.scale, step.direction)
        self.last = {"branch": step.branch, "violation": step.value, "step": float(step.scale)}
        return point.loss

    def state(self) -> dict[str, float | str]:
        steps = {"objective": self.objective_steps, "constraint": self.t - self.objective_steps}
        return self.last | {f"branch.{name}": float(count) for name, count in steps.items()}

    def candidate(self) -> Params:
        """θ_τ (or the current iterate while there is none from S on), or θ_T for "last"."""
        kept = self.output.item(self.t) if self.config.output == "random" else None
        return self.current() if kept is None else {k: v.copy() for k, v in kept.items()}
