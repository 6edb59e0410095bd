"""The switching subgradient step shared by Algorithms 2 and 3 of paper 003.

If the worst constraint is within the tolerance ε, step along the objective's subgradient with the
Polyak-type length ε/‖g0‖²; otherwise along the worst constraint's subgradient with length
g(v)/‖∂g‖² (paper 003, Alg. 2, after Nesterov (3.2.24)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TINY_NORM_SQUARED = 1e-24  # spec 003 §6.2.3: a zero direction means a stationary point
# Rows within this of the largest count as tied and the first of them is taken: exact ties are
# common (the ramp rows of one group often share their active samples), and the choice should
# follow the row order, not rounding noise.
TIE_TOLERANCE = 1e-12


def worst_row(values: np.ndarray) -> tuple[int, float]:
    """The first row whose value is within TIE_TOLERANCE of the largest (NaN counts as largest),
    and that value; (-1, −inf) without rows (a vacuous constraint such as pSP with κ = 1, where
    every point is feasible and each step is an objective step)."""
    if values.size == 0:
        return -1, -np.inf
    top = np.max(values)
    if not np.isfinite(top):
        row = int(np.argmax(~np.isfinite(values) | (values == top)))
    else:
        row = int(np.argmax(values >= top - TIE_TOLERANCE))
    return row, float(values[row])


@dataclass(frozen=True)
class Move:
    """The step to take: `scale` times the direction; `stationary` when the direction is ~0."""

    scale: float
    stationary: bool


def polyak_move(numerator: float, norm_squared: float, max_step: float) -> Move:
    """Step length numerator/‖d‖² along −d, capped so that the move is at most `max_step` long
    (the Polyak length blows up as ‖d‖ → 0, spec 003 §6.2.3)."""
    if norm_squared < TINY_NORM_SQUARED:
        return Move(scale=0.0, stationary=True)
    scale = numerator / norm_squared
    length = scale * np.sqrt(norm_squared)
    if length > max_step:
        scale = max_step / np.sqrt(norm_squared)
    return Move(scale=scale, stationary=False)
