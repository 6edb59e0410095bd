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
§5.3, it throws θ far from the feasible set before u has caught up). A warm start (the card's:
θ_0 a given model) from a solve under the same rows at another κ starts μ_0 at that solve's
last λ (`Problem.start_state`): from μ_0 = 0 the first steps would pull θ toward the
unconstrained model until the duals grow back. Step k: θ, u and μ all use λ_k;
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

The θ-step η (Table 2's η_w), unless set, is Alg. 1's bound η = 1/(L_F + 3ρM_G²) with the
problem's own constants (`Smoothness`), computed once at the start: L_F, the Lipschitz constant
of ∇F (A2), is for a linear model the objective's curvature bound in the scores times
λ_max(X̃ᵀX̃) (¼λ_max(X̃ᵀX̃/n) for the logistic loss), by power iterations on the design; for an
MLP, whose L_F has no closed form, Table 2's network step stands in for 1/L_F. M_G, the bound
on ‖∂G‖ (A3), is taken as ‖J_G(θ_0)‖₂, the rows' Jacobian (in θ and the family's auxiliary
variables) at the start, where a linear model's scores are all 0 and the sigmoid's and the
ramp's slopes at their largest. Table 2's η_w = 0.001 was tuned on the paper's data, whose
preprocessing it does not state; on our standardised features it barely moves θ. The setup's
passes over the data are on the run's clock but not in the oracle counts, which count the
algorithm's calls (one data pass at the start and one per step in full-batch mode).

Full-batch mode (the default; §5.1–5.2 and the deterministic analysis) evaluates F, G and their
linearisation at θ_{k+1} on all training rows in one forward pass (`FullData`): G(θ_{k+1}) for
eq. (12), and ∇F(θ_{k+1}) + J_G(θ_{k+1})ᵀλ_{k+1} (one backward pass) for step k + 1's θ-step.
Minibatch mode (App. D.3) draws an objective batch ξ_k for ∇F(θ_k) and a constraint batch
ζ_{k+1} (J rows of every group, or cell) for G(θ_{k+1}), whose linearisation also serves step
k + 1's θ-step. Draws: the model seed, then the sampler's passes, ζ_0 at the start, then ξ_k,
ζ_{k+1} per step. The reported iterate is the last one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.fairness.constraints.batch_rows import BatchRows, rows_jacobian
from engine.oracles import WEIGHTS, MinibatchOracles
from engine.problem import Problem
from engine.solvers.full_data import FullData
from engine.solvers.kkt import multipliers_from_state
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper001.cards_plada import TABLE2_NETWORK, PLADAConfig
from engine.solvers.records import DUAL, per_row
from engine.solvers.smoothness import objective_lipschitz
from engine.variables import Box, Kind


@dataclass(frozen=True)
class Smoothness:
    """The constants of Alg. 1's bound on the θ-step, 0 < η < 1/(L_F + 3ρM_G²): `objective`
    L_F (A2: ∇F is L_F-Lipschitz) and `constraint` M_G (A3: ‖∂G‖ ≤ M_G)."""

    objective: float
    constraint: float

    def step(self, rho: float) -> float | None:
        """η = 1/(L_F + 3ρM_G²), the bound itself (both constants are estimates, not
        suprema); None when it is not a finite number > 0 (no curvature at all)."""
        bound = self.objective + 3.0 * rho * self.constraint**2
        return 1.0 / bound if np.isfinite(bound) and bound > 0 else None


def jacobian_norm(oracles: MinibatchOracles, rows: BatchRows, x: np.ndarray) -> float:
    """‖J_G(x)‖₂, the spectral norm of the rows' Jacobian in the weights and the family's
    auxiliary variables at x, on all training rows (one forward pass and the rows' backward
    passes, outside the oracle counts)."""
    layout = oracles.layout
    w = x[layout[WEIGHTS]]
    h, tape = oracles.network.forward(w, oracles.X)
    at = rows_jacobian(rows, h, oracles.aux(x))
    if not len(at.values):
        return 0.0
    jacobian = np.zeros((len(at.values), layout.size))
    jacobian[:, layout[WEIGHTS]] = oracles.network.backward_many(w, tape, at.scores)
    for name, value in at.aux.items():
        jacobian[:, layout[f"aux.{name}"]] = value
    gram = (
        jacobian @ jacobian.T if jacobian.shape[0] <= jacobian.shape[1] else jacobian.T @ jacobian
    )
    return float(np.sqrt(max(np.linalg.eigvalsh(gram)[-1], 0.0)))


def smoothness(problem: Problem, oracles: MinibatchOracles, x: np.ndarray) -> Smoothness:
    """L_F and M_G of the problem at the start x (module docstring): L_F = the objective's
    curvature bound times λ_max(X̃ᵀX̃) for a linear model (`engine.solvers.smoothness`), 1/η_w
    of Table 2's network row for an MLP; M_G = ‖J_G(x)‖₂."""
    objective = objective_lipschitz(problem)
    if objective is None:
        objective = 1.0 / TABLE2_NETWORK["eta_w"]
    return Smoothness(objective, jacobian_norm(oracles, problem.batch_rows(), x))


class PLADA(MinibatchSolver):
    """Paper 001, Alg. 1 with vector duals. The state has the batch loss, λ as "dual.<row>", μ as
    "mu.<row>", u as "u.<row>", "dual_gap" = ‖λ − μ‖, "gamma" = γ_k of the last step and "step"
    = η. `smoothness` holds L_F and M_G when η was derived from them (None when set)."""

    def __init__(self, problem: Problem, config: PLADAConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        chosen = config.table2(problem.model.affine)
        self.tau, self.gamma0 = chosen["eta_u"], chosen["gamma0"]
        alpha, beta = chosen["alpha"], chosen["beta"]
        self.rho = alpha / (1.0 + alpha * beta)  # Alg. 1, input
        # η: the set value, else Alg. 1's bound with the problem's L_F and M_G at the start
        self.smoothness = None
        if config.eta_w is None:
            self.smoothness = smoothness(problem, self.oracles, self.x)
        derived = None if self.smoothness is None else self.smoothness.step(self.rho)
        self.eta = chosen["eta_w"] if derived is None else derived
        # θ and u move by their own steps in one projected step
        self.steps = np.full(self.oracles.layout.size, self.eta)
        self.steps[self.u] = self.tau
        self.full = FullData(self.oracles, problem) if config.full_batch else None
        self.sampler = None if config.full_batch else self.batch_sampler()
        # start (the module's): u_0 = Π_U(−G(θ_0)), μ_0 = 0 (or a κ′ step's λ), λ_0 from (12)
        warm = multipliers_from_state(problem, problem.start_state or {})
        self.mu = np.zeros(problem.bound.m) if warm is None else warm
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
            "step": self.eta,
            "dual_gap": float(np.linalg.norm(self.lam - self.mu)),
        }
        for name, values in ((DUAL, self.lam), ("mu", self.mu), ("u", self.x[self.u])):
            state |= per_row(name, rows, values)
        return state
