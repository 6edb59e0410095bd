"""Stochastic Ghost (paper 000, Alg. 1, after Facchinei & Kungurtsev 2023), any model.

x = (weights, aux) flattened into one vector of n entries; aux are the family's auxiliary variables
(pSP's θ), started at `bound.aux_init(scores of x_0)` and stepped with the weights. Step k:
  1. N ~ Geom(p0) on {0, 1, …}, redrawn while J = 2^(N+1) exceeds the cap (the paper-era code's
     truncation; the cap is an option, by default the largest training group);
  2. the objective rows X¹ (1 row) and X^J (J rows), then the constraint rows (1 row of every
     cell, then J rows of every cell), all uniform WITH replacement (paper 000, Alg. 1, step 2:
     the estimator of eq. 9 needs i.i.d. rows, so the epoch streams of `engine.sampling` are not
     used). The cells are the groups ("an equal number of data points for every subgroup",
     paper 000, Sec. 3); for the families whose rows are means within (group, label) cells
     (`BoundConstraint.label_cells`: rates given Y, AUC pairs) they are those cells, so that
     even 1 row of every cell gives each conditional mean a sample (paper 000, Table 1's
     D[A, Y = v]);
  3. for each batch B ∈ {X¹, odd(X^J), even(X^J), X^J}: g = ∇̄f, c̄ and Jc = ∇̄c on B, then
       κ(B) = (1 − λ) max_i [c̄_i]₊ + λ min_{‖d‖∞ ≤ ρ} max_i [c̄_i + ∇c̄_iᵀ d]₊   (an LP, HiGHS),
       d(B) = argmin_d gᵀd + (τ/2)‖d‖²  s.t.  c̄ + Jc d ≤ κ(B) e,  ‖d‖∞ ≤ β        (eq. 8, Clarabel);
  4. d = d(X¹) + [d(X^J) − ½(d(odd) + d(even))] / P(N)                            (eq. 9);
  5. x ← x + α_k d with α_0 = α0 and α_(k+1) = α_k (1 − α̂ α_k) (the code's 'dimin' rule).
A failed LP makes the second term of κ λρ (as the code does); a failed QP leaves d(B) = 0. Both
are counted in the step's state. The reported iterate is the last one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import clarabel
import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from engine.errors import UserError
from engine.problem import Problem
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper000.cards_ghost import GhostConfig

_SOLVED = (clarabel.SolverStatus.Solved, clarabel.SolverStatus.AlmostSolved)


@dataclass(frozen=True)
class Oracle:
    """Minibatch estimates at x: g = ∇̄f ∈ Rⁿ, c̄ ∈ R^m and Jc = ∇̄c ∈ R^{m×n}."""

    loss: float
    grad: np.ndarray
    constraint: np.ndarray
    jacobian: np.ndarray


def kappa(constraint: np.ndarray, jacobian: np.ndarray, rho: float, lam: float) -> float | None:
    """κ = (1 − λ) max_i [c_i]₊ + λ min_{‖d‖∞ ≤ ρ} max_i [c_i + ∇c_iᵀ d]₊ (paper 000, Alg. 1), the
    LP solved in (t, d) with HiGHS: min t s.t. c + Jc d ≤ t e, t ≥ 0, ‖d‖∞ ≤ ρ. None if the LP
    fails (the caller then uses λρ for the second term, as the paper-era code does)."""
    m, n = jacobian.shape
    cost = np.zeros(n + 1)
    cost[0] = 1.0
    result = linprog(
        cost,
        A_ub=np.hstack([-np.ones((m, 1)), jacobian]),
        b_ub=-constraint,
        bounds=[(0.0, None)] + [(-rho, rho)] * n,
        method="highs",
    )
    if result.status != 0:
        return None
    return (1.0 - lam) * float(np.max(np.maximum(constraint, 0.0))) + lam * float(result.fun)


def direction(oracle: Oracle, level: float, tau: float, beta: float) -> np.ndarray | None:
    """d = argmin gᵀd + (τ/2)‖d‖² s.t. c̄ + Jc d ≤ κ e, ‖d‖∞ ≤ β (paper 000, eq. 8), with Clarabel;
    None if it reports no solution (e.g. an infeasible QP after a failed LP)."""
    m, n = oracle.jacobian.shape
    eye = sparse.identity(n, format="csc")
    A = sparse.vstack([sparse.csc_matrix(oracle.jacobian), eye, -eye], format="csc")
    b = np.concatenate([level - oracle.constraint, np.full(2 * n, beta)])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    solver = clarabel.DefaultSolver(
        tau * eye, oracle.grad, A, b, [clarabel.NonnegativeConeT(m + 2 * n)], settings
    )
    solution = solver.solve()
    if solution.status not in _SOLVED:
        return None
    return np.asarray(solution.x)


def combine(
    single: np.ndarray, odd: np.ndarray, even: np.ndarray, full: np.ndarray, probability: float
) -> np.ndarray:
    """d = d(X¹) + [d(X^J) − ½(d(odd) + d(even))] / P(N) (paper 000, eq. 9)."""
    return single + (full - 0.5 * (odd + even)) / probability


class StochasticGhost(MinibatchSolver):
    """Stochastic Ghost (paper 000, Alg. 1). The state has the level N, the batch J, κ and
    "constraint.<row>" of the full batch X^J, the step α_k and the LP and QP failures so far."""

    steps_per_call = 1  # a step solves 4 LPs and 4 QPs: already a driver call's worth of work

    def __init__(self, problem: Problem, config: GhostConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        train, n_groups = problem.data.train, problem.data.n_groups
        if problem.bound.label_cells:
            keys, n_cells = 2 * train.groups + (train.y > 0), 2 * n_groups
        else:
            keys, n_cells = train.groups, n_groups
        cells = (np.flatnonzero(keys == key) for key in range(n_cells))
        self.cells = [rows for rows in cells if rows.size]
        cap = config.max_batch or max(len(rows) for rows in self.cells)
        if cap < 2:
            raise UserError("stochastic_ghost needs batches of J ≥ 2 rows: raise max_batch")
        self.max_level = int(math.floor(math.log2(cap))) - 1  # the largest N with 2^(N+1) ≤ cap
        self.alpha = config.alpha0
        self.lp_failures = self.qp_failures = 0
        self.last: dict[str, float | str] = {}

    def draw_level(self) -> tuple[int, float]:
        """N ~ Geom(p0) on {0, 1, …}, redrawn while N exceeds the cap's level (the paper-era
        code's truncation), and its probability given that truncation."""
        p0 = self.config.p0
        while (level := int(self.rng.geometric(p0)) - 1) > self.max_level:
            pass
        return level, (1 - p0) ** level * p0 / (1 - (1 - p0) ** (self.max_level + 1))

    def per_cell(self, count: int) -> np.ndarray:
        """`count` rows of every cell, uniform with replacement: a (cells × count) array."""
        return np.stack([rows[self.rng.integers(len(rows), size=count)] for rows in self.cells])

    def oracle(self, objective_rows: np.ndarray, constraint_rows: np.ndarray) -> Oracle:
        """f̄, ∇̄f, c̄ and ∇̄c at x on a batch: one backward pass for f and one per row."""
        loss, grad = self.oracles.objective(self.x, objective_rows)
        constraint, jacobian = self.oracles.constraint_jacobian(self.x, constraint_rows)
        return Oracle(loss, grad, constraint, jacobian)

    def subproblems(self, oracle: Oracle) -> tuple[float, np.ndarray]:
        """κ(B) and d(B) of one batch (paper 000, Alg. 1, step 4): λρ for the LP's term if the LP
        fails, d(B) = 0 if the QP fails, each failure counted."""
        cfg = self.config
        level = kappa(oracle.constraint, oracle.jacobian, cfg.rho, cfg.lam)
        if level is None:
            self.lp_failures += 1
            level = (1 - cfg.lam) * float(np.max(np.maximum(oracle.constraint, 0.0)))
            level += cfg.lam * cfg.rho
        d = direction(oracle, level, cfg.tau, cfg.beta)
        if d is None:
            self.qp_failures += 1
            d = np.zeros(len(oracle.grad))
        return level, d

    def iterate(self) -> float:
        cfg = self.config
        # paper 000, Alg. 1, steps 1–3: N, J, then X¹, X^J and the per-cell constraint rows
        level, probability = self.draw_level()
        size = 2 ** (level + 1)
        n_rows = len(self.problem.data.train.groups)
        single, batch = self.rng.integers(n_rows, size=1), self.rng.integers(n_rows, size=size)
        single_c, batch_c = self.per_cell(1).ravel(), self.per_cell(size)
        batches = {
            "single": (single, single_c),
            "odd": (batch[0::2], batch_c[:, 0::2].ravel()),
            "even": (batch[1::2], batch_c[:, 1::2].ravel()),
            "full": (batch, batch_c.ravel()),
        }
        oracles = {name: self.oracle(*rows) for name, rows in batches.items()}
        solved = {name: self.subproblems(oracle) for name, oracle in oracles.items()}
        # step 5 (eq. 9), then steps 6–7: x ← x + α_k d and the next α
        d = combine(**{name: d for name, (_, d) in solved.items()}, probability=probability)
        alpha, full = self.alpha, oracles["full"]
        self.x = self.oracles.layout.project(self.x + alpha * d)
        self.alpha = alpha * (1 - cfg.alpha_hat * alpha)
        self.last = {
            "N": float(level),
            "J": float(size),
            "kappa": solved["full"][0],
            "step": alpha,
            "batch_loss": full.loss,
        }
        rows = self.problem.bound.rows
        self.last |= {
            f"constraint.{r}": float(v) for r, v in zip(rows, full.constraint, strict=True)
        }
        return full.loss

    def state(self) -> dict[str, float | str]:
        return self.last | {
            "lp_failures": float(self.lp_failures),
            "qp_failures": float(self.qp_failures),
        }
