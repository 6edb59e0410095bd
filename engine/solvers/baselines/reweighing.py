"""Reweighing (Kamiran & Calders 2012, Sec. 4.2): weigh each training row of group s and label c
by W(s, c) = P(s)·P(c) / P(s, c), the expected share of the cell were label and group independent
over its observed share, then minimise the weighted objective (1/n) Σ W(s_i, c_i)·ℓ(h_i, y_i)
without constraint.

The weights average 1 over the training rows (Σ_{s,c} n_{s,c}·W(s, c) = n Σ_s P(s) Σ_c P(c)), so
the weighted loss is on the scale of the plain one. In the weighted data every group has the
label's overall positive rate, which is what the weights offer the statistical-parity gap; the
model's own gap, exact and on held-out rows, is what the run reports.
"""

from __future__ import annotations

import numpy as np

from engine.problem import Problem
from engine.solvers.baselines.cards_reweighing import ReweighingConfig
from engine.solvers.reference.unconstrained import Unconstrained


def reweighing_weights(groups: np.ndarray, y: np.ndarray) -> np.ndarray:
    """W(s_i, c_i) of every row (Kamiran & Calders 2012, Sec. 4.2): n_s·n_c / (n·n_{s,c})."""
    n = len(y)
    labels = np.asarray(y).astype(np.int64)
    cells = np.zeros((int(groups.max()) + 1, 2))
    np.add.at(cells, (groups, labels), 1.0)
    expected = np.outer(cells.sum(axis=1), cells.sum(axis=0)) / n
    return expected[groups, labels] / cells[groups, labels]


class Reweighing(Unconstrained):
    """The unconstrained solver on the reweighed objective (module docstring)."""

    def __init__(
        self, problem: Problem, config: ReweighingConfig, rng: np.random.Generator
    ) -> None:
        super().__init__(problem, config, rng)
        train = problem.data.train
        self.weights = reweighing_weights(train.groups, train.y)

    def loss_and_grad_scores(self, h: np.ndarray) -> tuple[float, np.ndarray]:
        losses, slopes = self.problem.objective.per_sample(h, self.problem.data.train.y)
        return float(np.mean(self.weights * losses)), self.weights * slopes / len(h)

    def selection_note(self) -> str:
        low, high = self.weights.min(), self.weights.max()
        return f"rows reweighed by P(s)·P(c)/P(s, c), from {low:.3g} to {high:.3g}"
