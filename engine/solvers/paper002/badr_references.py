"""The reference points of paper 002 (Sec. 5, baselines (b)–(e)): models w*(λ) on the
group-loss Pareto front at weights chosen without looking at the measure, except one-fit, which
keeps the group whose lone fit has the lowest measure on the training data.

- uniform: λ_s = 1/S (the package calls it "ERM"; true ERM is λ_s = n_s/n, spec 002 §4)
- balanced: λ_s ∝ 1/n_s (Exp 1–2)
- one_fit: λ = e_s
- minimax: min_w max_s F_s(w), the epigraph min t s.t. F_s(w) ≤ t, whose constraints' duals λ
  put the minimax model on the front at w*(λ) (Prop. 3). Two methods (option `method`):
  - "dual" (default): the Lagrange dual max_{λ∈Δ} D(λ), D(λ) = min_w Σ_s λ_s F_s(w), which is
    concave with ∇D(λ) = (F_s(w*(λ)))_s (Danskin), by SLSQP over the simplex with the exact
    Newton fits of w*(λ). Its maximiser is the epigraph's dual solution.
  - "epigraph": the epigraph itself, by a conic solver (Clarabel through CVXPY), as paper 002's
    code does (with SCS); λ are its duals, normalised, and the model w*(λ) is refit. It is exact
    but slow on large data (one exponential cone per row of a logistic loss: 2 minutes on
    Adult and ACS in all, against seconds for the dual) and its interior-point method can stall.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.optimize

from engine.errors import UserError
from engine.models import Params
from engine.solvers.base import StepInfo
from engine.solvers.paper002.badr import WeightedFit
from engine.solvers.paper002.badr_lower import project_simplex


class FixedWeights(WeightedFit):
    """One model, w*(λ) at the weights `choose` returns; a single step."""

    def __init__(self, problem, config, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.w = np.zeros(self.lower.dimension)  # the start of the fit, then its result

    def choose(self) -> np.ndarray:
        raise NotImplementedError

    def step(self) -> StepInfo:
        self.weights = self.choose()
        self.w = self.lower.solve(self.weights, start=self.w)
        state = self.weight_state(self.weights, self.w)
        objective = state["fair"] + self.upper.beta * state["erm_loss"]
        return StepInfo(1, objective, state, done=True, reason="the weighted model is fitted")

    def candidate(self) -> Params:
        return {"w": self.w.copy()}


class Uniform(FixedWeights):
    def choose(self) -> np.ndarray:
        return np.full(self.problem.data.n_groups, 1.0 / self.problem.data.n_groups)


class Balanced(FixedWeights):
    def choose(self) -> np.ndarray:
        inverse = 1.0 / self.lower.sizes
        return inverse / inverse.sum()


class OneFit(FixedWeights):
    def choose(self) -> np.ndarray:
        """The vertex e_s whose model has the lowest measure on the training data."""
        best, chosen = np.inf, None
        for vertex in np.eye(self.problem.data.n_groups):
            w = self.lower.solve(vertex, start=self.w)
            value = self.upper.parts(w)[0].fair
            if value < best:
                best, chosen, self.w = value, vertex, w
        return chosen


class Minimax(FixedWeights):
    def choose(self) -> np.ndarray:
        return self._dual() if self.config.method == "dual" else self._epigraph()

    def _dual(self) -> np.ndarray:
        """argmax_{λ∈Δ} D(λ) by SLSQP; D and ∇D from the fit of w*(λ), warm-started."""

        def negated_dual(weights: np.ndarray) -> tuple[float, np.ndarray]:
            weights = project_simplex(weights)
            self.w = self.lower.solve(weights, start=self.w)
            losses = self.lower.group_losses(self.lower.scores(self.w), self.w)
            return -float(weights @ losses), -losses

        groups = len(self.lower.sizes)
        result = scipy.optimize.minimize(
            negated_dual,
            np.full(groups, 1.0 / groups),
            jac=True,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * groups,
            constraints={"type": "eq", "fun": lambda x: np.sum(x) - 1.0},
            options={"ftol": 1e-12, "maxiter": 500},
        )
        return project_simplex(result.x)

    def _epigraph(self) -> np.ndarray:
        lower = self.lower
        theta, t = cp.Variable(lower.dimension), cp.Variable()
        h = lower.rows @ theta
        ridge = 0.5 * lower.l2 * cp.sum_squares(cp.multiply(np.sqrt(lower.penalised), theta))
        bounds = [self._group_loss(h, s) + ridge <= t for s in range(len(lower.sizes))]
        problem = cp.Problem(cp.Minimize(t), bounds)
        try:
            problem.solve(solver=cp.CLARABEL)
        except cp.SolverError as error:
            raise UserError(f"the minimax epigraph could not be solved: {error}") from None
        if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise UserError(f"the minimax epigraph ended {problem.status}")
        duals = np.maximum([np.ravel(b.dual_value)[0] for b in bounds], 0.0)
        self.w = np.asarray(theta.value)
        return duals / duals.sum()

    def _group_loss(self, h: cp.Expression, group: int) -> cp.Expression:
        """F_s without its ridge term, as a convex CVXPY expression of the scores."""
        lower = self.lower
        rows = np.flatnonzero(lower.groups == group)
        scores, y = h[rows], lower.y[rows]
        name = lower.objective.name
        if name == "logistic":
            return cp.sum(cp.logistic(-cp.multiply(2.0 * y - 1.0, scores))) / len(rows)
        if name == "squared_hinge":
            return cp.sum_squares(cp.pos(1.0 - cp.multiply(2.0 * y - 1.0, scores))) / len(rows)
        if name == "squared":
            return 0.5 * cp.sum_squares(scores - y) / len(rows)
        raise UserError(f"minimax has no convex form for the {name} objective")
