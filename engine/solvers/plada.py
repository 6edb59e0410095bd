"""PLADA, the P-Lagrangian based alternating direction algorithm (paper 001, Alg. 1), any model.

G(θ) ≤ 0 (the family's m surrogate rows, κ already subtracted) becomes G(θ) + u = z, z = 0
(eq. 5) with slacks u ∈ U = [0, u_max]^m and a perturbation z. With ρ = α/(1 + αβ), the duals
are vectors of length m: λ ∈ R^m is *never* clipped at 0 and μ ∈ R^m is the auxiliary
multiplier. The primal variable is x = (weights, the family's aux, u); u is a block of the layout
with its box, so one projected step moves θ and u.

Start (Alg. 1 leaves it open; ours): θ_0 the model's initial weights (0 for a linear model),
u_0 = Π_U(−G(θ_0)), μ_0 = 0, λ_0 = μ_0 + ρ(G(θ_0) + u_0). The slack of a row feasible at θ_0
starts at its room, so that G + u = z with z_0 = 0 holds at the start, as (5) asks, and λ_0 = 0
there; spec 001 §2.1 proposes u_0 = 0, which gives every feasible row λ_0 = −ρ|G_j| < 0, a first
θ-step that raises every such row (with hundreds of rows, as in the intersectional problem of
§5.3, it throws θ far from the feasible set before u has caught up). Step k: θ, u and μ all use
λ_k;
only λ_{k+1} uses the new θ, u and μ (spec 001 §5, "the order of steps matters"):
  γ_k     = min{γ0, ρ δ_k/(‖λ_k − μ_k‖² + 1)},  δ_k = κ_δ/(k + 1)          (eq. 11, one scalar)
  θ_{k+1} = Π_Θ(θ_k − η(∇F(θ_k) + J_G(θ_k)ᵀ λ_k))                          (eq. 9, linearised)
  u_{k+1} = Π_U(u_k − τ λ_k)                                                 (eq. 10)
  μ_{k+1} = μ_k + (γ_k/ρ)(λ_k − μ_k)                                         (eq. 11)
  λ_{k+1} = μ_{k+1} + ρ(G(θ_{k+1}) + u_{k+1})                                (eq. 12)
κ_δ is the option `delta_scale` (the paper's κ, not the constraint's). z_{k+1} =
(λ_{k+1} − μ_{k+1})/α (eq. 13) is diagnostic only and not kept; ‖λ − μ‖ = α‖z‖ is
logged instead ("dual_gap", Thm 2 and App. D.2).

Eq. (9) keeps ⟨λ_k, G(θ)⟩ exact, a prox step on a non-convex G with no closed form; this solver
takes the linearised step above instead (spec 001 §2.1, *[ours]*: a deviation). Θ is the whole
space (the family's auxiliary variables keep their declared boxes).

Full-batch mode (the default; §5.1–5.2 and the deterministic analysis) evaluates F, G and their
linearisation at θ_{k+1} on all training rows in one forward pass (`FullData`): G(θ_{k+1}) for
eq. (12), and ∇F(θ_{k+1}) + J_G(θ_{k+1})ᵀλ_{k+1} (one backward pass) for step k + 1's θ-step.
Minibatch mode (App. D.3) draws an objective batch ξ_k for ∇F(θ_k) and a constraint batch
ζ_{k+1} (J rows of every group, or cell) for G(θ_{k+1}), whose linearisation also serves step
k + 1's θ-step. Draws: the model seed, then the sampler's passes, ζ_0 at the start, then ξ_k,
ζ_{k+1} per step. The reported iterate is the last one.
"""

from __future__ import annotations

import numpy as np

from engine.problem import Problem
from engine.solvers.catalogue.p001_plada import PLADAConfig
from engine.solvers.full_data import FullData
from engine.solvers.minibatch import MinibatchSolver
from engine.variables import Box, Kind


