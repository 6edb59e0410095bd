"""A model's scores from its parameters, on any rows: the one place where parameters become
scores, shared by training (`engine.problem.Problem.scores`), every report and an exported model
applied to new data (`engine.model_file`), so a model scores the same wherever it goes.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp

from engine.data.encoding import add_group_cross_terms
from engine.dense import check_dense_fits, to_dense
from engine.design import CrossDesign, Design, Matrix
from engine.kernels import csr_rows_dense, unsigned_csr
from engine.model_forms import form_of
from engine.models import ModelSpec, Params
from engine.networks import Network, network_of

# a batch of at most this many rows of sparse X is made dense (a minibatch step's few rows read
# fastest dense); a larger one (a full-data pass) stays sparse
DENSE_BATCH_ROWS = 4096


class Rows:
    """Rows a model scores: their encoded features X (without group cross-terms; dense, or a CSR
    matrix for large one-hot data) and group ids, with the model's inputs built once, when first
    asked for."""

    def __init__(self, X: Matrix, groups: np.ndarray, n_groups: int, cross_terms: bool) -> None:
        self.X, self.groups, self.n_groups, self.cross_terms = X, groups, n_groups, cross_terms

    def __len__(self) -> int:
        return self.X.shape[0]

    @property
    def sparse(self) -> bool:
        return sp.issparse(self.X)

    @cached_property
    def features(self) -> np.ndarray:
        """The model's inputs as a dense float64 array: X, with the group cross-terms if the
        model has them, for a consumer that needs them dense; a sparse X is made dense here, and
        refused with the sizes when the copy would not fit in memory."""
        what = f"the model's inputs on {len(self):,} rows as a dense matrix"
        if self.sparse or self.cross_terms:  # a new array
            check_dense_fits(len(self), self.n_inputs, what)
        return self._with_cross_terms(to_dense(self.X, what), self.groups)

    @cached_property
    def inputs(self) -> np.ndarray | sp.csr_array:
        """The model's inputs on all rows as the networks read them (`engine.networks`):
        `features` on dense X; on sparse X a float64 CSR matrix (cross-terms included), never
        made dense."""
        if not self.sparse:
            return self.features
        return self._with_cross_terms(sp.csr_array(self.X, dtype=np.float64), self.groups)

    def batch(self, rows: np.ndarray) -> np.ndarray | sp.csr_array:
        """The model's inputs on some of the rows (`inputs[rows]`; `inputs` itself, not a copy,
        for all rows in order). On sparse X a minibatch (at most DENSE_BATCH_ROWS rows) is made
        dense from its own rows alone, a larger batch stays sparse."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) == len(self) and np.array_equal(rows, np.arange(len(self))):
            return self.inputs  # a full-data pass: no copy
        if not self.sparse:
            return self.features[rows]
        if len(rows) > DENSE_BATCH_ROWS:
            return self.inputs[rows]
        X = csr_rows_dense(*self._csr_parts, rows, self.X.shape[1])
        return self._with_cross_terms(X, self.groups[rows])

    @cached_property
    def _csr_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return unsigned_csr(sp.csr_array(self.X))

    def _with_cross_terms(self, X: Matrix, groups: np.ndarray) -> Matrix:
        if not self.cross_terms:
            return X
        return add_group_cross_terms(X, groups, self.n_groups)

    @cached_property
    def design(self) -> Design | CrossDesign:
        """X̃ = [1, X] (with cross-terms if the model has them), for affine models."""
        if self.cross_terms:
            return CrossDesign(self.X, self.groups, self.n_groups)
        return Design(self.X)

    @property
    def n_inputs(self) -> int:
        """Columns of the model's inputs (cross-terms included), without building them."""
        d = self.X.shape[1]
        return d + (self.n_groups - 1) * (d + 1) if self.cross_terms else d


def model_network(model: ModelSpec, rows: Rows) -> Network:
    """The model as a numpy function of its flat weights on inputs like those of `rows`."""
    return network_of(model, rows.n_inputs)


def uses_groups(model: ModelSpec, params: Params, n_groups: int) -> bool:
    """Whether scoring rows needs their groups: group cross-terms among several groups, or
    parameters of a form that scores each group differently (`engine.model_forms`)."""
    return (model.cross_terms and n_groups > 1) or form_of(params).needs_groups


def model_scores(
    model: ModelSpec, params: Params, rows: Rows, network: Network | None = None
) -> np.ndarray:
    """The scores of `rows` as the form of `params` gives them (`engine.model_forms`), from
    the model's own scores where the form keeps its weights: ⟨w, x̃⟩ for a linear model, the
    network's output for an MLP (`network`, built from the model when not given); the model's
    own weights ignore the form's keys."""

    def own() -> np.ndarray:
        if model.affine:
            return rows.design.matvec(params["w"])
        net = network or model_network(model, rows)
        return net.scores(net.flatten(params), rows.inputs)

    return form_of(params).score(params, rows, own)
