"""F, G and their gradients on all training rows, from one forward pass of the model: what the
full-batch solvers of paper 001 evaluate at every iterate (PLADA, Alg. 1, and the baselines SSG,
IPP-SSG and IPP-ConEx of §5.1–5.2, which run deterministically on all rows).

`MinibatchOracles` would copy the rows of X and run one pass for F and another for G; this
computes the same values (tests hold them equal) and counts them in the oracles' counts as those
calls would be counted: one data pass and one constraint evaluation per point, one objective
gradient per point whose ∇F is taken (however many backward passes use it), one constraint
gradient per vector–Jacobian product J_Gᵀλ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine.oracles import WEIGHTS, MinibatchOracles
from engine.problem import Problem

Direction = Callable[[np.ndarray], np.ndarray]  # λ ↦ a gradient in x


class FullPoint:
    """F(x), G(x) and the scores h(x) at one point x of the oracles' layout; `gradient` pulls any
    combination w·∇F(x) + J_G(x)ᵀλ back through the model in one backward pass."""

    def __init__(self, data: FullData, x: np.ndarray) -> None:
        oracles = data.oracles
        self.x, self._oracles, self._counts = x, oracles, oracles.counts
        self._w = x[oracles.layout[WEIGHTS]]
        self.scores, self._tape = oracles.network.forward(self._w, oracles.X)
        self.aux = oracles.aux(x)
        self.loss, self._d_loss = data.problem.objective.value_and_grad(self.scores, data.y)
        self.values, self._pullback = data.rows.linearise(self.scores, self.aux)
        self._counts.samples += len(self.scores)
        self._counts.constraint_values += 1
        self._objective_counted = False

    def count_objective_gradient(self) -> None:
        """Count ∇F(x) as taken (once per point)."""
        if not self._objective_counted:
            self._counts.objective_gradients += 1
            self._objective_counted = True

    def gradient(self, objective: float, lam: np.ndarray | None) -> np.ndarray:
        """objective·∇F(x) + J_G(x)ᵀλ (λ None: no constraint term), a gradient in x."""
        d_h = np.zeros_like(self.scores)
        d_aux: dict[str, Any] = {}
        if objective:
            self.count_objective_gradient()
            d_h += objective * self._d_loss
        if lam is not None:
            self._counts.constraint_gradients += 1
            d_rows, d_aux = self._pullback(lam)
            d_h += d_rows
        layout = self._oracles.layout
        grad = np.zeros(layout.size)
        grad[layout[WEIGHTS]] = self._oracles.network.backward(self._w, self._tape, d_h)
        for name, value in d_aux.items():
            grad[layout[f"aux.{name}"]] = np.ravel(value)
        return grad

    def change_to(self, other: FullPoint) -> np.ndarray:
        """Row r: ⟨∂G_r/∂(h, aux) at this point, (h, aux) of `other` − (h, aux) of this one⟩, the
        change of G's linearisation in the scores and auxiliary variables from here to `other`.
        For a linear model (scores affine in the weights) it is J_G(x)(x' − x) exactly. One
        pullback in score space per row and no pass over the model; it counts as the Jacobian of
        the m rows it is (m constraint gradients)."""
        d_scores = other.scores - self.scores
        self._counts.constraint_gradients += len(self.values)
        change = np.empty(len(self.values))
        for row, unit in enumerate(np.eye(len(self.values))):
            d_h, d_aux = self._pullback(unit)
            change[row] = d_h @ d_scores + sum(
                float(np.ravel(value) @ np.ravel(other.aux[name] - self.aux[name]))
                for name, value in d_aux.items()
            )
        return change


class FullData:
    """The oracles' problem on all training rows, bound to them once."""

    def __init__(self, oracles: MinibatchOracles, problem: Problem) -> None:
        self.oracles, self.problem = oracles, problem
        self.y = problem.data.train.y
        self.rows = problem.batch_rows()  # bound to all training rows once

    def point(self, x: np.ndarray) -> FullPoint:
        """F, G and the scores at x (one forward pass)."""
        return FullPoint(self, x)

    def linearise(self, x: np.ndarray) -> tuple[float, np.ndarray, Direction]:
        """F(x), G(x) and λ ↦ ∇F(x) + J_G(x)ᵀλ, for a method that takes ∇F at every point it
        evaluates (PLADA: ∇F(x) is counted with the forward pass)."""
        point = self.point(x)
        point.count_objective_gradient()
        return point.loss, point.values, lambda lam: point.gradient(1.0, lam)