class PLADA(MinibatchSolver):
    """Paper 001, Alg. 1 with vector duals. The state has the batch loss, λ as "dual.<row>", μ as
    "mu.<row>", u as "u.<row>", "dual_gap" = ‖λ − μ‖ and "gamma" = γ_k of the last step."""

    def __init__(self, problem: Problem, config: PLADAConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        chosen = config.table2(problem.model.affine)
        self.eta, self.tau = chosen["eta_w"], chosen["eta_u"]
        self.gamma0 = chosen["gamma0"]
        alpha, beta = chosen["alpha"], chosen["beta"]
        self.rho = alpha / (1.0 + alpha * beta)  # Alg. 1, input
        # θ and u move by their own steps in one projected step
        self.steps = np.full(self.oracles.layout.size, self.eta)
        self.steps[self.u] = self.tau
        self.full = FullData(self.oracles, problem) if config.full_batch else None
        self.sampler = None if config.full_batch else self.batch_sampler()
        # start (the module's): u_0 = Π_U(−G(θ_0)), μ_0 = 0, λ_0 from eq. (12)
        self.mu = np.zeros(problem.bound.m)
        self._linearise()
        self.x = self.oracles.layout.project(self._with_slack(-self.g))
        self.lam = self.mu + self.rho * (self.g + self.x[self.u])
        self.last = (np.nan, np.nan)

    def _with_slack(self, u: np.ndarray) -> np.ndarray:
        x = self.x.copy()
        x[self.u] = u
        return x

    def add_blocks(self) -> None:
        # eq. (10): U = [0, u_max], u_max := B_G ≥ |G|
        box = Box(0.0, self.config.u_max)
        self.u = self.oracles.add("u", Kind.SLACK, self.problem.bound.m, box)

    def _linearise(self) -> None:
        """G at the current x and the direction λ ↦ (∇F +) J_Gᵀλ there: on all rows (with F),
        or on a new constraint batch ζ (F then comes from the step's own batch ξ)."""
        if self.full is not None:
            self.loss, self.g, self.direction = self.full.linearise(self.x)
        else:
            rows = self.sampler.per_group(self.config.per_group).rows
            self.g, self.direction = self.oracles.constraint_linearised(self.x, rows)

    def iterate(self) -> float:
        lam, mu, rho, layout = self.lam, self.mu, self.rho, self.oracles.layout
        # eq. (11)'s step size: one scalar from the full vector λ_k − μ_k
        delta = self.config.delta_scale / (self.t + 1)
        gamma = min(self.gamma0, rho * delta / (float(np.sum((lam - mu) ** 2)) + 1.0))
        # eq. (9), linearised, and eq. (10): ∂/∂θ = ∇F(θ_k) + J_G(θ_k)ᵀλ_k, ∂/∂u = λ_k
        grad = self.direction(lam)
        if self.full is not None:
            loss = self.loss
        else:
            loss, grad_f = self.oracles.objective(
                self.x, self.sampler.objective(self.config.batch_size).rows
            )
            grad += grad_f
        grad[self.u] += lam
        self.x = layout.project(self.x - self.steps * layout.descent(grad))
        # eq. (11) with λ_k, then eq. (12) at (θ_{k+1}, u_{k+1}, μ_{k+1}); never clipped
        self.mu = mu + (gamma / rho) * (lam - mu)
        self._linearise()
        self.lam = self.mu + rho * (self.g + self.x[self.u])
        self.last = (loss, gamma)
        return loss

    def multipliers(self) -> np.ndarray:
        """λ_k, one per row (of either sign: the KKT measure projects it on λ ≥ 0)."""
        return self.lam.copy()

    def state(self) -> dict[str, float | str]:
        loss, gamma = self.last
        rows = self.problem.bound.rows
        state: dict[str, float | str] = {
            "batch_loss": loss,
            "gamma": gamma,
            "dual_gap": float(np.linalg.norm(self.lam - self.mu)),
        }
        for name, values in (("dual", self.lam), ("mu", self.mu), ("u", self.x[self.u])):
            state |= {f"{name}.{r}": float(v) for r, v in zip(rows, values, strict=True)}
        return state
