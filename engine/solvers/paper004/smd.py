"""The closed forms of paper 004's stochastic mirror descent oracle (Alg. 2): its y-step
(Lemma 3) and the level estimate U(r) (Lemma 4), for the convex case (ρ̂ = 0).

y = (ỹ, α̃) with ỹ in the simplex over the K components of P(r, x) (the objective, then the
constraint rows) and α̃_i = ỹ_{g(i)} α_i, α_i ∈ I = [−I, I], for each Lemma 1 term i, g(i) its
component. ỹ is kept as log ỹ and α unscaled (spec 004 §5): the step needs α_i = α̃_i/ỹ_{g(i)},
which would divide by ỹ → 0.
"""

from __future__ import annotations

import math

import numpy as np


def entropy_weight(bound: float) -> float:
    """2(1 + √2 I)², the weight of the entropy in ω_y (paper 004, Sec. 4.1)."""
    return 2.0 * (1.0 + math.sqrt(2.0) * bound) ** 2


def y_step(
    log_y: np.ndarray,
    alpha: np.ndarray,
    u: np.ndarray,
    v: np.ndarray,
    tau: float,
    bound: float,
    group: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """argmin_{y ∈ Y} −⟨(u, v), y⟩ + V_y(y, y(t))/τ + d_y(y) (paper 004, eq. 25) in closed form
    (Lemma 3): the new (log ỹ, α). u has one entry per component, v one per term."""
    # paper 004, Alg. 2, Lemma 3: argmin over α ∈ I of −αv_i + α² + (α − α'_i)²/τ, then its value
    new_alpha = np.clip((tau * v + 2.0 * alpha) / (2.0 * tau + 2.0), -bound, bound)
    mu = -new_alpha * v + new_alpha**2 + (new_alpha - alpha) ** 2 / tau
    cost = np.bincount(group, weights=mu, minlength=len(log_y)) - u
    # π_k = ỹ_k exp(−τ(Σ_{g(i)=k} μ_i − u_k)/(2(1 + √2 I)²)), normalised in log space
    log_pi = log_y - tau * cost / entropy_weight(bound)
    return log_pi - np.logaddexp.reduce(log_pi), new_alpha


def level_value(u_bar: np.ndarray, v_bar: np.ndarray, bound: float, group: np.ndarray) -> float:
    """max_{y ∈ Y} ⟨ū, ỹ⟩ + ⟨v̄, α̃⟩ − d_y(y) (paper 004, eq. 26 with ρ̂ = 0) in closed form
    (Lemma 4): ū, v̄ are the τ-weighted means of the sampled F and G."""
    best = np.clip(v_bar / 2.0, -bound, bound)
    mu_hat = best * v_bar - best**2  # max over α ∈ I of αv̄_i − α²
    return float(np.max(u_bar + np.bincount(group, weights=mu_hat, minlength=len(u_bar))))
