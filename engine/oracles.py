"""A Problem's minibatch oracles, for stochastic solvers: the objective and the constraint rows,
with their gradients in all primal variables, on any batch of training rows; every call counted.
On sparse data (large one-hot tables) a minibatch's rows alone are made dense, and a full-data
batch stays sparse (`engine.scoring.Rows.batch`).

The primal variables are one flat vector x laid out by `engine.variables.Layout`: the model's
weights, then the auxiliary variables the constraint family declares (pSP's θ), then whatever a
solver adds (SSL-ALM's slacks). Scores and their backward pass come from the model's numpy
network (`engine.networks`), so a step costs a few array operations on the batch alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from engine.fairness.constraints.batch_rows import rows_jacobian
from engine.models import Params
from engine.problem import Problem
from engine.variables import UNBOUNDED, Box, Kind, Layout

WEIGHTS = "weights"


@dataclass
class OracleCounts:
    """Gradient evaluations of the objective, constraint evaluations and gradients (a
    vector–Jacobian product counts one; a Jacobian of m rows counts m), and the samples whose
    scores were computed."""

    objective_gradients: int = 0
    constraint_values: int = 0
    constraint_gradients: int = 0
    samples: int = 0

    def tally(
        self,
        samples: int,
        objective_gradients: int = 0,
        constraint_values: int = 0,
        constraint_gradients: int = 0,
    ) -> None:
        """Count calls made without `MinibatchOracles`: a full-batch solver's passes over the
        training rows (`samples` scored), with the same conventions."""
        self.samples += samples
        self.objective_gradients += objective_gradients
        self.constraint_values += constraint_values
        self.constraint_gradients += constraint_gradients

    def state(self, n_train: int) -> dict[str, float]:
        """The counts as a run's state entries ("oracle.…"), with the data passes they made."""
        return {
            "oracle.objective_gradients": float(self.objective_gradients),
            "oracle.constraint_values": float(self.constraint_values),
            "oracle.constraint_gradients": float(self.constraint_gradients),
            "oracle.data_passes": self.samples / n_train,
        }


