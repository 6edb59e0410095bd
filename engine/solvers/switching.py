"""The switching subgradient step: if the worst constraint row is within the tolerance ε, step
along the objective's subgradient, otherwise along the worst row's.

Paper 003 (Alg. 2, after Nesterov (3.2.24); its SSG is Alg. 3) takes the Polyak-type length
ε/‖g0‖² on objective steps and g(v)/‖∂g‖² on constraint steps (`worst_row`, `polyak_move`).
Huang & Lin (2023), Alg. 1, paper 001's SSG baseline and the inner solver of its IPP-SSG, takes
a given objective step and a constant or Polyak constraint step (`switching_step`)."""

from __future__ import annotations

from collections.abc import Callable
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


Gradient = Callable[[float, np.ndarray | None], np.ndarray]  # (w, λ) ↦ w·∇f + J_gᵀλ


@dataclass(frozen=True)
class SwitchStep:
    """One switching subgradient step x ← x − scale·direction: its branch ("objective" or
    "constraint"), the worst row and its value, which decided the branch."""

    branch: str
    row: int
    value: float
    scale: float
    direction: np.ndarray


def switching_step(
    values: np.ndarray,
    gradient: Gradient,
    tolerance: float,
    objective_step: float,
    constraint_step: float | None,
    max_step: float,
) -> SwitchStep:
    """Huang & Lin (2023), Alg. 1, one step at a point with constraint rows `values`: if the
    worst row is within `tolerance`, a step of `objective_step` along ∇f; otherwise along the
    worst row's gradient, of `constraint_step`, or when None of Polyak's length g/‖∂g‖²
    (`polyak_move`; a row that is not above 0 gives no move rather than a step uphill).
    `gradient(w, λ)` is w·∇f + J_gᵀλ at the point (λ None: no constraint term)."""
    row, value = worst_row(values)
    if value <= tolerance:
        return SwitchStep("objective", row, value, objective_step, gradient(1.0, None))
    unit = np.zeros(len(values))
    unit[row] = 1.0
    direction = gradient(0.0, unit)
    if constraint_step is None:
        norm_squared = float(direction @ direction)
        constraint_step = polyak_move(max(value, 0.0), norm_squared, max_step).scale
    return SwitchStep("constraint", row, value, constraint_step, direction)
