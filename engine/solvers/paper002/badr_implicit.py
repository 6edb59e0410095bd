"""The two-loop reference of paper 002: min over the simplex of Φ_β(λ) = Φ_β(w*(λ)), each
evaluation refitting w*(λ) exactly and differentiating it implicitly
(engine.solvers.paper002.badr_lower). Φ is multimodal (paper 002, Exp 1), so the descent starts
from the best of a few weights (option `starts`) rather than from λ = 1/S only.

SLSQP (the paper's default, Fig. 3) runs through `SteppedLoop`, one evaluation per step, with
the package's bounds and ftol; Frank–Wolfe takes the paper's step (2 + ln(t+1))/(t + 2 + ln(t+1))
towards the vertex of the smallest partial derivative and stops on its duality gap (the
package tests α_t times the gap: spec 002 §4, defect 7). Unlike the package, a value and its
gradient share one fit, and each fit starts from the last (spec 002 §4, defect 12).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize

from engine.models import Params
from engine.problem import Problem
from engine.solvers.base import StepInfo
from engine.solvers.paper002.badr import WeightedFit
from engine.solvers.paper002.badr_lower import project_simplex
from engine.solvers.paper002.cards import BadrImplicitConfig
from engine.solvers.stepped_loop import Ask, SteppedLoop
from engine.status import StopCode

FRANK_WOLFE_GAP = 1e-6  # paper 002's code
LOWEST_WEIGHT = 1e-8  # SLSQP's lower bound on each λ_s (paper 002's code)
# scipy's SLSQP exit modes: 0 converged; 8, no descent left for its line search, which it meets
# at a minimum where Φ's decrease is below rounding (the records' stationarity says how close);
# 9, its iteration limit. Any other mode is a failed step.
SLSQP_STOPS = {0: StopCode.CONVERGED, 8: StopCode.CONVERGED, 9: StopCode.ITERATION_CAP}


class BadrImplicit(WeightedFit):
    def __init__(
        self, problem: Problem, config: BadrImplicitConfig, rng: np.random.Generator
    ) -> None:
        super().__init__(problem, config, rng)
        self.weights, self.w = self._start(config.starts)
        # Φ_β, λ, w*(λ) and the record state of the lowest Φ_β evaluated so far
        self.best: tuple[float, np.ndarray, np.ndarray, dict[str, float]] = (
            math.inf,
            self.weights,
            self.w,
            {},
        )
        self.evaluations = 0
        self.loop = SteppedLoop(self._slsqp) if config.method == "slsqp" else None

    def _start(self, starts: int) -> tuple[np.ndarray, np.ndarray]:
        """The starting λ of lowest Φ_β among `starts` candidates (the `starts` option), and
        its w*(λ)."""
        groups = self.problem.data.n_groups
        centre = np.full(groups, 1.0 / groups)
        if starts == 1:
            return centre, self.lower.solve(centre)
        if groups == 2:
            first = np.linspace(0.0, 1.0, starts)
            candidates = np.column_stack([first, 1.0 - first])
        else:
            draws = self.rng.dirichlet(np.ones(groups), size=max(starts - groups - 1, 0))
            candidates = np.vstack([np.eye(groups), centre, draws])
        best, w = (np.inf, centre, None), None
        for weights in candidates:
            w = self.lower.solve(weights, start=w)
            value = self.upper.parts(w)[0].value
            if value < best[0]:
                best = (value, weights, w)
        return best[1], best[2]

    def evaluate(self, weights: np.ndarray) -> tuple[float, np.ndarray, dict[str, float]]:
        """Φ_β(λ) and ∂Φ_β/∂λ, from w*(λ) warm-started at the last fit. SLSQP may step a hair
        outside the simplex; the fit uses the nearest point on it."""
        weights = project_simplex(weights)
        self.w = self.lower.solve(weights, start=self.w)
        result = self.lower.hypergradient(self.w, weights, self.upper)
        self.evaluations += 1
        self.weights = weights
        stationarity = float(np.linalg.norm(weights - project_simplex(weights - result.grad)))
        state = self.weight_state(weights, self.w) | {
            "stationarity": stationarity,
            "lower_solves": float(self.evaluations),
        }
        if result.value < self.best[0]:
            self.best = (result.value, weights, self.w, state)
        return result.value, result.grad, state

    def _slsqp(self, ask: Ask) -> scipy.optimize.OptimizeResult:
        """SLSQP as paper 002's code calls it: bounds [1e-8, 1 + 1e-8], Σλ = 1 (its 1 + 1e-8 is
        a slip), ftol and maxiter from the options. A value and its gradient share one ask."""
        last: dict[bytes, tuple[float, np.ndarray]] = {}

        def both(x: np.ndarray) -> tuple[float, np.ndarray]:
            key = np.asarray(x, dtype=np.float64).tobytes()
            if key not in last:
                last.clear()
                last[key] = ask(x)
            return last[key]

        groups = len(self.weights)
        start = np.clip(self.weights, LOWEST_WEIGHT, 1.0)  # SLSQP loops from outside its bounds
        return scipy.optimize.minimize(
            lambda x: both(x)[0],
            start / start.sum(),
            jac=lambda x: both(x)[1],
            method="SLSQP",
            bounds=[(LOWEST_WEIGHT, 1.0 + LOWEST_WEIGHT)] * groups,
            constraints={
                "type": "eq",
                "fun": lambda x: np.sum(x) - 1.0,
                "jac": lambda x: np.ones_like(x),
            },
            options={"ftol": self.config.tolerance, "maxiter": self.config.iterations},
        )

    def step(self) -> StepInfo:
        if self.loop is not None:
            return self._slsqp_step()
        return self._frank_wolfe_step()

    def _slsqp_step(self) -> StepInfo:
        point = self.loop.next_point()
        if point is None:
            result = self.loop.result
            return StepInfo(
                0,
                self.best[0],
                self.best[3],
                done=True,
                reason=f"SLSQP: {result.message}",
                stop=SLSQP_STOPS.get(result.status, StopCode.STEP_FAILED),
            )
        value, grad, state = self.evaluate(point)
        self.loop.answer((value, grad))
        return StepInfo(1, value, state)

    def _frank_wolfe_step(self) -> StepInfo:
        value, grad, state = self.evaluate(self.weights)
        vertex = np.zeros_like(grad)
        vertex[np.argmin(grad)] = 1.0
        gap = float(grad @ (self.weights - vertex))
        t = self.evaluations - 1
        step = min(1.0, (2.0 + math.log(t + 1)) / (t + 2.0 + math.log(t + 1)))
        converged = gap < FRANK_WOLFE_GAP
        capped = self.evaluations >= self.config.iterations
        if not converged:
            self.weights = (1.0 - step) * self.weights + step * vertex
        return StepInfo(
            1,
            value,
            state | {"duality_gap": gap},
            done=converged or capped,
            reason="Frank–Wolfe duality gap below 1e-6" if converged else "iteration limit reached",
            stop=StopCode.CONVERGED if converged else StopCode.ITERATION_CAP,
        )

    def candidate(self) -> Params:
        """w*(λ) of the lowest Φ_β evaluated so far (SLSQP also evaluates line-search points)."""
        return {"w": self.best[2].copy()}
