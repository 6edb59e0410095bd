"""The stationarity measure common to every solver (spec 001 §5, *[ours]*), on the full training
data:

    KKT(θ) = ‖∇F(θ) + J_G(θ)ᵀλ̂‖ + Σ_j |λ̂_j G_j(θ)| + ‖max(G(θ), 0)‖,

the three parts of the KKT conditions of paper 001, eq. (4): stationarity, complementarity and
feasibility. G are the family's surrogate rows with κ subtracted (g̃ = g − κ of the spec; the
rows ≤ 0 are feasible), F the training objective, θ the model's weights and the family's
auxiliary variables (pSP's θ_p), never a solver's own variables (slacks, PLADA's u). It is 0
exactly at a KKT point of the surrogate problem with multipliers λ̂.

λ̂ is either a solver's multipliers projected on λ ≥ 0 (λ̂ = max(λ, 0): PLADA's λ may be
negative, paper 001 Alg. 1), or, for a solver that keeps none (or when none are given), the
least-squares multipliers λ̂ = argmin_{λ ≥ 0} ‖∇F + J_Gᵀλ‖ over all m rows (the spec's
definition; `scipy.optimize.nnls`). A row that is not active but gets λ̂_j > 0 pays in the
complementarity term.

Θ is the whole space for the weights. Should a variable have a box (no family declares one
today), the stationarity part is the least-norm element of ∇L + N_Θ(θ) (a component at a bound
counts only when it points into the box) and the least-squares multipliers use the free
coordinates.

Cost of one evaluation, n training rows, P variables, m rows: one forward pass of the model.
With a solver's multipliers, ∇F + J_Gᵀλ̂ is the gradient of the Lagrangian, one backward pass of
∂F/∂h + λ̂ᵀ∂G/∂h in score space (`MinibatchOracles.lagrangian_gradient`); J_G itself is not
needed. Without, J_G (`MinibatchOracles.gradient_and_jacobian`): for a linear model one product
with the inputs; for an MLP about one backward pass when the rows' score-space Jacobian takes
few directions (`engine.networks.shared_columns`: pSP's ramp rows do), m passes otherwise; then
an NNLS on a P × m matrix, or, when P > m, on the m × m factor R of J_Gᵀ = QR (the same
minimiser: ‖∇F + QRλ‖² = ‖Qᵀ∇F + Rλ‖² + ‖(I − QQᵀ)∇F‖²). DP on two groups has m = 2, EO m = 4,
pSP 4|Î| on two groups. Evaluate it with the solver's clock paused. The oracles are built once
for the problem measured last (their counts are the measure's own, never a solver's;
`prepare` builds them ahead).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import nnls

from engine.model_forms import MODEL, form_of
from engine.models import Params
from engine.oracles import WEIGHTS, MinibatchOracles
from engine.problem import Problem
from engine.solvers.base import aux_tensors
from engine.solvers.records import DUAL, read_per_row

NNLS_SWEEPS = 10  # NNLS iterations allowed per multiplier


@dataclass(frozen=True)
class KKTTerms:
    """The parts of the measure and the multipliers λ̂ ≥ 0 they used (one per row)."""

    stationarity: float  # ‖∇F + J_Gᵀλ̂‖ (least-norm element with N_Θ, see the module)
    complementarity: float  # Σ_j |λ̂_j G_j|
    feasibility: float  # ‖max(G, 0)‖
    multipliers: np.ndarray

    @property
    def total(self) -> float:
        return self.stationarity + self.complementarity + self.feasibility

    def state(self) -> dict[str, float]:
        """The measure and its parts as a record's entries ("kkt", "kkt.stationarity", ...)."""
        return {
            "kkt": self.total,
            "kkt.stationarity": self.stationarity,
            "kkt.complementarity": self.complementarity,
            "kkt.feasibility": self.feasibility,
        }


def kkt_measure(problem: Problem, params: Params, multipliers: np.ndarray | None = None) -> float:
    """KKT(θ) of the module's definition at the model `params` (with "aux.<name>" entries when
    the family has auxiliary variables; otherwise the family's starting values for them), with
    the solver's `multipliers` (one per row of `problem.bound.rows`, any sign: projected on
    λ ≥ 0) or, when None, the least-squares multipliers."""
    return kkt_terms(problem, params, multipliers).total


