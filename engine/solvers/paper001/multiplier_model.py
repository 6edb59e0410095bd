"""Lagrange-multiplier models (Narasimhan et al. 2020), paper 001's baseline for many
constraints (§5.3 and App. D.3; spec 001 §2.2), any model.

min_θ max_ψ F(θ) + Σ_j λ_j g_j(θ) with the multipliers λ_j = softplus(h_ψ(φ_j)) ≥ 0 given by a
small network h_ψ of each constraint row's features φ_j (`BoundConstraint.row_features`: a
subgroup's quantile levels of its thresholds; a one-hot code of any other row), so that
constraints with similar features share what is learnt of their multipliers. Step k samples an
objective batch B (uniform) and J constraint rows (uniform without replacement), then
  θ ← θ − η_θ ∇_θ[F_B(θ) + Σ_{j∈J} λ_j g_j(θ)],     ψ ← ψ + η_ψ ∇_ψ Σ_{j∈J} λ_j g_j(θ),
both at the same (θ, ψ) (spec 001 §2.2). The constraint rows are evaluated on all training rows
(ours: a subgroup holding 1 % of the rows has a dozen of them, which a minibatch would often
miss). softplus keeps λ ≥ 0 with a non-zero gradient everywhere (ours: the output map is not
given). ψ is a maximised block of x, so one projected step moves θ and ψ with their own steps.
Draws: the model seed, h_ψ's seed, then B and J per step. The reported iterate is the last one.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from engine.mlp import init_mlp_params
from engine.networks import MLPNetwork
from engine.problem import Problem
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper001.cards_multiplier import MultiplierModelConfig
from engine.solvers.records import DUAL, per_row
from engine.variables import Kind


class MultiplierModel(MinibatchSolver):
    """The state has the batch loss, every row's multiplier λ_j = "dual.<row>" (also for the
    KKT measure), and the largest sampled row."""

    def __init__(
        self, problem: Problem, config: MultiplierModelConfig, rng: np.random.Generator
    ) -> None:
        super().__init__(problem, config, rng)
        features = self.row_features
        self.features = (features - features.mean(axis=0)) / (features.std(axis=0) + 1e-12)
        start = init_mlp_params(
            features.shape[1], config.multiplier_hidden, int(rng.integers(2**31))
        )
        self.x[self.psi] = self.multipliers_net.flatten(start)
        self.steps = np.full(self.oracles.layout.size, config.eta_theta)
        self.steps[self.psi] = config.eta_psi
        self.sampler = self.batch_sampler()
        self.all_rows = np.arange(len(problem.data.train))
        self.last = (np.nan, np.nan)

    def add_blocks(self) -> None:
        self.row_features = self.problem.bound.row_features()
        self.multipliers_net = MLPNetwork(self.row_features.shape[1], self.config.multiplier_hidden)
        self.psi = self.oracles.add("multiplier_model", Kind.MAXIMISED, self.multipliers_net.size)

    def _multipliers(self, psi: np.ndarray) -> tuple[np.ndarray, np.ndarray, object]:
        """λ = softplus(h_ψ(φ)) of every row, h_ψ(φ) and the tape for ψ's gradient."""
        out, tape = self.multipliers_net.forward(psi, self.features)
        return np.logaddexp(0.0, out), out, tape

    def iterate(self) -> float:
        cfg, x, m = self.config, self.x, self.problem.bound.m
        psi = x[self.psi]
        lam, out, tape = self._multipliers(psi)
        chosen = self.rng.choice(m, size=min(cfg.constraint_batch, m), replace=False)
        loss, grad = self.oracles.objective(x, self.sampler.objective(cfg.batch_size).rows)
        values, pullback = self.oracles.constraint_linearised(x, self.all_rows)
        weight = np.zeros(m)
        weight[chosen] = lam[chosen]
        grad += pullback(weight)  # ∇_θ Σ_{j∈J} λ_j g_j
        # ∇_ψ Σ_{j∈J} λ_j g_j = Σ_{j∈J} g_j softplus′(h_ψ(φ_j)) ∇_ψ h_ψ(φ_j)
        d_out = np.zeros(m)
        d_out[chosen] = values[chosen] * expit(out[chosen])
        grad[self.psi] = self.multipliers_net.backward(psi, tape, d_out)
        self.x = self.oracles.layout.project(x - self.steps * self.oracles.layout.descent(grad))
        self.last = (loss, float(values[chosen].max()))
        return loss

    def multipliers(self) -> np.ndarray:
        return self._multipliers(self.x[self.psi])[0]

    def state(self) -> dict[str, float | str]:
        loss, worst = self.last
        rows = self.problem.bound.rows
        state: dict[str, float | str] = {"batch_loss": loss, "sampled_max_row": worst}
        return state | per_row(DUAL, rows, self.multipliers())
