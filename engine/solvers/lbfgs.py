"""Limited-memory BFGS with a strong-Wolfe line search, in NumPy (Nocedal & Wright, *Numerical
Optimization*, 2nd ed.: the two-loop recursion, Alg. 7.4; the line search, Alg. 3.5 and 3.6,
with the cubic interpolation of eq. 3.59).

It is resumable: `LBFGS.run` takes a given number of iterations and keeps its curvature pairs,
so a driver can take the iterations in chunks (for logging, budgets and cancel) and the method
goes on as one uninterrupted run would. Restarting a fresh L-BFGS every chunk throws the pairs
away, and on ill-conditioned problems never reaches the optimum.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Objective = Callable[[np.ndarray], tuple[float, np.ndarray]]

SUFFICIENT_DECREASE = 1e-4  # c1 of the Wolfe conditions (N&W §3.1)
CURVATURE = 0.9  # c2, the usual choice for quasi-Newton directions
MAX_EXTRAPOLATION = 10.0  # a bracketing step grows by at most this factor


@dataclass(frozen=True)
class Point:
    """The objective at `x + step · direction`: its value, gradient and slope along direction."""

    step: float
    value: float
    grad: np.ndarray
    slope: float


@dataclass(frozen=True)
class Progress:
    """What a call of `LBFGS.run` did: iterations taken, and whether a tolerance was met."""

    iterations: int
    converged: bool


class LBFGS:
    """min f(x) from `x`, f given as a function returning (value, gradient)."""

    def __init__(
        self,
        objective: Objective,
        x: np.ndarray,
        history: int = 10,
        tolerance_grad: float = 1e-10,
        tolerance_change: float = 1e-9,
        max_line_search: int = 25,
    ) -> None:
        self.objective = objective
        self.x = np.array(x, dtype=np.float64)
        self.pairs: deque[tuple[np.ndarray, np.ndarray, float]] = deque(maxlen=history)
        self.tolerance_grad = tolerance_grad
        self.tolerance_change = tolerance_change
        self.max_line_search = max_line_search
        self.value: float | None = None
        self.grad = np.zeros_like(self.x)
        self.iterations = 0

    def run(self, max_iterations: int) -> Progress:
        """At most `max_iterations` iterations; `converged` says a tolerance stopped them: the
        gradient vanished, or the last step changed the loss or the weights by less than
        `tolerance_change`, or the line search found no decrease."""
        if self.value is None:
            self.value, self.grad = self.objective(self.x)
        for taken in range(max_iterations):
            if not np.isfinite(self.value) or np.abs(self.grad).max() <= self.tolerance_grad:
                return Progress(taken, True)
            direction = self._direction()
            slope = float(self.grad @ direction)
            if slope > -self.tolerance_change:  # no descent left along the quasi-Newton direction
                return Progress(taken, True)
            # the first step is scaled to the gradient, as no curvature is known yet
            first = min(1.0, 1.0 / np.abs(self.grad).sum()) if not self.pairs else 1.0
            start = Point(0.0, self.value, self.grad, slope)
            end = self._line_search(direction, start, first)
            change = end.step * direction
            self._remember(change, end.grad - self.grad)
            loss_change = abs(end.value - self.value)
            self.x += change
            self.value, self.grad = end.value, end.grad
            self.iterations += 1
            if np.abs(change).max() <= self.tolerance_change or loss_change < self.tolerance_change:
                return Progress(taken + 1, True)
        return Progress(max_iterations, False)

    def _direction(self) -> np.ndarray:
        """−H·∇f by the two-loop recursion (N&W Alg. 7.4), H₀ = (sᵀy / yᵀy)·I (eq. 7.20)."""
        q = self.grad.copy()
        alphas = []
        for s, y, rho in reversed(self.pairs):
            alpha = rho * (s @ q)
            q -= alpha * y
            alphas.append(alpha)
        if self.pairs:
            s, y, _ = self.pairs[-1]
            q *= (s @ y) / (y @ y)
        for (s, y, rho), alpha in zip(self.pairs, reversed(alphas), strict=True):
            q += (alpha - rho * (y @ q)) * s
        return -q

    def _remember(self, s: np.ndarray, y: np.ndarray) -> None:
        """Keep the pair only where the curvature is positive, so H stays positive definite."""
        curvature = float(s @ y)
        if curvature > 1e-10:
            self.pairs.append((s, y, 1.0 / curvature))

    def _at(self, direction: np.ndarray, step: float) -> Point:
        value, grad = self.objective(self.x + step * direction)
        return Point(step, float(value), grad, float(grad @ direction))

    def _line_search(self, direction: np.ndarray, start: Point, step: float) -> Point:
        """A step meeting the strong Wolfe conditions (N&W Alg. 3.5), or, when the evaluations
        run out, the lowest sufficient-decrease point found (possibly the start itself)."""
        previous = start
        for evaluation in range(self.max_line_search):
            point = self._at(direction, step)
            if not self._decreases(start, point) or (evaluation and point.value >= previous.value):
                return self._zoom(direction, start, previous, point, evaluation + 1)
            if abs(point.slope) <= -CURVATURE * start.slope:
                return point
            if point.slope >= 0:
                return self._zoom(direction, start, point, previous, evaluation + 1)
            grow = _cubic_minimiser(previous, point)
            low, high = step + 0.01 * (step - previous.step), step * MAX_EXTRAPOLATION
            previous, step = point, min(max(grow, low), high) if np.isfinite(grow) else high
        return previous

    def _zoom(
        self, direction: np.ndarray, start: Point, low: Point, high: Point, used: int
    ) -> Point:
        """Shrink [low, high] to a strong-Wolfe step (N&W Alg. 3.6); `low` always holds the
        lowest sufficient-decrease point so far."""
        scale = np.abs(direction).max()
        for _ in range(used, self.max_line_search):
            width = high.step - low.step
            if abs(width) * scale <= self.tolerance_change:
                break
            step = _cubic_minimiser(low, high)
            inner = (low.step + 0.1 * width, high.step - 0.1 * width)
            if not (np.isfinite(step) and min(inner) <= step <= max(inner)):
                step = low.step + 0.5 * width  # the interpolant leaves the bracket: bisect
            point = self._at(direction, step)
            if not self._decreases(start, point) or point.value >= low.value:
                high = point
                continue
            if abs(point.slope) <= -CURVATURE * start.slope:
                return point
            if point.slope * width >= 0:
                high = low
            low = point
        return low

    @staticmethod
    def _decreases(start: Point, point: Point) -> bool:
        """The sufficient-decrease (Armijo) condition, false for a non-finite value."""
        bound = start.value + SUFFICIENT_DECREASE * point.step * start.slope
        return bool(np.isfinite(point.value) and point.value <= bound)


def _cubic_minimiser(a: Point, b: Point) -> float:
    """The minimiser of the cubic matching value and slope at a and b (N&W eq. 3.59); NaN where
    that cubic has none."""
    d1 = a.slope + b.slope - 3 * (a.value - b.value) / (a.step - b.step)
    square = d1 * d1 - a.slope * b.slope
    if not np.isfinite(square) or square < 0:
        return float("nan")
    d2 = np.sign(b.step - a.step) * np.sqrt(square)
    denominator = b.slope - a.slope + 2 * d2
    if denominator == 0:
        return float("nan")
    return float(b.step - (b.step - a.step) * (b.slope + d2 - d1) / denominator)