def kkt_terms(problem: Problem, params: Params, multipliers: np.ndarray | None = None) -> KKTTerms:
    """The measure's parts and multipliers; `kkt_measure` is their sum."""
    return _evaluator(problem).terms(params, multipliers)


def train_scores(problem: Problem, params: Params) -> np.ndarray:
    """`problem.scores(params)` on the training data; for an MLP scored by its network alone
    (the form `engine.model_forms.MODEL`: no group-wise map, thresholds or mixture), from the
    forward pass the measure at `params` then uses again, so that an exact record makes one
    pass over the data, not two."""
    if problem.constraint is None or problem.model.affine or form_of(params) is not MODEL:
        return problem.scores(params)
    return _evaluator(problem).scores(params)


def prepare(problem: Problem) -> None:
    """Build the oracles the measure of `problem` uses (a one-off cost per problem), so that a
    record that measures it next pays only the measure."""
    _evaluator(problem)


def multipliers_from_state(problem: Problem, state: Mapping[str, float | str]) -> np.ndarray | None:
    """A solver's duals from its state ("dual.<row>" for every row, as SSL-ALM and PLADA report
    them), or None when it reports none (then use the least-squares multipliers)."""
    if problem.constraint is None:
        return None
    duals = read_per_row(state, DUAL, problem.bound.rows)
    return None if duals is None else np.array(duals)


def kkt_of(
    gradient: np.ndarray,
    jacobian: np.ndarray,
    rows: np.ndarray,
    multipliers: np.ndarray | None = None,
    at_lower: np.ndarray | None = None,
    at_upper: np.ndarray | None = None,
) -> KKTTerms:
    """The measure from ∇F (P,), J_G (m, P) and G (m,) at a point: the multipliers projected on
    λ ≥ 0, or the least-squares ones when None. `at_lower`/`at_upper` (P booleans) mark
    variables at the lower/upper end of their box."""
    gradient = np.asarray(gradient, dtype=np.float64)
    rows = np.asarray(rows, dtype=np.float64).reshape(-1)
    jacobian = np.asarray(jacobian, dtype=np.float64).reshape(len(rows), len(gradient))
    lower = np.zeros(len(gradient), bool) if at_lower is None else np.asarray(at_lower, bool)
    upper = np.zeros(len(gradient), bool) if at_upper is None else np.asarray(at_upper, bool)
    if multipliers is not None:
        lam = _projected(multipliers, len(rows))
    elif len(rows) == 0:
        lam = np.zeros(0)  # (scipy's nnls must not be given a matrix without columns)
    else:
        free = ~(lower | upper)
        lam = _least_squares_multipliers(jacobian[:, free], gradient[free])
    return _terms(gradient + jacobian.T @ lam, rows, lam, lower, upper)


def _projected(multipliers: np.ndarray, m: int) -> np.ndarray:
    """A solver's multipliers projected on λ ≥ 0."""
    return np.maximum(np.asarray(multipliers, dtype=np.float64).reshape(m), 0.0)


