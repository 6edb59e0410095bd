"""Models as numpy functions of one flat parameter vector w: the scores of any rows, and the
model's backward pass, which turns ∂f/∂h (an objective's or a constraint's gradient in score
space) into ∂f/∂w.

Minibatch solvers take thousands of steps on a few dozen rows each, where a step's cost is the
number of array operations, not their size: a hand-written forward and backward pass in numpy
does a step's work in about a tenth of the time of autograd's graph. Parameters are named as
`engine.mlp.MLP.named_parameters` names them ("layers.0.weight", ...), so the store, the torch
module that draws the initial weights, and these networks agree. Inputs may be sparse (a CSR
matrix of a large one-hot table): only the first layer reads them, by matrix products.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from engine.models import ModelSpec, Params
from engine.numerics import sigmoid

Inputs = np.ndarray | sp.csr_array  # a batch of inputs: dense, or sparse for a full-data pass


@dataclass(frozen=True)
class Slot:
    """Where one named parameter lies in the flat vector: w[start:stop], reshaped."""

    name: str
    shape: tuple[int, ...]
    start: int
    stop: int


class Network(ABC):
    """h = model(w, X); `forward` also returns what `backward` needs (the tape)."""

    def __init__(self, shapes: list[tuple[str, tuple[int, ...]]]) -> None:
        slots, start = [], 0
        for name, shape in shapes:
            slots.append(Slot(name, shape, start, start + math.prod(shape)))
            start = slots[-1].stop
        self.slots: tuple[Slot, ...] = tuple(slots)
        self.size = start

    def flatten(self, params: Params) -> np.ndarray:
        """The flat vector of `params` (named and shaped as `slots`)."""
        return np.concatenate(
            [np.asarray(params[s.name], dtype=np.float64).ravel() for s in self.slots]
        )

    def unflatten(self, w: np.ndarray) -> Params:
        """The named parameters of the flat vector `w`, as copies."""
        return {s.name: w[s.start : s.stop].reshape(s.shape).copy() for s in self.slots}

    @staticmethod
    def view(w: np.ndarray, slot: Slot) -> np.ndarray:
        return w[slot.start : slot.stop].reshape(slot.shape)

    def scores(self, w: np.ndarray, X: Inputs) -> np.ndarray:
        return self.forward(w, X)[0]

    @abstractmethod
    def forward(self, w: np.ndarray, X: Inputs) -> tuple[np.ndarray, Any]: ...

    @abstractmethod
    def backward(self, w: np.ndarray, tape: Any, g: np.ndarray) -> np.ndarray:
        """Σ_i g_i ∂h_i/∂w, a vector of `size` entries (the vector-Jacobian product)."""

    def backward_many(self, w: np.ndarray, tape: Any, G: np.ndarray | sp.spmatrix) -> np.ndarray:
        """`backward` for each row of G (m, n), dense or sparse, at once: (m, size), row k that
        of G[k]. Where G's columns take few directions (`shared_columns`: pSP's ramp rows, a
        sample's rows the same for all samples on the same slopes), G = A·E and the m rows are
        A times the backward passes of E's rows, which partition the samples: about one pass
        over the data for all m rows instead of m passes."""
        factors = shared_columns(G)
        if factors is not None:
            directions, weights, segment = factors
            return directions @ self.segment_backward(
                w, tape, weights, segment, directions.shape[1]
            )
        rows = G.toarray() if sp.issparse(G) else G
        return np.array([self.backward(w, tape, g) for g in rows]).reshape(len(rows), self.size)

    def segment_backward(
        self, w: np.ndarray, tape: Any, g: np.ndarray, segment: np.ndarray, segments: int
    ) -> np.ndarray:
        """(segments, size): row s is `backward` of g restricted to the samples i with
        segment[i] = s (the others, segment −1, in none)."""
        out = np.zeros((segments, self.size))
        order = np.argsort(segment, kind="stable")
        order = order[segment[order] >= 0]
        bounds = np.searchsorted(segment[order], np.arange(segments + 1))
        ordered, weights = _rows_of(tape, order), g[order]  # one copy: each segment a slice
        for s in range(segments):
            part = slice(bounds[s], bounds[s + 1])
            if part.stop > part.start:
                out[s] = self.backward(w, _rows_of(ordered, part), weights[part])
        return out


# the share of non-zeros above which a sparse matrix of pullbacks is multiplied densely: a dense
# product runs at several times the speed per entry, and a wide ramp early in a run puts half of
# each group's samples on its slope
DENSE_ENOUGH = 0.05


class LinearNetwork(Network):
    """h = w_0 + ⟨w_1:, x⟩ (x with its group cross-terms when the model has them)."""

    def __init__(self, n_features: int) -> None:
        super().__init__([("w", (n_features + 1,))])

    def forward(self, w: np.ndarray, X: Inputs) -> tuple[np.ndarray, Inputs]:
        return X @ w[1:] + w[0], X

    def backward(self, w: np.ndarray, tape: Inputs, g: np.ndarray) -> np.ndarray:
        grad = np.empty(self.size)
        grad[0] = g.sum()
        grad[1:] = transposed_product(tape, g)
        return grad

    def backward_many(self, w: np.ndarray, tape: Inputs, G: np.ndarray | sp.spmatrix) -> np.ndarray:
        """One product Xᵀ·Gᵀ for all rows of G: a constraint Jacobian's m pullbacks read X once.
        A sparse G (pSP's rows give one) is multiplied as such only where it is sparse enough
        to beat the dense product (`DENSE_ENOUGH`)."""
        if sp.issparse(G) and G.nnz > DENSE_ENOUGH * G.shape[0] * G.shape[1]:
            G = G.toarray()
        grads = np.empty((G.shape[0], self.size))
        grads[:, 0] = np.asarray(G.sum(axis=1)).ravel()
        product = transposed_product(tape, G.T)
        grads[:, 1:] = (product.toarray() if sp.issparse(product) else product).T
        return grads


# a factorisation G = A·E (`shared_columns`) is used when the columns of G take at most this many
# directions per row of G: the segments' passes read each sample once, however many, but each
# pass has a cost of its own, and many small ones lose to m whole ones
MOST_DIRECTIONS_PER_ROW = 4


def shared_columns(
    G: np.ndarray | sp.spmatrix, most: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """G (m, n) as A·E, when its non-zero columns take at most `most` (default
    `MOST_DIRECTIONS_PER_ROW`·m) directions: A (m, s) holds the directions, E one entry per
    column, its weight (n,) in row segment (n,) of E (−1 for a zero column): column i of G is
    weight[i]·A[:, segment[i]]. None for more directions, or for none at all.

    A column's direction is the column over the sum of its entries' sizes; columns are grouped
    by a random projection of their directions (equal columns have equal ones, to the bit), and
    the grouping is checked entry by entry (to 1e-9 relative) and support by support, so that
    no two columns that differ share a direction."""
    m, n = G.shape
    most = MOST_DIRECTIONS_PER_ROW * m if most is None else most
    rows = sp.csr_array(G)
    rows.sum_duplicates()
    rows.eliminate_zeros()
    column = rows.indices
    counts = np.bincount(column, minlength=n)
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        return None
    weight = np.bincount(column, np.abs(rows.data), n)
    direction = rows.data / weight[column]
    row = np.repeat(np.arange(m), np.diff(rows.indptr))
    draws = np.random.default_rng(0).random(m) + 0.5
    # bincount adds each column's entries in row order: equal columns get equal keys
    keys = np.bincount(column, draws[row] * direction, n)[filled]
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if first.size > most:
        return None
    segment = np.full(n, -1)
    segment[filled] = inverse
    representative = filled[first]
    chosen = np.zeros(n, dtype=bool)
    chosen[representative] = True
    directions = np.zeros((m, first.size))
    kept = chosen[column]
    directions[row[kept], segment[column[kept]]] = direction[kept]
    rebuilt = directions[row, segment[column]] * weight[column]
    if not np.all(np.abs(rebuilt - rows.data) <= 1e-9 * np.abs(rows.data)):
        return None
    if not np.array_equal(counts[filled], counts[representative][inverse]):  # one support each
        return None
    return directions, weight, segment


def _rows_of(tape: Any, rows: np.ndarray | slice) -> Any:
    """The tape of a forward pass restricted to some of its samples."""
    if isinstance(tape, list):
        return [_rows_of(layer, rows) for layer in tape]
    return tape[rows]


def transposed_product(X: Inputs, g: np.ndarray) -> np.ndarray:
    """Xᵀ·g for g of shape (n,) or (n, k): (d,) or (d, k)."""
    if sp.issparse(X):
        return np.asarray(X.T @ g)
    return g @ X if g.ndim == 1 else (g.T @ X).T


def _relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0, out=z)


def _relu_slope(a: np.ndarray) -> np.ndarray:
    """relu′ from the activation a = relu(z): 1 where a > 0 (the subgradient 0 at z = 0, as
    autograd takes it)."""
    return a > 0.0


def _sigmoid_slope(a: np.ndarray) -> np.ndarray:
    return a * (1.0 - a)


_ACTIVATION_FUNCTIONS = {"relu": (_relu, _relu_slope), "sigmoid": (sigmoid, _sigmoid_slope)}


class MLPNetwork(Network):
    """Dense layers of the given widths, each followed by the activation, then one linear score:
    the architecture of `engine.mlp.MLP` (PyTorch's `Linear` computes z = a Wᵀ + b)."""

    def __init__(self, n_features: int, hidden: tuple[int, ...], activation: str = "relu") -> None:
        widths = (n_features, *hidden, 1)
        shapes: list[tuple[str, tuple[int, ...]]] = []
        for layer, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
            shapes += [
                (f"layers.{2 * layer}.weight", (fan_out, fan_in)),
                (f"layers.{2 * layer}.bias", (fan_out,)),
            ]
        super().__init__(shapes)
        self.act, self.slope = _ACTIVATION_FUNCTIONS[activation]
        self.layers = [(self.slots[2 * i], self.slots[2 * i + 1]) for i in range(len(widths) - 1)]

    def forward(self, w: np.ndarray, X: Inputs) -> tuple[np.ndarray, list[Inputs]]:
        """The scores, and the tape [X, a_1, …, a_L] of every layer's input."""
        tape = [X]
        for weight, bias in self.layers[:-1]:
            tape.append(self.act(tape[-1] @ self.view(w, weight).T + self.view(w, bias)))
        weight, bias = self.layers[-1]
        return tape[-1] @ w[weight.start : weight.stop] + w[bias.start], tape

    def backward(self, w: np.ndarray, tape: list[np.ndarray], g: np.ndarray) -> np.ndarray:
        grad = np.empty(self.size)
        weight, bias = self.layers[-1]
        grad[weight.start : weight.stop] = g @ tape[-1]
        grad[bias.start] = g.sum()
        upstream = g[:, None] * self.view(w, weight)[0]  # ∂/∂a_L
        for index in range(len(self.layers) - 2, -1, -1):
            weight, bias = self.layers[index]
            dz = upstream * self.slope(tape[index + 1])
            grad[weight.start : weight.stop] = transposed_product(tape[index], dz).T.ravel()
            grad[bias.start : bias.stop] = dz.sum(axis=0)
            if index:
                upstream = dz @ self.view(w, weight)
        return grad


def network_of(model: ModelSpec, n_features: int) -> Network:
    """The network of a model whose inputs have `n_features` columns (with any cross-terms)."""
    if model.affine:
        return LinearNetwork(n_features)
    return MLPNetwork(n_features, model.hidden, model.activation)
