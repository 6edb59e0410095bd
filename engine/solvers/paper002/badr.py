"""badr-gd and badr-sgd (paper 002, Algs. 1 and 2): single-loop bilevel steps, a SOBA variant.

At (w_t, v_t, λ_t), with f(w, λ) = Σ_s λ_s F_s(w) and Φ_β the upper level
(engine.solvers.paper002.badr_upper):

    w_{t+1} = w_t − ρ ∇_w f                                  (a step towards w*(λ_t))
    v_{t+1} = v_t − ρ (∇²_ww f · v_t + ∇_w Φ_β)              (a step towards −H⁻¹∇Φ_β)
    d_t     = [⟨∇F_s(w_t), v_t⟩]_s                           (the hypergradient estimate)
    λ_{t+1} = Proj_Δ(λ_t − γ d_t)                            (badr-sgd: γ·Clip_C(d̂_t))

Only Hessian-vector products are needed. The run reports w*(λ_T), refit exactly, as the
paper's code does. Records carry λ, Φ, the group losses F_s and the paper's stationarity
measure ‖(λ_t − λ_{t+1})/γ‖.

badr-sgd estimates ∇_w f, the Hessian-vector product and the cross term from three independent
group-balanced batches, as the analysis assumes (spec 002 §2: the package reuses one batch for
all three); ∇Φ_β is computed on the whole split, as in the paper's code, since the smoothed
measures are not means over rows.
"""

from __future__ import annotations

import numpy as np

from engine.models import Params
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers.base import Solver, StepInfo
from engine.solvers.paper002.badr_lower import GroupLosses, project_simplex
from engine.solvers.paper002.badr_upper import UpperObjective
from engine.solvers.paper002.cards import BadrGDConfig, BadrSGDConfig
from engine.status import StopCode

SCALABILITY_BATCH_SHARE = 20  # paper 002's scalability runs: B = n/20


class WeightedFit(Solver):
    """What every paper 002 solver shares: the group losses, Φ_β, and the records of λ."""

    def __init__(self, problem: Problem, config, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.lower = GroupLosses(problem, config.l2)
        # the reference weightings and fair_reg have no trade-off β: the measure alone judges them
        beta = getattr(config, "beta", 0.0)
        self.upper = UpperObjective(self.lower, config.measure, config.rho, beta)
        self.names = problem.data.group_names

    def weight_state(self, weights: np.ndarray, w: np.ndarray) -> dict[str, float]:
        """λ, F_s(w) and Φ's parts at w, for the records."""
        values, _ = self.upper.parts(w)
        losses = self.lower.group_losses(self.lower.scores(w), w)
        return self.record_state(weights, losses, values.fair, values.erm)

    def record_state(
        self, weights: np.ndarray, group_losses: np.ndarray, fair: float, erm: float
    ) -> dict[str, float]:
        state = {
            f"lambda.{name}": float(lam) for name, lam in zip(self.names, weights, strict=True)
        }
        state |= {
            f"group_loss.{n}": float(f) for n, f in zip(self.names, group_losses, strict=True)
        }
        return state | {"fair": float(fair), "erm_loss": float(erm)}

    def surrogate_view(self) -> tuple[float, np.ndarray | None]:
        """Φ_β at the candidate: the objective these solvers minimise (a smoothed measure: a
        surrogate value, beside which the exact metrics are reported)."""
        values, _ = self.upper.parts(self.candidate()["w"])
        return values.value, None


class BadrGD(WeightedFit):
    """Paper 002, Alg. 1, from λ_0 = 1/S, w_0 = w*(λ_0) and v_0 = 0."""

    def __init__(self, problem: Problem, config: BadrGDConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        groups = problem.data.n_groups
        self.weights = np.full(groups, 1.0 / groups)
        self.w = self.lower.solve(self.weights)  # paper 002's scalability runs: w_0 = w*(1/S)
        self.v = np.zeros_like(self.w)
        self.step_w = config.step_w or 1.0 / self.lower.smoothness()
        self.iterations = 0

    def directions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, float]]:
        """∇_w f, ∇²f·v + ∇Φ_β and the cross term d at (w_t, v_t, λ_t), on the whole split,
        and the record state at w_t: one pass over X̃ for X̃w and X̃v, one for the three
        transposed products."""
        lower, w, v = self.lower, self.w, self.v
        h, xv = lower.design.matvec(w), lower.design.matvec(v)
        losses, slopes = lower.objective.per_sample(h, lower.y)
        curvature = lower.objective.second_derivative(h, lower.y)
        r = lower.row_weights(self.weights)
        values, upper_h = self.upper.at_scores(w, h, losses, slopes)
        products = lower.design.rmatmat(np.column_stack([r * slopes, r * curvature * xv, upper_h]))
        ridge = lower.l2 * lower.penalised
        grad_w = products[:, 0] + ridge * w
        adjoint = products[:, 1] + ridge * v + products[:, 2] + self.upper.ridge_part(w)
        cross = np.bincount(lower.groups, weights=slopes * xv, minlength=len(self.weights))
        group_losses = np.bincount(lower.groups, weights=losses) / lower.sizes + lower.penalty(w)
        state = self.record_state(self.weights, group_losses, values.fair, values.erm)
        return grad_w, adjoint, cross / lower.sizes + ridge * w @ v, state

    def step(self) -> StepInfo:
        gamma = self.config.step_lambda
        grad_w, adjoint, cross, state = self.directions()
        weights = project_simplex(self.weights - gamma * cross)
        stationarity = float(np.linalg.norm((self.weights - weights) / gamma))
        self.w = self.w - self.step_w * grad_w
        self.v = self.v - self.step_w * adjoint
        self.weights = weights
        self.iterations += 1
        residual = max(float(np.linalg.norm(grad_w)), float(np.linalg.norm(adjoint)))
        converged = max(stationarity, residual) <= self.config.tolerance
        capped = self.iterations >= self.config.iterations
        state |= {
            "stationarity": stationarity,
            "lower_gradient_norm": float(np.linalg.norm(grad_w)),
            "adjoint_residual": float(np.linalg.norm(adjoint)),
        }
        return StepInfo(
            iterations=1,
            objective=state["fair"] + self.upper.beta * state["erm_loss"],
            state=state,
            done=converged or capped,
            reason="stationary: ‖(λ_t − λ_{t+1})/γ‖ and the lower and adjoint residuals are "
            "below the tolerance"
            if converged
            else "iteration limit reached",
            stop=StopCode.CONVERGED if converged else StopCode.ITERATION_CAP,
        )

    def candidate(self) -> Params:
        return {"w": self.w.copy()}

    def select(self, snapshots) -> Params:
        """w*(λ_T), refit exactly (paper 002's code always refits)."""
        return {"w": self.lower.solve(self.weights, start=self.w)}


