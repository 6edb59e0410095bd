"""Paper 000's penalised SGD baselines: SGD (`engine.solvers.paper000.sgd`) whose batch loss
carries a fairness penalty.

- `SGDPenalty`, regularised SGD (paper 000, eq. 13, Exp. 2):
  loss + λ Σ_i |ℓ^{s_i} − (1/m) Σ_j ℓ^{s_j}|, the loss on a uniform batch, the group losses ℓ^{s_i}
  on J rows of every group. The gaps are the group_loss_gap family's rows with δ added back:
  with pairs="vs_mean" its rows are ±(ℓ_i − mean) − δ, so Σ_rows [row + δ]_+ = Σ_i |ℓ_i − mean|;
  with pairs="all" the same sum is Σ_{i<j} |ℓ_i − ℓ_j| (Exp. 1's two groups: |ℓ_A − ℓ_B|).
- `SGDFairret`, SGD-Fairret (paper 000, Sec. 4.2.1, Exp. 1): every batch has batch_size/G rows of
  each of the G groups (at least one); loss + multiplier · NormLoss(Accuracy) of Fairret (Buyl
  et al., 2024), written from its definition. It ignores the run's constraint family.
"""

from __future__ import annotations

import numpy as np

from engine.numerics import sigmoid
from engine.problem import Problem
from engine.solvers.paper000.cards_penalties import SGDFairretConfig, SGDPenaltyConfig
from engine.solvers.paper000.sgd import SGD


class SGDPenalty(SGD):
    """Regularised SGD of paper 000, eq. 13; a step draws the objective batch, then the
    group-balanced batch."""

    config: SGDPenaltyConfig
    uses_constraint = True

    def batch_terms(self) -> tuple[float, float, np.ndarray]:
        value, _, grad = super().batch_terms()
        rows = self.sampler.per_group(self.config.per_group).rows
        constraint, gradient = self.oracles.constraint_linearised(self.x, rows)
        gaps = constraint + self.problem.constraint.kappa
        active = gaps > 0.0  # the subgradient of [·]_+ at 0 is taken as 0, as autograd's relu
        if active.any():
            grad = grad + gradient(self.config.penalty * active)
        return value, self.config.penalty * float(gaps[active].sum()), grad


class SGDFairret(SGD):
    """SGD-Fairret of paper 000: BCE + multiplier · NormLoss(Accuracy) on group-balanced
    batches, both terms on the same rows (one forward and one backward pass)."""

    config: SGDFairretConfig

    def __init__(
        self, problem: Problem, config: SGDFairretConfig, rng: np.random.Generator
    ) -> None:
        super().__init__(problem, config, rng)
        self.per_group = max(1, config.batch_size // problem.data.n_groups)

    def batch_terms(self) -> tuple[float, float, np.ndarray]:
        batch = self.sampler.per_group(self.per_group)
        h, gradient = self.oracles.scores_linearised(self.x, batch.rows)
        y = self.problem.data.train.y[batch.rows]
        value, d_value = self.problem.objective.value_and_grad(h, y)
        penalty, d_penalty = accuracy_norm_loss(h, y, batch.groups, self.problem.data.n_groups)
        multiplier = self.config.multiplier
        return value, multiplier * penalty, gradient(d_value + multiplier * d_penalty)


def accuracy_norm_loss(
    logits: np.ndarray, y: np.ndarray, groups: np.ndarray, n_groups: int
) -> tuple[float, np.ndarray]:
    """Fairret's NormLoss(Accuracy) with p = 1 (Buyl et al., 2024; paper 000, Sec. 2.4 of its
    spec) and its gradient in the logits: with p = σ(logits), the soft accuracy
    a = p·y + (1 − p)(1 − y), its group means A_s and batch mean Ā,
    P = Σ_s |A_s / Ā − 1|, and ∂P/∂a_i = sign_{s_i} / (n_{s_i} Ā) − Σ_s sign_s A_s / (n Ā²).
    Every group needs a row in the batch."""
    p = sigmoid(logits)
    signed = 2.0 * y - 1.0
    correct = (1.0 - y) + p * signed
    counts = np.bincount(groups, minlength=n_groups)
    means = np.bincount(groups, correct, n_groups) / counts
    overall = correct.mean()
    ratio = means / overall - 1.0
    sign = np.sign(ratio)  # |·|′ at 0 taken as 0, as autograd's abs
    d_correct = sign[groups] / (counts[groups] * overall) - sign @ means / (len(y) * overall**2)
    return float(np.abs(ratio).sum()), d_correct * signed * p * (1.0 - p)
