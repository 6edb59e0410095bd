"""SSL-ALM (paper 000, Alg. 2, after Huang, Zhang & Alacaoglu 2025) and ALM (the same with μ = 0),
any model, in either of two augmented Lagrangians of the rows c(x) ≤ 0 (option `augmentation`).

"slack" (paper 000, Alg. 2): c(x) ≤ 0 becomes c(x) + s = 0 with slacks s ≥ 0, one per constraint
row, so the primal variable is x = (weights, aux, s) on 𝒳 = Rⁿ × R^m_{≥0}, C(x, ζ) = c(x, ζ) + s,
the duals y ∈ R^m are free, and L_ρ(x, y) = f(x) + yᵀC(x) + (ρ/2)‖C(x)‖².

"hpr" (Hestenes–Powell–Rockafellar; Rockafellar 1973, Bertsekas 1982 §3.1): no slacks, so
x = (weights, aux) on 𝒳 = Rⁿ, C = c, the duals y ≥ 0, and
  L_ρ(x, y) = f(x) + (1/(2ρ)) Σ_i (max(0, y_i + ρ c_i(x))² − y_i²),
  ∇_x L_ρ = ∇f(x) + Σ_i max(0, y_i + ρ c_i(x)) ∇c_i(x).
It is the slack form with s minimised out exactly (s* = max(0, −c − y/ρ)); "slack" instead takes
one projected gradient step in s per iteration.

aux are the family's auxiliary variables (pSP's θ), stepped with the weights from
`bound.aux_init(scores of x_0)`. Start: y_0 = 0, z_0 = x_0 (and s_0 = 0). Step k, with an objective
batch ξ and two independent constraint batches ζ1, ζ2 (drawn in that order), and P the duals'
projection (the identity for "slack", max(0, ·) for "hpr"):
  y_{k+1} = P(y_k + η C(x_k, ζ1)), reset to 0 if ‖y_{k+1}‖₂ ≥ M_y,
  G = ∇f(x_k, ξ) + ∇C(x_k, ζ1)ᵀ P(y_{k+1} + ρ C(x_k, ζ2)) + μ (x_k − z_k)   (eq. 10 for "slack"),
  x_{k+1} = proj_𝒳(x_k − τ G),   z_{k+1} = z_k + β (x_k − z_k).
The reported iterate is the last one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.problem import Problem
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper000.cards_alm import SSLALMConfig
from engine.solvers.records import DUAL, per_row
from engine.variables import NONNEGATIVE, Kind

# P, the projection onto the duals' set: R^m for the equalities c + s = 0 (paper 000, Alg. 2,
# step 2: y unprojected), R^m_{≥0} for the inequalities of "hpr" (projected dual ascent; applied to
# the trial multiplier y + ρc it gives the weight max(0, y + ρc) of ∇_x L_ρ)
DUAL_PROJECTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "slack": lambda v: v,
    "hpr": lambda v: np.maximum(v, 0.0),
}


class SSLALM(MinibatchSolver):
    """SSL-ALM (paper 000, Alg. 2); ALM is its μ = 0 config. The state has the batch loss, the
    duals "dual.<row>", the slacks "slack.<row>" (the "slack" form only) and whether the
    safeguard reset y."""

    def __init__(self, problem: Problem, config: SSLALMConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        # paper 000, Alg. 2, input: x_0 = (weights, aux, s_0 = 0), y_0 = 0, z_0 = x_0
        self.z = self.x.copy()
        self.y = np.zeros(problem.bound.m)
        self.project_duals = DUAL_PROJECTIONS[config.augmentation]
        self.sampler = self.batch_sampler()
        self.last = (np.nan, False)

    def add_blocks(self) -> None:
        """The slacks s ≥ 0 of the "slack" form; "hpr" has none (x holds no s at all)."""
        self.slack: slice | None = None
        if self.config.augmentation == "slack":
            self.slack = self.oracles.add("slack", Kind.SLACK, self.problem.bound.m, NONNEGATIVE)

    def with_slack(self, c: np.ndarray) -> np.ndarray:
        """C(x, ζ) = c(x, ζ) + s in the "slack" form, c(x, ζ) in "hpr"."""
        return c if self.slack is None else c + self.x[self.slack]

    def iterate(self) -> float:
        cfg, x, oracles = self.config, self.x, self.oracles
        # paper 000, Alg. 2, step 1: ξ, then the independent ζ1 and ζ2
        xi = self.sampler.objective(cfg.batch_size).rows
        zeta1 = self.sampler.per_group(cfg.per_group).rows
        zeta2 = self.sampler.per_group(cfg.per_group).rows
        loss, grad = oracles.objective(x, xi)
        c1, constraint_gradient = oracles.constraint_linearised(x, zeta1)
        c1 = self.with_slack(c1)
        c2 = self.with_slack(oracles.constraint(x, zeta2))
        # steps 2–3: dual ascent with the safeguard (the paper-era code's norm test)
        y = self.project_duals(self.y + cfg.eta * c1)
        reset = bool(np.linalg.norm(y) >= cfg.dual_bound)
        self.y = np.zeros_like(y) if reset else y
        # step 4 (eq. 10): G = ∇f(x, ξ) + ∇C(x, ζ1)ᵀ P(y + ρ C(x, ζ2)) + μ (x − z); ∂C/∂s = I
        weight = self.project_duals(self.y + cfg.rho * c2)
        grad += constraint_gradient(weight)
        if self.slack is not None:
            grad[self.slack] += weight
        if cfg.mu:
            grad += cfg.mu * (x - self.z)
        # step 6, with the pre-update x_k; step 5: the projected step (slacks clipped at 0)
        self.z += cfg.beta * (x - self.z)
        self.move(cfg.tau, grad)
        self.last = (loss, reset)
        return loss

    def multipliers(self) -> np.ndarray:
        return self.y.copy()

    def state(self) -> dict[str, float | str]:
        loss, reset = self.last
        rows = self.problem.bound.rows
        state: dict[str, float | str] = {"batch_loss": loss, "dual_reset": float(reset)}
        state |= per_row(DUAL, rows, self.y)
        if self.slack is not None:
            slacks = self.x[self.slack]
            state |= per_row("slack", rows, slacks)
        return state
