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
from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np
import torch

from engine.models import Params
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers.base import Solver, StepInfo
from engine.solvers.catalogue.p000_ssw import SSwConfig
from engine.solvers.switching import polyak_move, worst_row
from engine.status import StopCode

Item = TypeVar("Item")


class WeightedReservoir(Generic[Item]):
    """One item of a stream, item k kept with probability w_k / Σ_s w_s (paper 000, Alg. 3's
    output), without storing the stream: the k-th offer replaces the kept item with probability
    w_k / (w_1 + … + w_k). One uniform draw of `rng` per offer."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.total = 0.0
        self.item: Item | None = None

    def offer(self, weight: float, make: Callable[[], Item]) -> bool:
        """Offer the item `make()` (built only if kept) with `weight` > 0; True if it was kept."""
        self.total += weight
        if self.rng.random() * self.total >= weight:
            return False
        self.item = make()
        return True


def decayed(base: float, rule: str, k: int) -> float:
    """`base` ("constant") or base/√(k+1) ("diminishing"), paper 000 B.1.1 (its η_{k−1}/√k and
    ε_{k−1}/√k read as η0/√(k+1), spec 000 §2.3)."""
    return base if rule == "constant" else base / math.sqrt(k + 1)


class StochasticSwitching(Solver):
    """SSw (paper 000, Alg. 3); StepInfo.state has the branch, c̄, ε_k and the step taken."""

    def __init__(self, problem: Problem, config: SSwConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        start = problem.init_params(int(rng.integers(2**31)))
        self.params = {k: torch.from_numpy(v.copy()).requires_grad_() for k, v in start.items()}
        aux = problem.bound.aux_init(torch.from_numpy(problem.scores(start)))
        self.aux = {k: v.detach().clone().requires_grad_() for k, v in aux.items()}
        self.sampler = BatchSampler(problem.data.train.groups, problem.data.n_groups, rng)
        self.output: WeightedReservoir[Params] = WeightedReservoir(rng)
        self.k = 0
        self.objective_steps = 0

    def step(self) -> StepInfo:
        config, k = self.config, self.k
        epsilon = decayed(config.epsilon, config.tolerance_rule, k)
        zeta = self.sampler.per_group(config.per_group)
        with torch.no_grad():
            rows = self.problem.batch_constraint(self.params, zeta.rows, self.aux)
        _, c_bar = worst_row(rows.numpy())
        if c_bar <= epsilon:
            branch, (value, eta) = "objective", self._objective_step()
        else:
            branch, (value, eta) = "constraint", self._constraint_step()
        self.k += 1
        done = self.k >= config.iterations
        return StepInfo(
            iterations=1,
            objective=value,
            state={"branch": branch, "c_bar": c_bar, "epsilon": epsilon, "step": eta,
                   "objective_steps": float(self.objective_steps)},
            done=done,
            reason=f"all {self.k} iterations done" if done else "",
            stop=StopCode.ITERATION_CAP,
        )  # fmt: skip

    def _objective_step(self) -> tuple[float, float]:
        """x ← x − η^f_k ∇f(x, ξ); x_k joins the output's candidates when k ≥ k0.
        Returns the batch loss and η^f_k."""
        eta = decayed(self.config.objective_step, self.config.objective_rule, self.k)
        if self.k >= self.config.start_index:
            self.output.offer(eta, self._current)
        xi = self.sampler.objective(self.config.batch_size)
        value = self.problem.batch_objective(self.params, xi.rows)
        grads = torch.autograd.grad(value, list(self.params.values()))
        self._move(eta, dict(zip(self.params, grads, strict=True)))
        self.objective_steps += 1
        return float(value.detach()), eta

    def _constraint_step(self) -> tuple[float, float]:
        """x ← x − η^c_k ∇c_i(x, ζ') with i the most violated row of an independent batch ζ'.
        Returns the loss on ζ' (the iterate's objective as far as this step saw it) and η^c_k."""
        zeta = self.sampler.per_group(self.config.per_group)
        rows = self.problem.batch_constraint(self.params, zeta.rows, self.aux)
        worst, violation = worst_row(rows.detach().numpy())
        variables = {**self.params, **{f"aux.{k}": v for k, v in self.aux.items()}}
        grads = torch.autograd.grad(rows[worst], list(variables.values()), allow_unused=True)
        direction = {name: g for name, g in zip(variables, grads, strict=True) if g is not None}
        if self.config.constraint_rule == "adaptive":
            # Polyak c/‖S^c‖² (B.1.1); a row that is feasible on ζ' gives no move, not a step uphill
            norm_squared = float(sum(torch.sum(g * g) for g in direction.values()))
            eta = polyak_move(max(violation, 0.0), norm_squared, self.config.max_step).scale
        else:
            eta = decayed(self.config.constraint_step, self.config.constraint_rule, self.k)
        with torch.no_grad():
            value = self.problem.batch_objective(self.params, zeta.rows)
        self._move(eta, direction)
        return float(value), float(eta)

    def _move(self, eta: float, direction: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for name, grad in direction.items():
                target = self.aux[name[4:]] if name.startswith("aux.") else self.params[name]
                target -= eta * grad

    def _current(self) -> Params:
        params = {k: v.detach().numpy().copy() for k, v in self.params.items()}
        return params | {f"aux.{k}": v.detach().numpy().copy() for k, v in self.aux.items()}

    def candidate(self) -> Params:
        """Alg. 3's output: the reservoir's x_τ, P(τ = k) ∝ η^f_k over the objective steps
        k ≥ k0 so far; the current iterate while there is none."""
        kept = self.output.item
        return self._current() if kept is None else {k: v.copy() for k, v in kept.items()}
