"""Switching subgradient applied directly to the non-convex surrogate problem (paper 003, Alg. 3,
App. G.7): Alg. 2 with (g0, g, ε) replaced by (f0, max_i f_i, ε_t). It has no convergence
guarantee; the paper uses it to show what IDCA's convex inner approximations buy.

Oracle counts (paper 001 spec §5, `engine.oracles.OracleCounts`): a step scores every training
row and evaluates the surrogate rows once, then takes one gradient, of f0 on an objective step or
of the worst row on a constraint step.
"""

from __future__ import annotations

import numpy as np
import torch

from engine.models import Params
from engine.oracles import OracleCounts
from engine.problem import Problem
from engine.solvers.base import Solver, StepInfo
from engine.solvers.paper003.cards import SSGConfig
from engine.solvers.switching import polyak_move, worst_row
from engine.status import StopCode


class SwitchingSubgradient(Solver):
    """Switching subgradient on the non-convex surrogate problem (paper 003, Alg. 3)."""

    def __init__(self, problem: Problem, config: SSGConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.design = problem.design()
        self.w = problem.init_params()["w"]
        aux = problem.bound.aux_init(torch.from_numpy(self.design.matvec(self.w)))
        self.aux = {k: v.numpy().copy() for k, v in aux.items()}
        self.t = 0
        self.best: tuple[float, Params] | None = None
        self.counts = OracleCounts()

    def _tolerance(self) -> float:
        if self.config.tolerance == "static":
            return self.config.epsilon
        return self.config.c / (self.t + 1)

    def step(self) -> StepInfo:
        h = self.design.matvec(self.w)
        scores = torch.from_numpy(h).requires_grad_()
        aux = {k: torch.from_numpy(v).requires_grad_() for k, v in self.aux.items()}
        rows = self.problem.bound.surrogate(scores, aux)
        worst, violation = worst_row(rows.detach().numpy())
        loss, loss_grad = self.problem.loss_and_grad_scores(h)
        epsilon = self._tolerance()
        if violation <= epsilon:
            branch = "objective"
            if self.best is None or loss < self.best[0]:
                self.best = (loss, self._params(self.w, self.aux))
            d_w, d_aux, numerator = self.design.rmatvec(loss_grad), {}, epsilon
        else:
            branch = "constraint"
            rows[worst].backward()
            d_w = self.design.rmatvec(scores.grad.numpy())
            d_aux = {k: v.grad.numpy() for k, v in aux.items() if v.grad is not None}
            numerator = violation
        self.counts.tally(
            len(h),
            objective_gradients=int(branch == "objective"),
            constraint_values=1,
            constraint_gradients=int(branch == "constraint"),
        )
        norm_squared = d_w @ d_w + sum(d @ d for d in d_aux.values())
        move = polyak_move(numerator, norm_squared, self.config.max_step)
        self.w = self.w - move.scale * d_w
        for name, d in d_aux.items():
            self.aux[name] = self.aux[name] - move.scale * d
        self.t += 1
        done = self.t >= self.config.iterations or move.stationary
        reason = "stationary point" if move.stationary else f"all T = {self.t} iterations done"
        stop = StopCode.CONVERGED if move.stationary else StopCode.ITERATION_CAP
        return StepInfo(
            iterations=1,
            objective=loss,
            state={
                "branch": branch,
                "epsilon": epsilon,
                "violation": violation,
                "step": float(move.scale),
            }
            | self.counts.state(len(h)),
            done=done,
            reason=reason if done else "",
            stop=stop,
        )

    def candidate(self) -> Params:
        """Alg. 3's output: the nearly-feasible iterate with the smallest f0 (the current iterate
        while none has been nearly feasible yet)."""
        if self.best is None:
            return self._params(self.w, self.aux)
        return {k: v.copy() for k, v in self.best[1].items()}

    @staticmethod
    def _params(w: np.ndarray, aux: dict[str, np.ndarray]) -> Params:
        return {"w": w.copy(), **{f"aux.{k}": v.copy() for k, v in aux.items()}}
