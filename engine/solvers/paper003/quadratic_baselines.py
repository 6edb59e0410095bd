"""The quadratic-surrogate AUC baselines of paper 003 (App. G.3): min f0(w) s.t. the rows of
(102), (105) or (107) ≤ 0, solved by projected gradient (eqs. 108–110) from w⁰ = 0.

With a linear model every row is a convex quadratic in w. For scores h = X̃w and a set S of rows
of X̃ with mean x̄_S and population covariance Σ_S, the pair mean of σ(x) = ½(1 + x)² is
    M(A, B) = ½[(1 + uᵀw)² + wᵀ(Σ_A + Σ_B)w],  u = x̄_A − x̄_B,
so row i is ½wᵀP_i w + q_iᵀw + r_i with P_i = Σ_terms (uuᵀ + Σ_A + Σ_B), q_i = Σ_terms u and
r_i = −κ: the (d+1)×(d+1) matrices are computed once (G.3.2) and no pair is ever formed.

Each projection is a convex QCQP, compiled once by cvxpy with the point to project as a
parameter and solved by Clarabel. Because r_i = −κ < 0, w = 0 is strictly feasible, and a
projection that overshoots a constraint by the solver's tolerance is pulled back towards 0 along
the segment (convexity keeps that exactly feasible), so every iterate satisfies the rows.

Oracle counts (paper 001 spec §5, `engine.oracles.OracleCounts`): a step takes the gradient of f0
over all training rows (one objective gradient), then f0 at the new iterate for the stopping
rule (another pass over the rows); the projection works on the precomputed quadratic forms, not
the data, and counts as one constraint evaluation (the rows at the point to project) with no
constraint gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.models import Params
from engine.oracles import OracleCounts
from engine.problem import Problem
from engine.solvers.base import Solver, StepInfo
from engine.solvers.paper003.cards import QuadraticConfig
from engine.solvers.smoothness import objective_lipschitz
from engine.status import StopCode


@dataclass(frozen=True)
class QuadraticRows:
    """Rows ½wᵀP_i w + q_iᵀw + r_i ≤ 0 of a quadratic-AUC model in the parameters w."""

    hessians: np.ndarray  # (m, d, d), symmetric positive semidefinite
    linear: np.ndarray  # (m, d)
    constant: np.ndarray  # (m,), −κ

    def values(self, w: np.ndarray) -> np.ndarray:
        return 0.5 * np.einsum("i,mij,j->m", w, self.hessians, w) + self.linear @ w + self.constant


def _moments(design: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population covariance of the rows `idx` of X̃."""
    rows = design[idx]
    mean = rows.mean(axis=0)
    centred = rows - mean
    return mean, centred.T @ centred / len(idx)


def quadratic_rows(problem: Problem) -> QuadraticRows:
    """The bound quadratic-AUC rows as quadratics in w (paper 003, eqs. 102, 105, 107 with 103)."""
    bound = problem.bound
    design = problem.design().dense()
    cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def moments(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = idx.tobytes()
        if key not in cache:
            cache[key] = _moments(design, idx)
        return cache[key]

    size = design.shape[1]
    hessians, linear = np.zeros((bound.m, size, size)), np.zeros((bound.m, size))
    for i, terms in enumerate(bound.terms):
        for a, b in terms:
            (mean_a, cov_a), (mean_b, cov_b) = moments(a.numpy()), moments(b.numpy())
            u = mean_a - mean_b
            hessians[i] += np.outer(u, u) + cov_a + cov_b
            linear[i] += u
    # ½ per pair term minus the offset is 0 for all three models, leaving −κ
    constant = np.array(
        [0.5 * len(terms) - bound.offset - bound.spec.kappa for terms in bound.terms]
    )
    return QuadraticRows(hessians, linear, constant)


class QuadraticBaseline(Solver):
    """Projected gradient on the quadratic-AUC model of the problem's family (eqs. 102, 105 or
    107; the solver cards group_auc, inter_pairwise and intra_pairwise)."""

    def __init__(self, problem: Problem, config: QuadraticConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.design = problem.design()
        self.rows = quadratic_rows(problem)
        # cvxpy takes about a second to import: only a run of this solver pays for it
        from engine.solvers.paper003.qcqp_projection import Projection

        self.projection = Projection(self.rows)
        self.eta = config.step if config.step is not None else 1.0 / objective_lipschitz(problem)
        self.w = problem.init_params()["w"]  # w⁰ = 0, strictly feasible (G.3.2)
        self.f0 = problem.loss(self.design.matvec(self.w))
        self.k = 0
        self.counts = OracleCounts()

    def step(self) -> StepInfo:
        _, loss_grad = self.problem.loss_and_grad_scores(self.design.matvec(self.w))
        z = self.w - self.eta * self.design.rmatvec(loss_grad)
        w, how = self.projection(z)
        self.k += 1
        n = len(loss_grad)
        self.counts.tally(n, objective_gradients=1, constraint_values=1)
        if how.startswith("failed"):
            return StepInfo(
                iterations=1,
                objective=self.f0,
                state={"step": self.eta, "projection": how} | self.counts.state(n),
                done=True,
                reason=f"projection {how} at iteration {self.k}; kept w^{self.k - 1}",
                stop=StopCode.STEP_FAILED,
            )
        previous, self.w = self.f0, w
        self.f0 = self.problem.loss(self.design.matvec(w))
        self.counts.tally(n)
        change = abs(self.f0 - previous)
        reason, stop = "", StopCode.CONVERGED
        if change < self.config.tolerance:
            reason = f"f0 changed by {change:.3g} < {self.config.tolerance:g} at iteration {self.k}"
        elif self.k >= self.config.iterations:
            reason, stop = f"all K = {self.k} iterations done", StopCode.ITERATION_CAP
        return StepInfo(
            iterations=1,
            objective=self.f0,
            state={
                "step": self.eta,
                "projection": how,
                "violation_before": float(self.rows.values(z).max()),
                "max_row": float(self.rows.values(w).max()),
            }
            | self.counts.state(n),
            done=bool(reason),
            reason=reason,
            stop=stop,
        )

    def candidate(self) -> Params:
        """The current (feasible) iterate w^k; the paper reports the last one."""
        return {"w": self.w.copy()}
