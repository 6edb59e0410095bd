"""The correlation penalty (Beutel et al. 2019) as paper 004 runs it (App. E.2): minibatch SGD on
f̂0 + λ |Corr(h, γ)|, f̂0 the square pairwise AUC loss over the batch's (positive, negative) pairs
and Corr the Pearson correlation, on the batch, of the scores h and the protected-group
indicator γ. It fits the group AUC gap (Ex. 1) only: for a binary γ, Corr(h, γ) is the gap
between the groups' mean scores over the scores' spread, a moment stand-in for
AUC(γ = 1, γ = −1) = ½.

With two groups γ = 1[first group] (the protected one, `engine.fairness.auc`; the ±1 coding
gives the same |Corr|). With more, the family constrains every pair k < k' (k protected), and so
the penalty is Σ_{k<k'} |Corr(h, 1[group k])| over the batch rows of groups k and k' (ours;
Beutel et al. and paper 004 have two groups). A pair whose correlation is undefined on the batch
(no row of one group, or constant scores, as at w = 0) adds nothing that step.

Reported iterate (App. E.3): every `select_every` steps the iterate is judged on validation, and
the run reports the best validation AUC within κ of the exact group AUC gap, else the judged
iterate nearest to κ (`engine.solvers.validation_select`).
"""

from __future__ import annotations

import numpy as np

from engine.problem import Problem
from engine.solvers.paper004.cards_baselines import CorrPenaltyConfig
from engine.solvers.paper004.proxy_lagrangian import PairwiseAUCSGD, set_members

# centred scores of smaller norm count as constant: |Corr| is scale-free, so its gradient grows
# like 1/‖h − mean h‖ and means nothing there
FLAT = 1e-12


def abs_correlation(h: np.ndarray, gamma: np.ndarray) -> tuple[float, np.ndarray]:
    """|Corr(h, γ)| over the samples and its gradient in h; (0, 0) where Corr is undefined
    (h or γ constant). With h̃, γ̃ centred and r = h̃·γ̃/(‖h̃‖‖γ̃‖):
    ∂r/∂h = (γ̃/‖γ̃‖ − r h̃/‖h̃‖)/‖h̃‖, and ∂|r|/∂h = sign(r) ∂r/∂h."""
    h_c = h - h.mean()
    g_c = gamma - gamma.mean()
    norm_h, norm_g = float(np.linalg.norm(h_c)), float(np.linalg.norm(g_c))
    if norm_h <= FLAT or norm_g == 0.0:
        return 0.0, np.zeros_like(h)
    r = float(h_c @ g_c) / (norm_h * norm_g)
    grad = (g_c / norm_g - r * h_c / norm_h) / norm_h
    return abs(r), np.sign(r) * grad


class CorrPenalty(PairwiseAUCSGD):
    """Beutel et al. 2019's penalty by SGD (paper 004, App. E.2). The state has the batch loss
    and the batch penalty Σ |Corr|."""

    def __init__(
        self, problem: Problem, config: CorrPenaltyConfig, rng: np.random.Generator
    ) -> None:
        super().__init__(problem, config, rng)
        # (G1, G1') of Ex. 1 per pair of groups: group k (protected) and group k'
        self.pairs = [(first, second) for first, second, _, _ in set_members(problem)]
        self.penalty = 0.0

    def iterate(self) -> float:
        rows, h, pullback, d_loss = self.batch()
        self.oracles.counts.tally(0, objective_gradients=1)
        d_penalty = np.zeros(len(rows))
        self.penalty = 0.0
        for first, second in self.pairs:
            protected = first[rows]
            pair = protected | second[rows]
            value, grad = abs_correlation(h[pair], protected[pair].astype(np.float64))
            self.penalty += value
            d_penalty[pair] += grad
        self.x = self.x - self.step * pullback(d_loss + self.config.penalty * d_penalty)
        return self.loss

    def state(self) -> dict[str, float | str]:
        return super().state() | {"batch_penalty": self.penalty}
