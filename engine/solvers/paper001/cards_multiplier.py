"""Narasimhan et al. (2020)'s Lagrange-multiplier model, paper 001's baseline for its
intersectional experiment (§5.3): its options and card. Implementation:
`engine.solvers.paper001.multiplier_model`.

Paper 001 gives none of the baseline's hyper-parameters ("followed the hyperparameter settings
of … Narasimhan et al. (2020)", spec 001 §2.2) beyond the multiplier model being "a deep neural
network with three hidden layers"; every default below is ours and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.options import Options, option
from engine.solvers.card import SolverCard


@dataclass(frozen=True)
class MultiplierModelConfig(Options):
    eta_theta: float = option(
        0.01,
        "η_θ, the model's step on F_B + Σ_{j∈J} λ_j g_j (ours: paper 001 gives none)",
        above=0,
    )
    eta_psi: float = option(
        0.01, "η_ψ, the multiplier model's ascent step on Σ_{j∈J} λ_j g_j (ours)", above=0
    )
    multiplier_layers: int = option(
        3, "hidden ReLU layers of the multiplier model h_ψ (paper 001 §5.3: three)", minimum=1
    )
    multiplier_width: int = option(16, "units per hidden layer of h_ψ (ours)", minimum=1)
    batch_size: int = option(128, "rows per objective batch B (ours)", minimum=1)
    constraint_batch: int = option(
        32, "constraints J sampled per step, uniformly without replacement (ours)", minimum=1
    )
    iterations: int = option(10**9, "iterations at most (paper 001 §5.3 runs by epochs)", minimum=1)

    @property
    def multiplier_hidden(self) -> tuple[int, ...]:
        return (self.multiplier_width,) * self.multiplier_layers


CARDS = (
    SolverCard(
        "multiplier_model",
        MultiplierModelConfig,
        "001",
        "Lagrange-multiplier model (Narasimhan et al. 2020; paper 001's baseline for many "
        "constraints, §5.3): a small ReLU network h_ψ maps each constraint's features "
        "(a subgroup's thresholds) to its multiplier λ_j = softplus(h_ψ(φ_j)) ≥ 0; each "
        "step samples an objective batch and J constraints, descends the model on "
        "F_B + Σ_{j∈J} λ_j g_j and ascends ψ on Σ_{j∈J} λ_j g_j; the constraint rows on "
        "all training rows; reports the last iterate; any model",
        "engine.solvers.paper001.multiplier_model:MultiplierModel",
        needs={
            C.GRADIENTS: "its model step follows ∇F_B + Σ λ_j ∇g_j, backpropagated",
            C.MINIBATCH_LOSS: "Narasimhan et al. (2020): F is estimated on a minibatch",
            C.SURROGATE: "the multipliers weigh the differentiable constraint rows",
        },
    ),
)