class BadrSGD(BadrGD):
    """Paper 002, Alg. 2: badr-gd with minibatch estimates and the clipped λ-step."""

    def __init__(self, problem: Problem, config: BadrSGDConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        n, groups = len(self.lower.y), problem.data.n_groups
        size = config.batch_size or max(n // SCALABILITY_BATCH_SHARE, groups)
        self.per_group = max(size // groups, 1)
        self.sampler = BatchSampler(self.lower.groups, groups, rng)

    def _batch(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A group-balanced batch: its rows of X̃, the group ids and each row's weight 1/J (a
        mean over the group's J rows estimates that group's mean)."""
        batch = self.sampler.per_group(self.per_group)
        return self.lower.rows[batch.rows], batch.rows, batch.groups

    def directions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, float]]:
        lower, w, v, J = self.lower, self.w, self.v, self.per_group
        ridge = lower.l2 * lower.penalised
        objective, y = lower.objective, lower.y
        weights = self.weights

        # ∇_w f on the first batch
        rows, index, groups = self._batch()
        _, slopes = objective.per_sample(rows @ w, y[index])
        grad_w = rows.T @ (weights[groups] / J * slopes) + ridge * w
        # the Hessian-vector product on a second, independent batch
        rows, index, groups = self._batch()
        curvature = objective.second_derivative(rows @ w, y[index])
        hv = rows.T @ (weights[groups] / J * curvature * (rows @ v)) + ridge * v
        # the cross term on a third
        rows, index, groups = self._batch()
        _, slopes = objective.per_sample(rows @ w, y[index])
        cross = np.bincount(groups, weights=slopes * (rows @ v), minlength=len(weights)) / J
        cross = cross + ridge * w @ v
        values, upper_grad = self.upper.parts(w)  # on the whole split (paper 002's code)
        clip = self.config.clip
        norm = float(np.linalg.norm(cross))
        clipped = cross * min(1.0, clip / norm) if norm > 0 else cross
        group_losses = lower.group_losses(lower.scores(w), w)
        state = self.record_state(weights, group_losses, values.fair, values.erm)
        return np.asarray(grad_w), np.asarray(hv) + upper_grad, clipped, state
