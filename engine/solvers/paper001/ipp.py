"""The inexact proximal point method (IPP; Boob, Deng & Lan 2022; Huang & Lin 2023), paper 001's
IPP-SSG and IPP-ConEx baselines of §5.1–5.2, on all training rows, any model.

Outer iteration k from θ_k approximately solves the subproblem

    min F(θ) + (ρ̂/2)‖θ − θ_k‖²   s.t.   G_j(θ) + (ρ̂/2)‖θ − θ_k‖² ≤ 0  (every row j),

strongly convex for ρ̂ above the weak-convexity modulus of F and G, by a fixed number of inner
iterations of an inner solver started at θ_k, and θ_{k+1} is the inner solver's weighted average.
θ is the model's weights and the family's auxiliary variables (kept in their boxes). The inner
solvers (`SwitchingInner`, `ConExInner`) share the primal steps of the strongly convex analyses,
with μ = ρ̂ and the first step α0 an option:

    α_t = 1/(1/α0 + ρ̂t/2) = 2/(ρ̂(t + t0)),   t0 = 2/(ρ̂α0),

and average iterate x_j with weight ∝ 1/α_j ∝ j + t0 (t from 0 in every subproblem).

- IPP-SSG (Huang & Lin 2023): switching steps (`switching_step`, shared with SSG) on the
  subproblem's rows with tolerance ε: an objective step α_t along ∇F_k, else a step along the
  worst row's ∇G_k, of Polyak's length G_k/‖∇G_k‖² or α_t. The output averages the objective
  iterates x_t (t ∈ I), weight 1/α_t; without one, the last inner iterate.
- IPP-ConEx (Boob, Deng & Lan 2022, ConEx): with ℓ(x_t) = G_k(x_{t−1}) + J_{G_k}(x_{t−1})(x_t −
  x_{t−1}) the rows' linearisation at the previous iterate (x_{−1} = x_0, so ℓ(x_0) = G_k(x_0)),
  γ_t = 1/α_{t+1}, ϑ_t = γ_{t−1}/γ_t and 1/τ_t = σ0 γ_t/γ_0 (γ_t τ_t constant, the strongly
  convex schedule's shape),
      s_t     = (1 + ϑ_t) ℓ(x_t) − ϑ_t ℓ(x_{t−1})
      y_{t+1} = [y_t + s_t/τ_t]₊
      x_{t+1} = Π(x_t − α_t(∇F_k(x_t) + J_{G_k}(x_t)ᵀ y_{t+1}))
  and the output Σ γ_t x_{t+1} / Σ γ_t. The linearisation of G is taken in the scores and the
  auxiliary variables (`FullPoint.change_to`): exactly J_G(x_{t−1})(x_t − x_{t−1}) for a linear
  model, whose scores are affine in the weights; for an MLP the change of the scores stands for
  their directional derivative. The duals start at 0 and carry over from one subproblem to the
  next (ours: a warm start).

The run's output (both papers) is an outer iterate drawn at random, here uniformly over the outer
iterations k ≥ S with S the largest power of two at most f·K, K the outer iterations so far
(`TailSample`: K is not known while a run stopped by seconds goes on); θ_0 before the first
subproblem ends; `output = "last"` reports θ_K. Each inner iteration is one forward and one
backward pass over the data (`FullData`) and counts as one iteration of the run.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from engine.models import Params
from engine.problem import Problem
from engine.solvers.full_data import FullData, FullPoint
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper001.cards_baselines import (
    NETWORK_STEP,
    IPPConExConfig,
    IPPConfig,
    IPPSSGConfig,
)
from engine.solvers.records import DUAL, per_row
from engine.solvers.smoothness import safe_step
from engine.solvers.switching import switching_step
from engine.solvers.tail_sample import TailSample

Stepper = Callable[[float, np.ndarray], np.ndarray]  # (step, direction) ↦ the new iterate


class RegularisedPoint:
    """F_k, G_k = F, G + (ρ̂/2)‖x − θ_k‖² at one point x, from the full-data point there."""

    def __init__(self, base: FullPoint, center: np.ndarray, rho_hat: float) -> None:
        self.base, self.x, self.rho_hat = base, base.x, rho_hat
        self.offset = base.x - center
        prox = 0.5 * rho_hat * float(self.offset @ self.offset)
        self.loss, self.values = base.loss + prox, base.values + prox

    def gradient(self, objective: float, lam: np.ndarray | None) -> np.ndarray:
        """objective·∇F_k + J_{G_k}ᵀλ: the prox term adds ρ̂(objective + Σλ)(x − θ_k)."""
        weight = objective + (0.0 if lam is None else float(np.sum(lam)))
        return self.base.gradient(objective, lam) + self.rho_hat * weight * self.offset

    def linear_at(self, other: RegularisedPoint) -> np.ndarray:
        """ℓ(x') = G_k(x) + J_{G_k}(x)(x' − x) at x' = `other.x`, G's part linearised in the
        scores (`FullPoint.change_to`)."""
        step = other.x - self.x
        return (
            self.values + self.base.change_to(other.base) + self.rho_hat * float(self.offset @ step)
        )


class InnerSolver(ABC):
    """A fixed number of iterations on subproblem k, then a weighted average."""

    def __init__(self, config: IPPConfig, rows: tuple[str, ...], first_step: float) -> None:
        self.config, self.rows, self.first_step = config, rows, first_step
        self.last: dict[str, float | str] = {}
        self.start()

    def primal_step(self, t: int) -> float:
        """α_t = 1/(1/α0 + ρ̂t/2) (the module's schedule), α0 = `first_step`."""
        return 1.0 / (1.0 / self.first_step + 0.5 * self.config.rho_hat * t)

    def start(self) -> None:
        """A new subproblem: the average restarts."""
        self.total, self.weight = 0.0, 0.0

    def average(self, weight: float, x: np.ndarray) -> None:
        self.total = self.total + weight * x
        self.weight += weight

    def output(self, last: np.ndarray) -> np.ndarray:
        """The weighted average of the subproblem's iterates (`last`, the last inner iterate,
        when nothing was averaged)."""
        return last.copy() if self.weight == 0 else self.total / self.weight

    @abstractmethod
    def step(self, point: RegularisedPoint, t: int, move: Stepper) -> None:
        """Inner iteration t at `point`; `move` takes the step and returns the new iterate."""

    def state(self) -> dict[str, float | str]:
        return dict(self.last)

    def multipliers(self) -> np.ndarray | None:
        """The subproblem's multipliers, one per row; None for an inner solver without them."""
        return None


class SwitchingInner(InnerSolver):
    """IPP-SSG's inner solver: switching subgradient steps on the strongly convex subproblem."""

    def __init__(self, config: IPPSSGConfig, rows: tuple[str, ...], first_step: float) -> None:
        super().__init__(config, rows, first_step)
        self.branches = {"objective": 0, "constraint": 0}

    def step(self, point: RegularisedPoint, t: int, move: Stepper) -> None:
        config, alpha = self.config, self.primal_step(t)
        constraint_step = None if config.constraint_rule == "polyak" else alpha
        step = switching_step(
            point.values, point.gradient, config.epsilon, alpha, constraint_step, config.max_step
        )
        if step.branch == "objective":  # the output averages x_t, t ∈ I, with weight 1/α_t
            self.average(1.0 / alpha, point.x)
        self.branches[step.branch] += 1
        move(step.scale, step.direction)
        self.last = {"branch": step.branch, "violation": step.value, "step": float(step.scale)}

    def state(self) -> dict[str, float | str]:
        return self.last | {f"branch.{name}": float(n) for name, n in self.branches.items()}


class ConExInner(InnerSolver):
    """IPP-ConEx's inner solver: ConEx (Boob, Deng & Lan 2022) on the subproblem; its duals y
    are the state's "dual.<row>"."""

    def __init__(self, config: IPPConExConfig, rows: tuple[str, ...], first_step: float) -> None:
        super().__init__(config, rows, first_step)
        self.y = np.zeros(len(rows))
        self.dual_first = config.dual_step or 2.0 / len(rows)  # σ0 (the option's help)

    def start(self) -> None:
        super().start()
        self.previous: tuple[RegularisedPoint, np.ndarray] | None = None

    def step(self, point: RegularisedPoint, t: int, move: Stepper) -> None:
        gamma, gamma_before = 1.0 / self.primal_step(t + 1), 1.0 / self.primal_step(t)
        if self.previous is None:  # x_{−1} = x_0: s_0 = ℓ(x_0) = G_k(x_0)
            ell = s = point.values
        else:
            before, ell_before = self.previous
            ell = before.linear_at(point)
            theta = gamma_before / gamma  # ϑ_t = γ_{t−1}/γ_t
            s = (1.0 + theta) * ell - theta * ell_before  # ConEx's constraint extrapolation
        dual_step = self.dual_first * gamma * self.primal_step(1)  # 1/τ_t = σ0 γ_t/γ_0
        self.y = np.maximum(self.y + dual_step * s, 0.0)  # ConEx's dual step, with y_{t+1} …
        alpha = self.primal_step(t)
        x_next = move(alpha, point.gradient(1.0, self.y))  # … in the primal step at x_t
        self.average(gamma, x_next)  # ConEx's output Σ γ_t x_{t+1} / Σ γ_t
        self.previous = (point, ell)
        self.last = {
            "violation": float(np.max(point.values, initial=-np.inf)),
            "step": alpha,
            "dual_step": dual_step,
        }

    def state(self) -> dict[str, float | str]:
        return self.last | per_row(DUAL, self.rows, self.y)

    def multipliers(self) -> np.ndarray:
        return self.y.copy()


INNER: dict[str, type[InnerSolver]] = {"ssg": SwitchingInner, "conex": ConExInner}


class InexactProximalPoint(MinibatchSolver):
    """The IPP wrapper around the inner solver its config names (`IPPConfig.inner_solver`). The
    state has the outer index k ("outer", the subproblems finished), the inner iteration in
    subproblem k ("inner") and the inner solver's state."""

    def __init__(self, problem: Problem, config: IPPConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.full = FullData(self.oracles, problem)
        first_step = config.inner_step or safe_step(problem, NETWORK_STEP)
        self.inner = INNER[config.inner_solver](config, tuple(problem.bound.rows), first_step)
        self.output: TailSample[Params] = TailSample(rng, config.start_fraction)
        self.latest = self.x.copy()  # θ_k, the last outer iterate
        self.center = self.x.copy()  # subproblem k's θ_k
        self.outer, self.inner_t = 0, 0

    def iterate(self) -> float:
        config = self.config
        if self.inner_t == 0:  # subproblem k around θ_k (Boob, Deng & Lan 2022, IPP)
            self.center = self.x.copy()
            self.inner.start()
        point = RegularisedPoint(self.full.point(self.x), self.center, config.rho_hat)
        self.inner.step(point, self.inner_t, self._move)
        self.inner_t += 1
        if self.inner_t == config.inner_iterations:  # θ_{k+1}: the inner solver's average
            self.x = self.inner.output(self.x)
            self.latest = self.x.copy()
            if config.output == "random":
                latest = self.latest
                self.output.offer(self.outer, 1.0, lambda: self.oracles.params(latest))
            self.outer, self.inner_t = self.outer + 1, 0
        return point.base.loss  # F at the inner iterate, without the prox term

    def _move(self, step: float, direction: np.ndarray) -> np.ndarray:
        self.move(step, direction)
        return self.x

    def state(self) -> dict[str, float | str]:
        return {"outer": float(self.outer), "inner": float(self.inner_t)} | self.inner.state()

    def multipliers(self) -> np.ndarray | None:
        """The inner solver's multipliers of the current subproblem (ConEx's y)."""
        return self.inner.multipliers()

    def candidate(self) -> Params:
        """An outer iterate θ_k drawn uniformly from k ≥ S (θ_0 before the first subproblem
        ends), or the last one θ_K for "last"."""
        kept = self.output.item(self.outer) if self.config.output == "random" else None
        if kept is None:
            return self.oracles.params(self.latest)
        return {k: v.copy() for k, v in kept.items()}
