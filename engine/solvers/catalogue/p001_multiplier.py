"""Narasimhan et al. (2020)'s Lagrange-multiplier model, paper 001's baseline for its
intersectional experiment (§5.3): its options and card. Implementation:
`engine.solvers.multiplier_model`.

Paper 001 gives none of the baseline's hyper-parameters ("followed the hyperparameter settings
of … Narasimhan et al. (2020)", spec 001 §2.2) beyond the multiplier model being "a deep neural
network with three hidden layers"; every default below is ours and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.errors import UserError
from engine.solvers.catalogue.card import SolverCard
from engine.solvers.options import option, require_positive


@dataclass(frozen=True)
class MultiplierModelConfig:
    eta_theta: float = option(
        0.01, "η_θ, the model's step on F_B + Σ_{j∈J} λ_j g_j (ours: paper 001 gives none)"
    )
    eta_psi: float = option(
        0.01, "η_ψ, the multiplier model's ascent step on Σ_{j∈J} λ_j g_j (ours)"
    )
    multiplier_layers: int = option(
        3, "hidden ReLU layers of the multiplier model h_ψ (paper 001 §5.3: three)"
    )
    multiplier_width: int = option(16, "units per hidden layer of h_ψ (ours)")
    batch_size: int = option(128, "rows per objective batch B (ours)")
    constraint_batch: int = option(
        32, "constraints J sampled per step, uniformly without replacement (ours)"
    )
    iterations: int = option(10**9, "iterations at most (paper 001 §5.3 runs by epochs)")

    @property
    def multiplier_hidden(self) -> tuple[int, ...]:
        return (self.multiplier_width,) * self.multiplier_layers

    def __post_init__(self) -> None:
        require_positive(self, "multiplier_model", ("eta_theta", "eta_psi"))
        if self.multiplier_layers < 1 or self.multiplier_width < 1:
            raise UserError("multiplier_model needs at least one hidden layer of width 1 or more")
        if self.batch_size < 1 or self.constraint_batch < 1 or self.iterations < 1:
            raise UserError("multiplier_model options batch_size, constraint_batch and iterations "
                            "must be at least 1")  # fmt: skip


CARDS = (
    SolverCard("multiplier_model", MultiplierModelConfig, "001",
               "Lagrange-multiplier model (Narasimhan et al. 2020; paper 001's baseline for many "
               "constraints, §5.3): a small ReLU network h_ψ maps each constraint's features "
               "(a subgroup's thresholds) to its multiplier λ_j = softplus(h_ψ(φ_j)) ≥ 0; each "
               "step samples an objective batch and J constraints, descends the model on "
               "F_B + Σ_{j∈J} λ_j g_j and ascends ψ on Σ_{j∈J} λ_j g_j; the constraint rows on "
               "all training rows; reports the last iterate; any model",
               "engine.solvers.multiplier_model:MultiplierModel", needs={
                   C.GRADIENTS: "its model step follows ∇F_B + Σ λ_j ∇g_j, backpropagated",
                   C.MINIBATCH_LOSS: "Narasimhan et al. (2020): F is estimated on a minibatch",
                   C.SURROGATE: "the multipliers weigh the differentiable constraint rows",
               }),
)  # fmt: skip
