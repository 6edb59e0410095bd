"""A model's scores from its parameters, on any rows: the one place where parameters become
scores, shared by training (`engine.problem.Problem.scores`), every report and an exported model
applied to new data (`engine.model_file`), so a model scores the same wherever it goes.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from engine.data.encoding import add_group_cross_terms
from engine.dense import check_dense_fits, to_dense
from engine.design import CrossDesign, Design, Matrix
from engine.kernels import csr_rows_dense, unsigned_csr
from engine.models import ModelSpec, Params
from engine.networks import Network, network_of

# a group-wise affine map of the model's scores, one entry per group: a row of group g scores
# scale[g]·h + shift[g] (post-processing, paper 004, App. E.2: ω1·h + ω2 on the protected group)
POST_SCALE, POST_SHIFT = "post.scale", "post.shift"

# Randomised classifiers (fairlearn's) predict ŷ = 1 with a probability P(ŷ = 1 | x) and score
# P − ½, so that the threshold 0 is their majority vote (ŷ = 1 when P > ½).
# A mixture (ExponentiatedGradient): linear classifiers 1[x̃·w_j > 0], the rows w_j of MIXTURE_W,
# drawn with probabilities q_j (MIXTURE_Q): P = Σ_j q_j·1[x̃·w_j > 0].
MIXTURE_W, MIXTURE_Q = "mixture.w", "mixture.q"
# Randomised thresholds per group (ThresholdOptimizer) of the linear model's score s = x̃·w, or of
# σ(s) when THRESHOLD_ON_PROBABILITY is 1: for a row of group g, two rules k = 0, 1, each
# 1[σ_gk·s > σ_gk·t_gk] (σ = +1 for "s > t", −1 for "s < t"; t may be ±∞) taken with
# probability p_gk, and the constant c_g taken instead with probability i_g:
# P = i_g·c_g + (1 − i_g)·Σ_k p_gk·1[σ_gk·s > σ_gk·t_gk]. Arrays (G, 2) and (G,).
THRESHOLD_AT, THRESHOLD_SIGN, THRESHOLD_P = "threshold.at", "threshold.sign", "threshold.p"
THRESHOLD_IGNORE, THRESHOLD_CONSTANT = "threshold.ignore", "threshold.constant"
THRESHOLD_ON_PROBABILITY = "threshold.on_probability"
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
    parameters that score each group differently (a group-wise map, randomised thresholds)."""
    return (model.cross_terms and n_groups > 1) or POST_SCALE in params or THRESHOLD_AT in params


def is_randomised(params: Params) -> bool:
    """Whether the scores are P(ŷ = 1) − ½ of a randomised classifier (a mixture, or
    randomised thresholds) rather than a model's own scores."""
    return MIXTURE_W in params or THRESHOLD_AT in params


def model_scores(
    model: ModelSpec, params: Params, rows: Rows, network: Network | None = None
) -> np.ndarray:
    """The scores of `rows`: ⟨w, x̃⟩ for a linear model, the network's output for an MLP
    (`network`, built from the model when not given), then the group-wise map of `params` when
    it has one (POST_SCALE, POST_SHIFT) or its randomised thresholds (THRESHOLD_AT, ...); the
    model's own weights ignore the map's keys. A mixture of linear classifiers (MIXTURE_W,
    MIXTURE_Q) scores its vote instead."""
    if MIXTURE_W in params:
        return mixture_vote(params, rows.design)
    if model.affine:
        h = rows.design.matvec(params["w"])
    else:
        network = network or model_network(model, rows)
        h = network.scores(network.flatten(params), rows.inputs)
    if THRESHOLD_AT in params:
        return randomised_thresholds(params, h, rows.groups)
    return group_map(params, h, rows.groups)


def group_map(params: Params, h: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The group-wise affine map of `params` applied to scores `h`; `h` itself without one."""
    if POST_SCALE not in params:
        return h
    return params[POST_SCALE][groups] * h + params[POST_SHIFT][groups]


def mixture_vote(params: Params, design: Design | CrossDesign) -> np.ndarray:
    """P(ŷ = 1 | x) − ½ of the mixture of linear classifiers in `params` (MIXTURE_W, MIXTURE_Q)."""
    votes = np.column_stack([design.matvec(w) > 0.0 for w in params[MIXTURE_W]])
    return votes @ params[MIXTURE_Q] - 0.5


def randomised_thresholds(params: Params, h: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """P(ŷ = 1 | x, group) − ½ of the randomised thresholds in `params` (THRESHOLD_AT, ...) of
    the linear model's scores `h`."""
    s = expit(h) if params[THRESHOLD_ON_PROBABILITY][0] else h
    sign = params[THRESHOLD_SIGN][groups]
    above = sign * s[:, None] > sign * params[THRESHOLD_AT][groups]
    chosen = np.sum(params[THRESHOLD_P][groups] * above, axis=1)
    ignore = params[THRESHOLD_IGNORE][groups]
    return ignore * params[THRESHOLD_CONSTANT][groups] + (1.0 - ignore) * chosen - 0.5
