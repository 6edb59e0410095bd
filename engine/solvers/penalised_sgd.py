"""Paper 000's penalised SGD baselines: SGD (`engine.solvers.sgd`) whose batch loss carries a
fairness penalty.

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
import torch

from engine.solvers.catalogue.p000_penalties import SGDFairretConfig, SGDPenaltyConfig
from engine.solvers.sgd import SGD


class SGDPenalty(SGD):
    """Regularised SGD of paper 000, eq. 13; a step draws the objective batch, then the
    group-balanced batch."""

    config: SGDPenaltyConfig

    def batch_terms(self) -> tuple[torch.Tensor, torch.Tensor]:
        value, _ = super().batch_terms()
        rows = self.sampler.per_group(self.config.per_group).rows
        gaps = self.problem.batch_constraint(self.params, rows) + self.problem.constraint.kappa
        return value, self.config.penalty * torch.relu(gaps).sum()


class SGDFairret(SGD):
    """SGD-Fairret of paper 000: BCE + multiplier · NormLoss(Accuracy) on group-balanced
    batches."""

    config: SGDFairretConfig

    def __init__(self, problem, config: SGDFairretConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.per_group = max(1, config.batch_size // problem.data.n_groups)

    def batch_terms(self) -> tuple[torch.Tensor, torch.Tensor]:
        batch = self.sampler.per_group(self.per_group)
        h = self.problem.torch_scores(self.params, "train", batch.rows)
        y = torch.from_numpy(self.problem.data.train.y[batch.rows]).to(h.dtype)
        penalty = accuracy_norm_loss(h, y, batch.groups, self.problem.data.n_groups)
        return self.problem.objective.torch_value(h, y), self.config.multiplier * penalty


def accuracy_norm_loss(
    logits: torch.Tensor, y: torch.Tensor, groups: np.ndarray, n_groups: int
) -> torch.Tensor:
    """Fairret's NormLoss(Accuracy) with p = 1 (Buyl et al., 2024; paper 000, Sec. 2.4 of its
    spec): with p = σ(logits) and the soft accuracy a = p·y + (1 − p)(1 − y),
    Σ_s |mean_{group s} a / mean_{batch} a − 1|. Every group needs a row in the batch."""
    p = torch.sigmoid(logits)
    correct = p * y + (1.0 - p) * (1.0 - y)
    member = torch.from_numpy(groups[:, None] == np.arange(n_groups)).to(correct.dtype)
    per_group = (member.T @ correct) / member.sum(dim=0)
    return (per_group / correct.mean() - 1.0).abs().sum()
