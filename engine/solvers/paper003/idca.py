"""IDCA: the inexact difference-of-convex algorithm of paper 003 (Alg. 1), with the switching
subgradient method (Alg. 2) solving each convex subproblem (31).

The constraint family supplies f_i = f_i⁺ − f_i⁻ with both parts convex in (scores, aux); with a
linear model they are convex in the parameters. Each outer iteration freezes f_i⁻ and a
subgradient at (w^k, θ^k) (eq. 32), so the subproblem's constraints g_i ≥ f_i are convex inner
approximations: every iterate that satisfies them satisfies the surrogate constraints too.

Oracle counts (paper 001 spec §5, `engine.oracles.OracleCounts`), those of the inner solver and of
the outer linearisations: each inner step scores every training row and evaluates the
subproblem's rows once (f⁺ at v with f⁻ frozen), then takes one gradient, of g0 on an objective
step or of the worst row on a constraint step; each outer iteration, the first at w⁰ included,
scores every row and evaluates f⁻ and its Jacobian, m constraint gradients (eq. 32). The
compiled steps count the same as the generic ones.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import torch

from engine.models import Params
from engine.objectives import LogisticLoss
from engine.oracles import OracleCounts
from engine.problem import Problem
from engine.solvers.base import Snapshot, Solver, StepInfo
from engine.solvers.paper003.cards import IDCAConfig
from engine.solvers.paper003.idca_kernel import RampPSPData, StepsWorkspace, ramp_psp_steps
from engine.solvers.paper003.idca_linearization import ramp_psp_minus_linearization
from engine.solvers.switching import polyak_move, worst_row
from engine.status import StopCode, StopReason


@dataclass
class _Subproblem:
    """Subproblem (31) at the outer iterate (w^k, θ^k): f_i⁻ replaced by its linearisation."""

    w: np.ndarray
    theta: np.ndarray
    minus: np.ndarray  # f_i⁻(w^k, θ^k), (m,)
    d_w: np.ndarray  # (m, d) subgradient of f_i⁻ in w
    d_theta: np.ndarray  # (m, P) subgradient of f_i⁻ in θ
    objective: float  # f0(w^k)


class IDCA(Solver):
    """Paper 003, Alg. 1 (outer DC iterations) with Alg. 2 (switching subgradient) inside."""

    def __init__(self, problem: Problem, config: IDCAConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.design = problem.design()
        self.dc = problem.bound.dc
        w = problem.init_params()["w"]
        aux = self._fitted_aux(w)
        self.has_theta = "theta" in aux  # pSP's θ (empty when κ = 1 leaves no grid point)
        theta = self._theta_of(aux)
        self.outer, self.inner, self.total = 0, 0, 0
        # f0 at the last patience + 1 outer iterates, since the last infeasible one
        self.feasible_objectives: deque[float] = deque(maxlen=config.patience + 1)
        self.objective = problem.loss(self.design.matvec(w))  # latest g0 computed
        self.counts = OracleCounts()
        self._snapshots: list[Snapshot] = []
        self._ramp_psp = self._compiled_steps_data() if config.compiled else None
        self._workspace = None if self._ramp_psp is None else StepsWorkspace.of(self._ramp_psp)
        self._start_outer(w, theta)

    def _compiled_steps_data(self) -> RampPSPData | None:
        """The data of `idca_kernel` when it handles this problem: pSP (15) with the ramp and
        the logistic loss (which the compiled loop inlines), on a CSR design; None otherwise
        (the generic step runs)."""
        bound = self.problem.bound
        if bound.family != "pSP" or bound.spec.surrogate != "ramp" or bound.m == 0:
            return None
        if not isinstance(self.problem.objective, LogisticLoss):
            return None
        zeta = self.problem.signed_labels("train")
        return RampPSPData.build(self.design.block_form(), zeta, bound)

    # ---- outer iteration (Alg. 1) ---------------------------------------------------------
    def _start_outer(self, w: np.ndarray, theta: np.ndarray) -> None:
        if self._ramp_psp is not None:
            linear = ramp_psp_minus_linearization(self._ramp_psp, w, theta, self._workspace)
            minus, d_w, d_theta, h = linear.value, linear.d_w, linear.d_theta, linear.scores
        else:
            minus, d_w, d_theta, h = self._minus_linearization(w, theta)
        self.counts.tally(len(h), constraint_values=1, constraint_gradients=len(minus))
        self.sub = _Subproblem(
            w=w.copy(),
            theta=theta.copy(),
            minus=minus,
            d_w=d_w,
            d_theta=d_theta,
            objective=self.problem.loss(h),
        )
        self.v, self.theta = w.copy(), theta.copy()
        self.best = (np.inf, w.copy(), theta.copy())
        self.inner = 0

    def _minus_linearization(self, w: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, ...]:
        """f⁻(w, θ), its subgradient in w (eq. 32) and in θ, and the scores X̃·w."""
        h = self.design.matvec(w)
        if self.problem.bound.m == 0:  # a vacuous constraint (pSP with κ = 1): nothing to freeze
            return np.zeros(0), np.zeros((0, w.size)), np.zeros((0, theta.size)), h
        linear = self.dc.minus_linearization(torch.from_numpy(h), self._aux(theta))
        d_scores = linear.d_scores.numpy()
        d_theta = (
            linear.d_aux["theta"].numpy()
            if "theta" in linear.d_aux
            else np.zeros((len(d_scores), 0))
        )
        d_w = np.ascontiguousarray(self.design.rmatmat(d_scores.T).T)
        return linear.value.numpy().copy(), d_w, d_theta, h

    def _finish_outer(self) -> StopReason | None:
        """Take the subproblem's output as w^{k+1}; returns why to stop, or None.

        From w⁰ = 0 every subproblem has a nearly-feasible iterate (t = 0: g(w^k) ≤ ε, spec 003
        §3.2). A warm start from a looser κ's model can lie outside the tighter κ's feasible
        set; its subproblem may then end with none, and w^{k+1} is the last inner iterate, where
        the constraint steps led (a restoration phase), or, where they could not move, a point
        nearer w⁰ (`_toward_cold_start`). Only a feasible outer iterate counts
        towards the early stop: an unmoved infeasible one is no convergence."""
        objective, w, theta = self.best
        feasible = bool(np.isfinite(objective))
        if not feasible:
            w, theta = self.v, self.theta
            if np.array_equal(w, self.sub.w):  # no constraint step could move: a flat surrogate
                w, theta = self._toward_cold_start(w)
        self.outer += 1
        self._start_outer(w, theta)
        if not feasible:
            self.feasible_objectives.clear()
        self.feasible_objectives.append(self.sub.objective)
        if (
            self.outer % self.config.snapshot_every == 0
            or self.outer == self.config.outer_iterations
        ):
            self._snapshot()
        if self.outer >= self.config.outer_iterations:
            return StopReason(StopCode.ITERATION_CAP, f"all K = {self.outer} outer iterations done")
        if self._stalled():
            self._snapshot()
            return StopReason(
                StopCode.CONVERGED,
                f"objective down by less than {self.config.stop_tolerance:g} (relative) over "
                f"{self.config.patience} outer iterations: stopped at outer iteration "
                f"{self.outer} of {self.config.outer_iterations}",
            )
        return None

    def _toward_cold_start(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Halfway from an infeasible w to w⁰ = 0, θ refitted to its scores. Where the scores are
        large the ramps saturate, the constraint subgradients vanish and the switching steps
        cannot leave an infeasible w; every subproblem at w⁰ = 0 has a nearly-feasible iterate
        (spec 003 §3.2), so halving the way there reaches one after finitely many outer
        iterations (the surrogate is continuous)."""
        half = 0.5 * w
        return half, self._theta_of(self._fitted_aux(half))

    def _fitted_aux(self, w: np.ndarray) -> dict[str, torch.Tensor]:
        """The family's auxiliary variables fitted to the scores of w."""
        return self.problem.bound.aux_init(torch.from_numpy(self.design.matvec(w)))

    @staticmethod
    def _theta_of(aux: dict[str, torch.Tensor]) -> np.ndarray:
        return aux["theta"].numpy().copy() if "theta" in aux else np.zeros(0)

    def _stalled(self) -> bool:
        """f0 fell by no more than `stop_tolerance` (relative) over the last `patience` outer
        iterations, all feasible: the outer loop has stopped making progress (late in a run f0
        creeps down while the model's accuracy no longer moves)."""
        window = self.feasible_objectives
        if not self.config.patience or len(window) <= self.config.patience:
            return False
        latest = window[-1]
        return window[0] - latest <= self.config.stop_tolerance * max(1.0, abs(latest))

    def _snapshot(self) -> None:
        if self._snapshots and self._snapshots[-1].outer == self.outer:
            return
        params = self.candidate()
        metrics = self.problem.report(params, splits=("val",)) if len(self.problem.data.val) else {}
        self._snapshots.append(Snapshot(self.total, self.outer, params, metrics))

    # ---- inner steps (Alg. 2 on subproblem (31)) ------------------------------------------
    def advance(self, max_iterations: int) -> StepInfo:
        """Up to `max_iterations` steps of the current subproblem in one compiled call when the
        problem has the shape `idca_kernel` handles; otherwise one generic `step()`."""
        if self._ramp_psp is None:
            return self.step()
        sub, config = self.sub, self.config
        _, best_v, best_theta = self.best
        best_v, best_theta = best_v.copy(), best_theta.copy()
        result = ramp_psp_steps(
            self._ramp_psp,
            self.v,
            self.theta,
            (sub.w, sub.theta),
            (sub.minus, sub.d_w, sub.d_theta),
            (self.best[0], best_v, best_theta),
            self.objective,
            (config.epsilon, config.proximal, config.max_step),
            min(max_iterations, config.inner_iterations - self.inner),
            self._workspace,
        )
        if result.best_objective < self.best[0]:
            self.best = (result.best_objective, best_v, best_theta)
        self.objective = result.objective
        self.counts.tally(
            len(self._ramp_psp.zeta) * result.steps,
            objective_gradients=result.objective_steps,
            constraint_values=result.steps,
            constraint_gradients=result.steps - result.objective_steps,
        )
        self.inner += result.steps
        self.total += result.steps
        branch = "objective" if result.branch == 1 else "constraint"
        return self._after_steps(
            result.steps, result.violation, branch, result.scale, result.stationary
        )

    def step(self) -> StepInfo:
        sub, mu = self.sub, self.config.proximal
        dv, dth = self.v - sub.w, self.theta - sub.theta
        proximal = 0.5 * mu * (dv @ dv + dth @ dth)
        h = self.design.matvec(self.v)
        scores, aux = torch.from_numpy(h), self._aux(self.theta)
        with torch.no_grad():
            plus = self.dc.plus(scores, aux).numpy()
        g = plus - (sub.minus + sub.d_w @ dv + sub.d_theta @ dth) + proximal  # g_i(v), eq. 31–32
        worst, violation = worst_row(g)
        if violation <= self.config.epsilon:
            branch = "objective"
            loss, loss_grad = self.problem.loss_and_grad_scores(h)
            self.objective = loss + proximal  # g0(v)
            if self.objective < self.best[0]:
                self.best = (self.objective, self.v.copy(), self.theta.copy())
            d_w = self.design.rmatvec(loss_grad) + mu * dv
            d_th = mu * dth
            numerator = self.config.epsilon
        else:
            branch = "constraint"  # g0 is not needed on this branch, nor computed
            row = self.dc.plus_row_subgradient(scores, aux, worst)
            if row.rows is None:
                d_row = self.design.rmatvec(row.d_scores.numpy())
            else:
                d_row = self.design.rmatvec_rows(row.rows.numpy(), row.d_scores.numpy())
            d_w = d_row - sub.d_w[worst] + mu * dv
            d_th = mu * dth - sub.d_theta[worst]
            if "theta" in row.d_aux:
                d_th = d_th + row.d_aux["theta"].numpy()
            numerator = violation
        self.counts.tally(
            len(h),
            objective_gradients=int(branch == "objective"),
            constraint_values=1,
            constraint_gradients=int(branch == "constraint"),
        )
        move = polyak_move(numerator, d_w @ d_w + d_th @ d_th, self.config.max_step)
        self.v = self.v - move.scale * d_w
        self.theta = self.theta - move.scale * d_th
        self.inner += 1
        self.total += 1
        return self._after_steps(1, violation, branch, move.scale, move.stationary)

    def _after_steps(
        self, steps: int, violation: float, branch: str, scale: float, stationary: bool
    ) -> StepInfo:
        stop = None
        if self.inner >= self.config.inner_iterations or stationary:
            stop = self._finish_outer()
        diverged = np.isnan(violation) or violation == np.inf  # −inf: a constraint without rows
        return StepInfo(
            iterations=steps,
            objective=float("nan") if diverged else self.objective,
            state={
                "outer": self.outer,
                "inner": self.inner,
                "branch": branch,
                "subproblem_violation": float(violation),
                "step": float(scale),
            }
            | self.counts.state(len(self.problem.data.train)),
            done=stop is not None,
            reason=stop.text if stop else "",
            stop=stop.code if stop else StopCode.CONVERGED,
        )

    def candidate(self) -> Params:
        """The best nearly-feasible iterate of the current subproblem, or the outer iterate w^k
        before it has one: either is feasible for the surrogate (f ≤ g ≤ ε) once a feasible
        iterate was reached, so a run cut short mid-subproblem still returns progress."""
        objective, w, theta = self.best
        if not np.isfinite(objective):
            w, theta = self.sub.w, self.sub.theta
        params = {"w": w.copy()}
        if self.has_theta:
            params["aux.theta"] = theta.copy()
        return params

    def snapshots(self) -> list[Snapshot]:
        return list(self._snapshots)

    def select(self, snapshots: list[Snapshot]) -> Params:
        """Paper 003 G.2.2: K is chosen by validation accuracy among the snapshots."""
        scored = [s for s in snapshots if s.metrics.get("val", {}).get("accuracy") is not None]
        if self.config.select == "last" or not scored:
            return self.candidate()
        return max(scored, key=lambda s: s.metrics["val"]["accuracy"]).params

    def _aux(self, theta) -> dict[str, torch.Tensor]:
        if isinstance(theta, np.ndarray):
            theta = torch.from_numpy(theta)
        return {"theta": theta} if self.has_theta else {}