class MinibatchOracles:
    """Objective and constraint oracles of `problem` on batches of its training rows."""

    def __init__(self, problem: Problem, seed: int, with_aux: bool = True) -> None:
        """The weights start from `problem.init_params(seed)`; the family's auxiliary variables
        join x unless `with_aux` is False (a solver that ignores the constraint)."""
        self.problem = problem
        self.network = problem.network
        train = problem.data.train
        self.train_rows, self.y, self.groups = problem.rows("train"), train.y, train.groups
        self.counts = OracleCounts()
        self.layout = Layout()
        self.layout.add(WEIGHTS, Kind.WEIGHTS, (self.network.size,))
        start = problem.init_params(seed)
        parts = [self.network.flatten(start)]
        self.aux_names: tuple[str, ...] = ()
        if with_aux and problem.constraint is not None:
            bound = problem.bound
            aux = bound.aux_init(torch.from_numpy(problem.scores(start)))
            for name, value in aux.items():
                kind, box = bound.aux_kinds[name]
                self.layout.add(f"aux.{name}", kind, tuple(value.shape), box)
                parts.append(value.detach().numpy().ravel())
            self.aux_names = tuple(aux)
        self._start = np.concatenate(parts)
        self._weights = self.layout[WEIGHTS]
        # with `keep_full_pass`, the last forward pass over all training rows is kept and given
        # again at the same weights: for a caller that asks for the scores and the gradients of
        # one point in turn (an exact record's metrics and KKT measure), never a solver
        self.keep_full_pass = False
        self._kept: tuple[np.ndarray, np.ndarray, object] | None = None

    @property
    def X(self) -> np.ndarray | sp.csr_array:
        """The model's inputs on all training rows (`engine.scoring.Rows.inputs`: sparse on
        sparse data)."""
        return self.train_rows.inputs

    def add(self, name: str, kind: Kind, size: int, box: Box = UNBOUNDED) -> slice:
        """A solver's own block of variables (e.g. slacks), started at 0."""
        self.layout.add(name, kind, (size,), box)
        return self.layout[name]

    def start(self) -> np.ndarray:
        """x_0: the model's initial weights, the family's starting auxiliary values, zeros for
        the solver's own blocks."""
        x = np.zeros(self.layout.size)
        x[: len(self._start)] = self._start
        return x

    def params(self, x: np.ndarray) -> Params:
        """The weights and auxiliary variables of x as a run's parameters ("aux.<name>")."""
        params = self.network.unflatten(x[self._weights])
        for name in self.aux_names:
            block = self.layout.blocks[f"aux.{name}"]
            params[block.name] = x[block.start : block.stop].reshape(block.shape).copy()
        return params

    def aux(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {
            name: x[self.layout[f"aux.{name}"]].reshape(self.layout.blocks[f"aux.{name}"].shape)
            for name in self.aux_names
        }

    def _forward(self, x: np.ndarray, rows: np.ndarray):
        self.counts.samples += len(rows)
        w = x[self._weights]
        full = self.keep_full_pass and len(rows) == len(self.y)
        if full and self._kept is not None and np.array_equal(self._kept[0], w):
            return self._kept[1], self._kept[2]
        h, tape = self.network.forward(w, self.train_rows.batch(rows))
        if full:
            self._kept = (w.copy(), h, tape)
        return h, tape

    def full_scores(self, x: np.ndarray) -> np.ndarray:
        """The network's scores of all training rows at x."""
        return self._forward(x, np.arange(len(self.y)))[0]

    def _full(self, x: np.ndarray, tape, d_h: np.ndarray, d_aux: dict[str, np.ndarray]):
        """A gradient in x from one in the scores (pulled back through the network) and one in
        the auxiliary variables."""
        grad = np.zeros(self.layout.size)
        grad[self._weights] = self.network.backward(x[self._weights], tape, d_h)
        for name, value in d_aux.items():
            grad[self.layout[f"aux.{name}"]] = np.ravel(value)
        return grad

    def scores_linearised(
        self, x: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        """The scores h of the rows and d ↦ Σ_i d_i ∇h_i, a gradient in x: for a solver that
        combines terms in score space (one forward and one backward pass for all of them)."""
        h, tape = self._forward(x, rows)
        return h, lambda d_h: self._full(x, tape, d_h, {})

    # ---- the objective ----------------------------------------------------------------
    def objective_value(self, x: np.ndarray, rows: np.ndarray) -> float:
        h, _ = self._forward(x, rows)
        return self.problem.objective.value(h, self.y[rows])

    def objective(self, x: np.ndarray, rows: np.ndarray) -> tuple[float, np.ndarray]:
        """f(x, ξ) and ∇f(x, ξ) on the rows ξ (an unbiased estimate when ξ is uniform)."""
        h, tape = self._forward(x, rows)
        value, d_h = self.problem.objective.value_and_grad(h, self.y[rows])
        self.counts.objective_gradients += 1
        return value, self._full(x, tape, d_h, {})

    # ---- the constraint rows ----------------------------------------------------------
    def _rows(self, rows: np.ndarray):
        return self.problem.batch_rows(rows)

    def constraint(self, x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """c(x, ζ): the family's surrogate rows on the rows ζ."""
        h, _ = self._forward(x, rows)
        self.counts.constraint_values += 1
        return self._rows(rows).values(h, self.aux(x))

    def constraint_linearised(
        self, x: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        """c(x, ζ) and v ↦ ∇c(x, ζ)ᵀ v, a gradient in x (each call counts one constraint
        gradient)."""
        h, tape = self._forward(x, rows)
        values, pullback = self._rows(rows).linearise(h, self.aux(x))
        self.counts.constraint_values += 1

        def gradient(v: np.ndarray) -> np.ndarray:
            self.counts.constraint_gradients += 1
            return self._full(x, tape, *pullback(v))

        return values, gradient

    def constraint_jacobian(self, x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """c(x, ζ) and ∇c(x, ζ), shape (m, size of x): the rows' Jacobian in score space
        (`rows_jacobian`), then all m rows through the network at once (one pass over the
        inputs, not m)."""
        h, tape = self._forward(x, rows)
        return self._jacobian(x, rows, h, tape)

    def gradient_and_jacobian(
        self, x: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """∇f(x, ξ), c(x, ζ) and ∇c(x, ζ) on the same rows from one forward pass."""
        h, tape = self._forward(x, rows)
        _, d_h = self.problem.objective.value_and_grad(h, self.y[rows])
        self.counts.objective_gradients += 1
        return self._full(x, tape, d_h, {}), *self._jacobian(x, rows, h, tape)

    def lagrangian_gradient(
        self, x: np.ndarray, rows: np.ndarray, multipliers: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """c(x, ζ) and ∇f(x, ξ) + ∇c(x, ζ)ᵀλ on the same rows, from one forward pass and one
        backward pass of the sum in score space: the gradient of the Lagrangian without the m
        rows of the Jacobian."""
        h, tape = self._forward(x, rows)
        _, d_f = self.problem.objective.value_and_grad(h, self.y[rows])
        values, pullback = self._rows(rows).linearise(h, self.aux(x))
        d_rows, d_aux = pullback(np.asarray(multipliers, dtype=np.float64))
        self.counts.objective_gradients += 1
        self.counts.constraint_values += 1
        self.counts.constraint_gradients += 1
        return values, self._full(x, tape, d_f + np.asarray(d_rows).ravel(), d_aux)

    def _jacobian(
        self, x: np.ndarray, rows: np.ndarray, h: np.ndarray, tape
    ) -> tuple[np.ndarray, np.ndarray]:
        at = rows_jacobian(self._rows(rows), h, self.aux(x))
        self.counts.constraint_values += 1
        self.counts.constraint_gradients += len(at.values)
        jacobian = np.zeros((len(at.values), self.layout.size))
        if len(at.values):
            jacobian[:, self._weights] = self.network.backward_many(
                x[self._weights], tape, at.scores
            )
        for name, value in at.aux.items():
            jacobian[:, self.layout[f"aux.{name}"]] = value
        return at.values, jacobian
