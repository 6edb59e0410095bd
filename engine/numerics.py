"""Small numeric functions shared by models, losses and metrics."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def sigmoid(z: ArrayLike) -> np.ndarray:
    """σ(z) = 1 / (1 + e^{−z}) in its overflow-free form ½(1 + tanh(z/2))."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=np.float64)))
