"""Runs of paper 002 that yield a set of models (a front), one model per step.

- `WeightedSumFront`: the weighted-sum Pareto front, w*(λ) for λ on a grid (two groups:
  λ_1 = 0, 1/(K−1), …, 1, as in Exp 1–2) or on K Dirichlet(1) draws (more groups, Exp 3). Each
  model is Pareto-efficient in the group losses (Prop. 2). The run reports the one with the
  lowest Φ_β on the training data: this is the "badr" column of the paper's Exp 1–3 tables,
  which evaluate the formulation by grid search rather than by Alg. 1 (spec 002 §3). With the
  knob β instead, each point is argmin_λ Φ_β (spec 002 §5(b)): from badr's fairest efficient
  model (β = 0) to ERM (large β), every one still on the front.
- `RegularisedPath`: fairness regularisation (Fig. 1), min_w Σ_s F_s(w)/S + κ·Fair(w) for κ on
  a log-spaced path, by L-BFGS from the last κ's model. It trades the measure against the
  average group loss directly, and its models are in general not on the group-loss front.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize

from engine.models import Params
from engine.problem import Problem
from engine.solvers.base import FrontPoint, StepInfo
from engine.solvers.paper002.badr import WeightedFit
from engine.solvers.paper002.badr_lower import project_simplex
from engine.solvers.paper002.badr_upper import UpperObjective
from engine.solvers.paper002.cards import FrontConfig, RegularisedPathConfig
from engine.status import StopCode

GRID_POINTS, DIRICHLET_DRAWS = 101, 200  # paper 002, Exp 1–2 and Exp 3
BETA_POINTS = 13  # β = 0 and 12 values from 10^−3 to 10^3 (ours)


class FrontRun(WeightedFit):
    """One model per step at each of `settings` (coordinates by name); the run's candidate is
    the model of the lowest upper-level value so far."""

    def __init__(self, problem: Problem, config, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.w = np.zeros(self.lower.dimension)
        self.members: list[FrontPoint] = []
        self.best: tuple[float, np.ndarray] = (np.inf, self.w)

    def settings(self) -> list[dict[str, float]]:
        raise NotImplementedError

    def fit(self, setting: dict[str, float]) -> tuple[np.ndarray, dict[str, float]]:
        """The model at one setting, warm-started from the last, and its record state."""
        raise NotImplementedError

    def label(self, setting: dict[str, float]) -> str:
        raise NotImplementedError

    def step(self) -> StepInfo:
        settings = self.settings()
        setting = settings[len(self.members)]
        self.w, state = self.fit(setting)
        value = state["fair"] + self.upper.beta * state["erm_loss"]
        if value < self.best[0]:
            self.best = (value, self.w)
        weights = {k: v for k, v in state.items() if k.startswith("lambda.")}
        self.members.append(
            FrontPoint(self.label(setting), {"w": self.w.copy()}, setting | weights)
        )
        done = len(self.members) == len(settings)
        return StepInfo(
            1,
            value,
            state,
            done=done,
            stop=StopCode.CONVERGED,
            reason=f"all {len(settings)} models of the front are fitted",
        )

    def candidate(self) -> Params:
        return {"w": self.best[1].copy()}

    def front(self) -> list[FrontPoint]:
        return list(self.members)


class WeightedSumFront(FrontRun):
    def __init__(self, problem: Problem, config: FrontConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.weights = np.full(problem.data.n_groups, 1.0 / problem.data.n_groups)
        if config.knob == "beta":
            betas = np.geomspace(1e-3, 1e3, (config.points or BETA_POINTS) - 1)
            self._settings = [{"beta": float(b)} for b in np.concatenate([[0.0], betas])]
            return
        groups = problem.data.n_groups
        if groups == 2:
            first = np.linspace(0.0, 1.0, config.points or GRID_POINTS)
            grid = np.column_stack([first, 1.0 - first])
        else:
            grid = rng.dirichlet(np.ones(groups), size=config.points or DIRICHLET_DRAWS)
            grid = grid[np.lexsort(grid.T[::-1])]  # neighbours in order: warm starts help
        self._settings = [
            {f"lambda.{name}": float(v) for name, v in zip(self.names, row, strict=True)}
            for row in grid
        ]

    def settings(self) -> list[dict[str, float]]:
        return self._settings

    def fit(self, setting: dict[str, float]) -> tuple[np.ndarray, dict[str, float]]:
        if "beta" in setting:
            self.weights = self._minimise(setting["beta"])
        else:
            self.weights = np.array(list(setting.values()))
        w = self.lower.solve(self.weights, start=self.w)
        return w, self.weight_state(self.weights, w) | {
            "beta": setting.get("beta", self.upper.beta)
        }

    def _minimise(self, beta: float) -> np.ndarray:
        """argmin over the simplex of Φ_β(λ), by SLSQP from the last β's λ (the implicit
        gradient of engine.solvers.paper002.badr_lower)."""
        upper = UpperObjective(self.lower, self.config.measure, self.config.rho, beta)
        fitted = {"w": self.w}

        def value_and_grad(weights: np.ndarray) -> tuple[float, np.ndarray]:
            weights = project_simplex(weights)
            fitted["w"] = self.lower.solve(weights, start=fitted["w"])
            result = self.lower.hypergradient(fitted["w"], weights, upper)
            return result.value, result.grad

        result = scipy.optimize.minimize(
            value_and_grad,
            self.weights,
            jac=True,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * len(self.weights),
            constraints={"type": "eq", "fun": lambda x: np.sum(x) - 1.0},
            options={"ftol": 1e-10, "maxiter": 500},
        )
        return project_simplex(result.x)

    def label(self, setting: dict[str, float]) -> str:
        if "beta" in setting:
            return f"β = {setting['beta']:.2g}"
        return "λ = (" + ", ".join(f"{v:.3g}" for v in setting.values()) + ")"


class RegularisedPath(FrontRun):
    def __init__(
        self, problem: Problem, config: RegularisedPathConfig, rng: np.random.Generator
    ) -> None:
        super().__init__(problem, config, rng)
        strengths = np.geomspace(config.weakest, config.strongest, config.strengths)
        self._settings = [{"kappa": float(k)} for k in strengths]
        self.uniform = np.full(problem.data.n_groups, 1.0 / problem.data.n_groups)

    def settings(self) -> list[dict[str, float]]:
        return self._settings

    def fit(self, setting: dict[str, float]) -> tuple[np.ndarray, dict[str, float]]:
        kappa = setting["kappa"]

        def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
            loss, grad = self.lower.weighted(w, self.uniform)
            values, fair_grad = self.upper.parts(w)  # β = 0: the measure alone
            return loss + kappa * values.fair, grad + kappa * fair_grad

        result = scipy.optimize.minimize(
            objective, self.w, jac=True, method="L-BFGS-B", options={"maxiter": 1000, "gtol": 1e-8}
        )
        state = self.weight_state(self.uniform, result.x)
        return result.x, state

    def label(self, setting: dict[str, float]) -> str:
        return f"κ = {setting['kappa']:.2g}"