def _terms(
    residual: np.ndarray, rows: np.ndarray, lam: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> KKTTerms:
    """The measure from ∇F + J_Gᵀλ̂ (`residual`), G and λ̂."""
    # least-norm element of ∇L + N_Θ: at a lower end the normal cone absorbs a positive part
    residual = np.where(lower, np.minimum(residual, 0.0), residual)
    residual = np.where(upper, np.maximum(residual, 0.0), residual)
    return KKTTerms(
        stationarity=float(np.linalg.norm(residual)),
        complementarity=float(np.sum(np.abs(lam * rows))),
        feasibility=float(np.linalg.norm(np.maximum(rows, 0.0))),
        multipliers=lam,
    )


def _least_squares_multipliers(jacobian: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """argmin_{λ ≥ 0} ‖gradient + jacobianᵀλ‖ by NNLS, allowed `NNLS_SWEEPS` × m iterations (its
    default 3m runs out on the rank-deficient Jacobians of a refined pSP grid). With more
    variables P than rows m (an MLP), on an m × m matrix instead of the P × m one (`_reduced`).
    Should NNLS still run out, λ = 0: a feasible λ, so the residual ‖gradient‖ bounds the
    least-squares one from above, and a diagnostic never ends a run."""
    matrix, target = jacobian.T, -gradient
    if matrix.shape[0] > matrix.shape[1]:
        matrix, target = _reduced(jacobian, gradient)
    try:
        lam, _ = nnls(matrix, target, maxiter=NNLS_SWEEPS * jacobian.shape[0])
    except RuntimeError:
        lam = np.zeros(jacobian.shape[0])
    return lam


def _reduced(jacobian: np.ndarray, gradient: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, t), m × m and m, with ‖Rλ − t‖² = ‖gradient + jacobianᵀλ‖² − c for every λ and a
    constant c, so that NNLS on them has the minimiser of the P × m problem: from the Gram
    matrix J Jᵀ = V diag(e) Vᵀ, R = diag(√e) Vᵀ and t = −diag(1/√e) Vᵀ J gradient on the
    directions with e > 0 (J·gradient has no part on the others). Lawson and Hanson's NNLS
    (1974, ch. 23) reads its matrix A and target b only through AᵀA and Aᵀb, which these keep."""
    values, vectors = np.linalg.eigh(jacobian @ jacobian.T)
    kept = values > values.max(initial=0.0) * jacobian.shape[0] * np.finfo(float).eps
    roots = np.sqrt(values[kept])
    basis = vectors[:, kept].T
    return roots[:, None] * basis, -(basis @ (jacobian @ gradient)) / roots


class _Evaluator:
    """Full-data oracles of one problem over (weights, the family's aux)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.oracles = MinibatchOracles(problem, seed=0, with_aux=True)
        self.rows = np.arange(len(problem.data.train))
        layout = self.oracles.layout
        self.lower = np.concatenate(
            [np.full(b.stop - b.start, b.box.lower) for b in layout.blocks.values()]
        )
        self.upper = np.concatenate(
            [np.full(b.stop - b.start, b.box.upper) for b in layout.blocks.values()]
        )
        self.oracles.keep_full_pass = True

    def scores(self, params: Params) -> np.ndarray:
        """The network's scores of the training rows at `params`' weights."""
        x = np.zeros(self.oracles.layout.size)
        x[self.oracles.layout[WEIGHTS]] = self.oracles.network.flatten(params)
        return self.oracles.full_scores(x)

    def point(self, params: Params) -> np.ndarray:
        """x of the oracles' layout for `params`."""
        oracles = self.oracles
        x = np.zeros(oracles.layout.size)
        x[oracles.layout[WEIGHTS]] = oracles.network.flatten(params)
        if oracles.aux_names:
            aux = aux_tensors(params)
            if not aux:  # a solver without the family's variables: their starting values
                h = self.scores(params) if form_of(params) is MODEL else self.problem.scores(params)
                aux = self.problem.bound.aux_init(torch.from_numpy(h))
            for name in oracles.aux_names:
                x[oracles.layout[f"aux.{name}"]] = np.ravel(np.asarray(aux[name].detach()))
        return x

    def terms(self, params: Params, multipliers: np.ndarray | None) -> KKTTerms:
        x = self.point(params)
        lower, upper = x <= self.lower, x >= self.upper
        if self.problem.constraint is None:
            _, gradient = self.oracles.objective(x, self.rows)
            return kkt_of(
                gradient, np.zeros((0, len(x))), np.zeros(0), at_lower=lower, at_upper=upper
            )
        if multipliers is not None:  # ∇F + J_Gᵀλ̂ in one backward pass, no Jacobian
            lam = _projected(multipliers, len(self.problem.bound.rows))
            rows, residual = self.oracles.lagrangian_gradient(x, self.rows, lam)
            return _terms(residual, rows, lam, lower, upper)
        gradient, rows, jacobian = self.oracles.gradient_and_jacobian(x, self.rows)
        return kkt_of(gradient, jacobian, rows, at_lower=lower, at_upper=upper)


_last: list[_Evaluator] = []  # the evaluator of the problem measured last (a run measures one)


def _evaluator(problem: Problem) -> _Evaluator:
    if not _last or _last[0].problem is not problem:
        _last[:] = [_Evaluator(problem)]
    return _last[0]
