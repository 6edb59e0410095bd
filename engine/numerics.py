"""Small numeric functions shared by models, losses and metrics."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike


def sigmoid(z: ArrayLike) -> np.ndarray:
    """σ(z) = 1 / (1 + e^{−z}) in its overflow-free form ½(1 + tanh(z/2))."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=np.float64)))


def top_eigenvalue(
    apply: Callable[[np.ndarray], np.ndarray], size: int, iterations: int, tolerance: float = 0.0
) -> float:
    """λ_max of a symmetric positive semi-definite operator A given as v ↦ Av on vectors of
    `size`, by at most `iterations` power iterations: ‖Av‖ of the unit v, which approaches λ_max
    from below, until it changes by no more than `tolerance` (relative; 0: all of them). The
    start v is drawn from a generator of its own, so a caller's draws are left as they are."""
    v = np.random.default_rng(0).standard_normal(size)
    v /= np.linalg.norm(v)
    estimate = 0.0
    for _ in range(iterations):
        v = apply(v)
        previous, estimate = estimate, float(np.linalg.norm(v))
        if estimate <= 0.0:
            return 0.0
        v /= estimate
        if abs(estimate - previous) <= tolerance * estimate:
            break
    return estimate
