"""The stochastic proxy-Lagrangian method (Cotter, Jiang & Sridharan 2019, Alg. 2) as paper 004
runs it (App. E.2): max AUC s.t. AUC(G1, G1') − AUC(G2, G2') ≤ κ and the reverse (eq. 2), with
a surrogate in the objective only; the constraints stay indicators (true AUCs).

Two players, on a uniform minibatch of B rows per step t (App. E.3: B = 100):
  w-player: one SGD step on λ0 f̂0 + Σ_j λ_j ĝ_j (paper 004 replaces Cotter et al.'s oracle by one
    SGD step, Sec. 6), f̂0 the square pairwise AUC loss over the batch's (positive, negative)
    pairs and ĝ_j a differentiable proxy of row j over the batch's pairs (below);
  λ-player: M ← M ⊙ exp(η_λ ℓ λᵀ), columns renormalised, on the column-stochastic (m+1)×(m+1)
    matrix M (uniform at the start), ℓ = (0, g_1, …, g_m) the rows' indicator values on the
    batch; λ = the stationary distribution of M (Mλ = λ), a swap-regret update.

The proxy of a row AUC(A, B) − AUC(C, D) − κ bounds it from above (Cotter et al.'s hinge):
AUC(A, B), the batch rate of h_a > h_b (ties ½), by mean max(0, 1 + h_a − h_b), and the
subtracted AUC(C, D) by its lower bound mean min(1, h_c − h_d) = 1 − mean max(0, 1 − (h_c − h_d)).
A pair (all, all) (Ex. 1 and 4) is the constant ½ (ties ½, `engine.fairness.auc`). Pairs are
formed inside the batch only, a sample with itself included where the sets overlap (a tie, as in
the exact metric): at most (B/2)² per set pair (spec 004 §5). A row whose set pair has no batch
member on one side is not seen that step: no gradient, and ℓ_j = 0 leaves M as it is.

Reported iterate (App. E.3): every `select_every` steps the iterate is judged on validation, and
the run reports the best validation AUC within κ, else the judged iterate nearest to κ (Cotter
et al. report a distribution over the iterates; paper 004 a single model).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from engine.problem import Problem
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper004.cards_baselines import NETWORK_RATE, ProxyLagrangianConfig
from engine.solvers.records import DUAL, per_row
from engine.solvers.smoothness import safe_step
from engine.solvers.validation_select import ValidationSelection

# log M is kept at or above this: entries of e^-200 keep M positive, so its stationary
# distribution is unique, and change no λ that matters
LOG_FLOOR = -200.0


class BatchPair(NamedTuple):
    """A set pair (A, B) on a batch: the positions of A and B in it, AUC(A, B) over its pairs
    (ties ½), its hinge bounds `lower` ≤ AUC ≤ `upper`, and their gradients in h_A and h_B."""

    a: np.ndarray
    b: np.ndarray
    auc: float
    upper: float
    lower: float
    upper_grads: tuple[np.ndarray, np.ndarray]
    lower_grads: tuple[np.ndarray, np.ndarray]


# AUC(all, all) = ½ exactly (ties ½): a constant, with no positions and no gradient
HALF = BatchPair(
    np.zeros(0, int),
    np.zeros(0, int),
    0.5,
    0.5,
    0.5,
    (np.zeros(0), np.zeros(0)),
    (np.zeros(0), np.zeros(0)),
)


def batch_pair(h: np.ndarray, a: np.ndarray, b: np.ndarray) -> BatchPair | None:
    """The set pair at batch positions `a` and `b` over all |A|·|B| pairs; None if one is empty.

    upper = mean max(0, 1 + h_a − h_b) ≥ 1[h_a > h_b] + ½ 1[h_a = h_b] pair by pair;
    lower = mean min(1, h_a − h_b) ≤ it, as min(1, d) ≤ 1 for d > 0 and ≤ 0 otherwise."""
    if len(a) == 0 or len(b) == 0:
        return None
    d = h[a][:, None] - h[b][None, :]
    n = d.size
    auc = (np.count_nonzero(d > 0) + 0.5 * np.count_nonzero(d == 0)) / n
    up, low = d > -1.0, d < 1.0  # where each bound has slope 1 in d
    return BatchPair(
        a,
        b,
        float(auc),
        float(np.maximum(0.0, 1.0 + d).mean()),
        float(np.minimum(1.0, d).mean()),
        (up.sum(axis=1) / n, -up.sum(axis=0) / n),
        (low.sum(axis=1) / n, -low.sum(axis=0) / n),
    )


class BatchRows(NamedTuple):
    """The rows on a batch: indicator values g_j (true AUCs), proxies ĝ_j ≥ g_j, the proxies'
    gradients in the batch scores (rows, B), and which rows the batch could estimate."""

    indicator: np.ndarray
    proxy: np.ndarray
    jacobian: np.ndarray
    seen: np.ndarray


SetPositions = tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None, np.ndarray | None]


def _set_pair(h: np.ndarray, a: np.ndarray | None, b: np.ndarray | None) -> BatchPair | None:
    """`batch_pair`, None standing for the whole batch; (all, all) is the constant ½."""
    if a is None and b is None:
        return HALF
    every = np.arange(len(h))
    return batch_pair(h, every if a is None else a, every if b is None else b)


def batch_rows(h: np.ndarray, pairs: list[SetPositions], kappa: float) -> BatchRows:
    """Per pair of groups, with its sets (G1, G1', G2, G2') as batch positions (None: all), the
    upper row AUC(G1, G1') − AUC(G2, G2') − κ and the lower row, the reverse (paper 004, eq. 2),
    each with its proxy: the first AUC's upper bound minus the second's lower bound. A pair with
    an empty side leaves both its rows unseen (zeros)."""
    m = 2 * len(pairs)
    out = BatchRows(np.zeros(m), np.zeros(m), np.zeros((m, len(h))), np.zeros(m, bool))
    for p, (g1, g1p, g2, g2p) in enumerate(pairs):
        first, second = _set_pair(h, g1, g1p), _set_pair(h, g2, g2p)
        if first is None or second is None:
            continue
        for j, (plus, minus) in ((2 * p, (first, second)), (2 * p + 1, (second, first))):
            out.indicator[j] = plus.auc - minus.auc - kappa
            out.proxy[j] = plus.upper - minus.lower - kappa
            out.jacobian[j, plus.a] += plus.upper_grads[0]
            out.jacobian[j, plus.b] += plus.upper_grads[1]
            out.jacobian[j, minus.a] -= minus.lower_grads[0]
            out.jacobian[j, minus.b] -= minus.lower_grads[1]
            out.seen[j] = True
    return out


def swap_regret_step(
    log_m: np.ndarray, violations: np.ndarray, lam: np.ndarray, step: float
) -> np.ndarray:
    """log M after M ← M ⊙ exp(η_λ ℓ λᵀ) and columns renormalised to sum 1 (Cotter et al.
    2019, Alg. 2), in log space, floored at `LOG_FLOOR`."""
    log_m = np.maximum(log_m + step * np.outer(violations, lam), LOG_FLOOR)
    top = log_m.max(axis=0)
    return log_m - (top + np.log(np.exp(log_m - top).sum(axis=0)))


def stationary(matrix: np.ndarray) -> np.ndarray:
    """λ ≥ 0 with Σλ = 1 and Mλ = λ for a column-stochastic M with positive entries, by the
    Grassmann–Taksar–Heyman state reduction on the chain Mᵀ: no subtraction, so accurate even
    when M is close to the identity (where an eigensolver confuses eigenvalues near 1)."""
    p = matrix.T.astype(np.float64)  # row-stochastic: p[i, j] = Pr(i → j)
    n = len(p)
    for k in range(n - 1, 0, -1):
        p[:k, k] /= p[k, :k].sum()  # = 1 − p[k, k], without cancellation
        p[:k, :k] += np.outer(p[:k, k], p[k, :k])
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        pi[k] = pi[:k] @ p[:k, k]
    return pi / pi.sum()


class PairwiseAUCSGD(MinibatchSolver):
    """What paper 004's SGD baselines share (App. E.2–E.3): uniform batches, the minibatch square
    pairwise AUC loss f̂0, the selection of the reported iterate, and the batch loss in the
    state. A batch without positives or without negatives has no pair: its f̂0 contributes
    nothing, and the last estimate (f0 on the training data at the start) stands."""

    uses_constraint = False  # the constraint's auxiliary variables are not stepped

    def __init__(self, problem: Problem, config, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.step = config.step or safe_step(problem, NETWORK_RATE)  # the learning rate
        self.sampler = self.batch_sampler()
        self.loss = problem.loss(problem.scores(self.current()))
        if config.select == "validation":
            self.selection = ValidationSelection(problem, "auc")
            self.select_every = config.select_every

    def batch(
        self,
    ) -> tuple[np.ndarray, np.ndarray, Callable[[np.ndarray], np.ndarray], np.ndarray]:
        """A uniform batch: its rows, their scores, the pullback d ↦ Σ_i d_i ∇_x h_i and
        ∂f̂0/∂h (zeros without a pair); `self.loss` becomes f̂0."""
        rows = self.sampler.objective(self.config.batch_size).rows
        h, pullback = self.oracles.scores_linearised(self.x, rows)
        y = self.oracles.y[rows]
        d_loss = np.zeros(len(rows))
        if 0 < np.count_nonzero(y == 1) < len(rows):
            self.loss, d_loss = self.problem.objective.value_and_grad(h, y)
        return rows, h, pullback, d_loss

    def state(self) -> dict[str, float | str]:
        return {"batch_loss": self.loss}


def set_members(problem: Problem) -> list[tuple[np.ndarray | None, ...]]:
    """The family's sets (G1, G1', G2, G2') per pair of groups as masks over the training rows
    (None: all)."""
    n = len(problem.data.train)

    def mask(indices) -> np.ndarray | None:
        if indices is None:
            return None
        out = np.zeros(n, bool)
        out[indices.numpy()] = True
        return out

    return [tuple(mask(s) for s in sets) for sets in problem.bound.sets]


class ProxyLagrangian(PairwiseAUCSGD):
    """Cotter et al. 2019, Alg. 2, with one SGD step as the w-player (paper 004, Sec. 6). The
    state has λ per row as "dual.<row>", λ0 as "lambda0", the batch loss and the largest
    indicator violation on the batch."""

    def __init__(
        self, problem: Problem, config: ProxyLagrangianConfig, rng: np.random.Generator
    ) -> None:
        super().__init__(problem, config, rng)
        self.members = set_members(problem)
        size = problem.bound.m + 1
        self.log_m = np.full((size, size), -math.log(size))  # M uniform (Alg. 2)
        self.lam = np.full(size, 1.0 / size)
        self.violation = math.nan

    def _positions(self, rows: np.ndarray) -> list[SetPositions]:
        """Each set's members among the batch `rows`, as positions in the batch."""
        return [
            tuple(None if s is None else np.flatnonzero(s[rows]) for s in sets)
            for sets in self.members
        ]

    def iterate(self) -> float:
        rows, h, pullback, d_loss = self.batch()
        found = batch_rows(h, self._positions(rows), self.problem.bound.spec.kappa)
        self.oracles.counts.tally(
            0, objective_gradients=1, constraint_values=1, constraint_gradients=1
        )
        # w-player: ∇_w of λ0 f̂0 + Σ_j λ_j ĝ_j, both taken at λ(t)
        d_h = self.lam[0] * d_loss + self.lam[1:] @ found.jacobian
        self.x = self.x - self.step * pullback(d_h)
        # λ-player: ℓ = (0, g_1, …, g_m), indicators (Cotter et al. 2019, Alg. 2)
        self.log_m = swap_regret_step(
            self.log_m, np.r_[0.0, found.indicator], self.lam, self.config.dual_step
        )
        self.lam = stationary(np.exp(self.log_m))
        seen = found.indicator[found.seen]
        self.violation = float(seen.max()) if seen.size else math.nan
        return self.loss

    def multipliers(self) -> np.ndarray:
        """λ of each constraint row, without λ0 (the objective's weight)."""
        return self.lam[1:].copy()

    def state(self) -> dict[str, float | str]:
        rows = self.problem.bound.rows
        return (
            super().state()
            | {"lambda0": float(self.lam[0]), "batch_violation": self.violation}
            | per_row(DUAL, rows, self.lam[1:])
        )
