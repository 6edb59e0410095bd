"""The seven unfairness measures of paper 002 (badr), App. A and Table 3, as upper-level objectives.

Each `BadrMeasure` gives its value and its gradient in the scores p_i (paper 002 uses the linear
score x_i^T w; a solver turns ∂/∂p into parameter gradients through the model), for
classification (0/1 labels y) and, where it is defined, regression (real targets y). The groups
are integer ids a_i = 0..S-1. sigma is the sigmoid, rho > 0 the smoothing parameter (default 1.0):
    smax_rho(v) = (1 / rho) log sum_s exp(rho v_s),   smin_rho(v) = -smax_rho(-v).

- group variance: population variance over groups of the mean unregularised loss F_s (the
  logistic loss for classification, (p - y)^2 / 2 for regression, or the model's own loss)
- individual fairness (Berk et al.):
      sum_{s<t} sum_{i in s, j in t} exp(-|y_i - y_j|) (p_i - p_j)^2 / sum_{s != t} n_s n_t
- demographic parity: smax_rho_s( sqrt((P_s - Pbar)^2 + 1e-6) ), Pbar the unweighted mean over
  groups, P_s = mean_{i in s} sigma(rho p_i) (classification) or mean_{i in s} p_i (regression)
- disparate mistreatment: 1/2 sum_s Cov(1[a = s], p)^2, covariance with 1/n
- equal opportunity: smax_rho(TPR) - smin_rho(TPR), TPR_s = mean_{i in s, y_i = 1} sigma(rho p_i)
- equalized odds: 1/2 [ (smax - smin)(TPR) + (smax - smin)(FPR) ], FPR over y_i = 0
- HSIC (linear kernel): 1/2 sum_s Cov(1[a = s], p)^2, covariance with 1/(n - 1)

The smoothed measures (dp, eopp, eodds) carry constant offsets: at perfect parity
equal opportunity = equalized odds = 2 ln(S) / rho and demographic parity ~ ln(S) / rho + 1e-3.
The exact, unsmoothed gaps are in `rates` and `group_loss`; `BadrMeasure.exact` names the one
the run report shows beside each measure.

Disparate mistreatment and HSIC are the project's choice, not the paper's formula: paper 002 uses
the integer id a_i as a number, (Cov(a, p))^2, so with more than two groups the value depends on
how the groups are numbered (spec paper-002 §1). The one-hot form above (a delta kernel on a,
spec paper-002 §4) is equal to the paper's at S = 2, because Cov(1[a = 0], p) = -Cov(1[a = 1], p)
= -Cov(a, p), and does not depend on the numbering for any S.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError
from engine.fairness._inputs import as_groups, as_labels, as_scores, as_targets
from engine.fairness.table import cell_sums, require_nonempty
from engine.numerics import sigmoid
from engine.objectives import LogisticLoss, SquaredLoss
from engine.task import Task

LossFn = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""(p, y) -> (ℓ(p_i, y_i), ℓ'(p_i, y_i)): every row's loss and its derivative in the score."""

SOFT_ABS = 1e-6  # sqrt(x^2 + 1e-6) stands for |x| in demographic parity (paper 002, App. A)
_SPAN = 300.0  # widest y-range summed against one reference: e^300 ~ 2e130 leaves ample headroom


@dataclass(frozen=True)
class _Rows:
    """The validated inputs of one evaluation."""

    p: np.ndarray
    groups: np.ndarray
    n_groups: int
    y: np.ndarray | None  # 0/1 int64 labels (classification) or float64 targets (regression)
    task: Task

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.groups, minlength=self.n_groups)

    def targets(self, what: str) -> np.ndarray:
        if self.y is None:
            raise UserError(f"{what} needs y, the labels or regression targets; pass y=... .")
        return self.y


# (rows, rho, loss) -> (value, ∂value/∂p)
_Formula = Callable[[_Rows, float, LossFn | None], tuple[float, np.ndarray]]


def _check_rho(rho: float) -> float:
    rho = float(rho)
    if not (np.isfinite(rho) and rho > 0):
        raise UserError(f"the smoothing parameter rho must be a positive number, got {rho}.")
    return rho


def _smax(values: np.ndarray, rho: float) -> tuple[float, np.ndarray]:
    """smax_rho(v) and its gradient, the softmax of rho v."""
    top = values.max()
    weights = np.exp(rho * (values - top))
    total = weights.sum()
    return float(top + np.log(total) / rho), weights / total


def _smooth_range(values: np.ndarray, rho: float) -> tuple[float, np.ndarray]:
    """smax_rho(v) - smin_rho(v) = smax_rho(v) + smax_rho(-v), and its gradient."""
    top, d_top = _smax(values, rho)
    bottom, d_bottom = _smax(-values, rho)
    return top + bottom, d_top - d_bottom


def _soft_positive(p: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """sigma(rho p) and its derivative rho sigma'(rho p), neither overflowing for large |p|."""
    z = rho * p
    e = np.exp(-np.abs(z))
    return sigmoid(z), rho * e / (1.0 + e) ** 2


def _cell_means(
    values: np.ndarray, slopes: np.ndarray, cells: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Means of `values` over each cell, and the map from ∂/∂means to ∂/∂p.

    `slopes` is ∂values_i/∂p_i. An empty cell's mean is 0; callers that read one refuse it first
    (`require_nonempty`).
    """
    sums = np.bincount(cells, weights=values, minlength=sizes.size)
    means = np.divide(sums, sizes, out=np.zeros(sizes.size), where=sizes > 0)

    def back(d_means: np.ndarray) -> np.ndarray:
        return d_means[cells] * slopes / sizes[cells]

    return means, back


# group variance's loss when none is given: those of paper 002's logistic and ridge models
_DEFAULT_LOSS: Mapping[Task, LossFn] = {
    Task.CLASSIFICATION: LogisticLoss().per_sample,
    Task.REGRESSION: SquaredLoss().per_sample,
}


def _group_variance(rows: _Rows, rho: float, loss: LossFn | None) -> tuple[float, np.ndarray]:
    y = rows.targets("group variance")
    losses, slopes = (loss or _DEFAULT_LOSS[rows.task])(rows.p, y)
    losses, slopes = np.asarray(losses, dtype=np.float64), np.asarray(slopes, dtype=np.float64)
    if losses.shape != rows.p.shape or slopes.shape != rows.p.shape:
        raise UserError(
            f"the loss must return two arrays of shape {rows.p.shape}, the per-row losses and "
            f"their slopes; got {losses.shape} and {slopes.shape}."
        )
    group_loss, back = _cell_means(losses, slopes, rows.groups, rows.sizes)
    centred = group_loss - group_loss.mean()
    return float(np.mean(centred**2)), back(2.0 * centred / rows.n_groups)


def _binary_cross_sums(
    p: np.ndarray, groups: np.ndarray, y: np.ndarray, n_groups: int
) -> np.ndarray:
    """(3, n): for each row i, sum over j in other groups of exp(-|y_i - y_j|) (1, p_j, p_j^2).

    With 0/1 labels the weight takes two values, so these are (group, label) cell sums: O(n)
    (spec paper-002 §4).
    """
    weight = np.exp(-np.abs(np.subtract.outer([0.0, 1.0], [0.0, 1.0])))  # by (y_i, y_j)
    out = np.empty((3, p.size))
    for k, values in enumerate((1.0, p, p * p)):
        cells = cell_sums(values, groups, y, n_groups)  # (S, 2)
        others = cells.sum(axis=0) - cells  # over the groups other than s, per label of j
        out[k] = (others @ weight)[groups, y]
    return out


def _decayed_prefix_sums(y: np.ndarray, values: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """(m, n) sum over k < i in i's segment of exp(y_k - y_i) values[:, k].

    `segment` holds non-decreasing ids and y ascends within each segment. Each block of y-span
    below _SPAN is one cumsum against its first y, so no exponent exceeds _SPAN for targets of
    any size; blocks are chained by L_i = exp(y_{i-1} - y_i) (L_{i-1} + v_{i-1}).
    """
    level = np.floor((y - y.min()) / _SPAN)
    restart = np.ones(y.size, dtype=bool)
    restart[1:] = segment[1:] != segment[:-1]
    starts = np.flatnonzero(restart | np.diff(level, prepend=-1.0).astype(bool))
    inclusive = np.empty_like(values)  # the sums over k <= i
    for lo, hi in zip(starts, [*starts[1:], y.size], strict=True):
        ref = y[lo]
        block = np.cumsum(values[:, lo:hi] * np.exp(y[lo:hi] - ref), axis=1)
        if not restart[lo]:
            block += inclusive[:, lo - 1 : lo] * np.exp(y[lo - 1] - ref)
        inclusive[:, lo:hi] = block * np.exp(ref - y[lo:hi])
    # k < i from k <= i - 1, not by subtracting v_i: no cancellation when the sum is small
    strict = np.zeros_like(values)
    strict[:, 1:] = inclusive[:, :-1] * np.exp(np.where(restart[1:], -np.inf, y[:-1] - y[1:]))
    return strict


def _kernel_sums(y: np.ndarray, values: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """(m, n) sum over k != i in i's segment of exp(-|y_i - y_k|) values[:, k]."""
    before = _decayed_prefix_sums(y, values, segment)
    return before + _decayed_prefix_sums(-y[::-1], values[:, ::-1], -segment[::-1])[:, ::-1]


def _real_cross_sums(p: np.ndarray, groups: np.ndarray, y: np.ndarray, n_groups: int) -> np.ndarray:
    """(3, n): for each row i, sum over j in other groups of exp(-|y_i - y_j|) (1, p_j, p_j^2).

    In the order of increasing y the weight is exp(y_j - y_i) for the rows j before i and
    exp(y_i - y_j) for those after, so the sums over all rows are a prefix and a suffix sum, and
    so are those within i's group after sorting by (group, y); the cross-group sums are their
    difference (i itself is in neither), exact up to rounding of the within-group sums. O(n log n)
    for any number of groups, and never the n_s x n_t weight matrix (spec paper-002 §3).
    """
    moments = np.stack([np.ones(p.size), p, p * p])
    by_y = np.argsort(y, kind="stable")
    by_group = by_y[np.argsort(groups[by_y], kind="stable")]  # by group, then by y
    out = np.empty_like(moments)
    out[:, by_y] = _kernel_sums(y[by_y], moments[:, by_y], np.zeros(p.size, dtype=np.int64))
    out[:, by_group] -= _kernel_sums(y[by_group], moments[:, by_group], groups[by_group])
    return out


def _individual_fairness(rows: _Rows, rho: float, loss: LossFn | None) -> tuple[float, np.ndarray]:
    y = rows.targets("individual fairness")
    p = rows.p - rows.p.min()  # the pair differences are unchanged; this limits cancellation
    cross_sums = _binary_cross_sums if rows.task is Task.CLASSIFICATION else _real_cross_sums
    weight, first, second = cross_sums(p, rows.groups, y, rows.n_groups)
    sizes = rows.sizes
    ordered_pairs = float(p.size**2 - np.sum(sizes**2))  # sum_{s != t} n_s n_t
    # sum over j in other groups of w_ij (p_i - p_j)^2; every unordered pair appears twice
    per_row = weight * p * p - 2.0 * first * p + second
    value = 0.5 * float(per_row.sum()) / ordered_pairs
    return value, 2.0 * (weight * p - first) / ordered_pairs


def _demographic_parity(rows: _Rows, rho: float, loss: LossFn | None) -> tuple[float, np.ndarray]:
    if rows.task is Task.CLASSIFICATION:
        values, slopes = _soft_positive(rows.p, rho)
    else:
        values, slopes = rows.p, np.ones(rows.p.size)
    rates, back = _cell_means(values, slopes, rows.groups, rows.sizes)
    centred = rates - rates.mean()
    soft_abs = np.sqrt(centred**2 + SOFT_ABS)
    value, d_soft_abs = _smax(soft_abs, rho)
    d_centred = d_soft_abs * centred / soft_abs
    return value, back(d_centred - d_centred.mean())


def _label_rates(
    rows: _Rows, rho: float, labels_needed: list[int]
) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """(S, 2) mean of sigma(rho p) over each (group, label) cell: columns FPR_s, TPR_s."""
    y = rows.targets("a smoothed true/false-positive rate")
    sizes = cell_sums(1.0, rows.groups, y, rows.n_groups)
    require_nonempty(sizes[:, labels_needed], "a smoothed true/false-positive rate")
    values, slopes = _soft_positive(rows.p, rho)
    rates, back = _cell_means(values, slopes, 2 * rows.groups + y, sizes.ravel())
    return rates.reshape(-1, 2), lambda d_rates: back(d_rates.ravel())


def _equal_opportunity(rows: _Rows, rho: float, loss: LossFn | None) -> tuple[float, np.ndarray]:
    rates, back = _label_rates(rows, rho, [1])
    value, d_tpr = _smooth_range(rates[:, 1], rho)
    return value, back(np.stack([np.zeros_like(d_tpr), d_tpr], axis=1))


def _equalized_odds(rows: _Rows, rho: float, loss: LossFn | None) -> tuple[float, np.ndarray]:
    rates, back = _label_rates(rows, rho, [0, 1])
    fpr_range, d_fpr = _smooth_range(rates[:, 0], rho)
    tpr_range, d_tpr = _smooth_range(rates[:, 1], rho)
    return 0.5 * (fpr_range + tpr_range), back(0.5 * np.stack([d_fpr, d_tpr], axis=1))


def _group_covariance(
    rows: _Rows, rho: float, loss: LossFn | None, *, ddof: int
) -> tuple[float, np.ndarray]:
    """1/2 sum_s c_s^2 with c_s = Cov(1[a = s], p) = 1/(n - ddof) sum_{i in s} (p_i - pbar)."""
    p, groups = rows.p, rows.groups
    scale = p.size - ddof  # two non-empty groups, so n >= 2
    cov = np.bincount(groups, weights=p - p.mean(), minlength=rows.n_groups) / scale
    # ∂c_s/∂p_i = (1[a_i = s] - n_s / n) / (n - ddof)
    return 0.5 * float(cov @ cov), (cov[groups] - cov @ rows.sizes / p.size) / scale


def _tasks_in_words(tasks: frozenset[Task]) -> str:
    return " and ".join(task for task in Task if task in tasks)


@dataclass(frozen=True)
class BadrMeasure:
    """One unfairness measure of paper 002 (App. A) as an upper-level objective in the scores."""

    name: str
    title: str
    tasks: frozenset[Task]  # paper 002, Table 3, except dm and hsic (see the module docstring)
    smoothed: bool  # rho enters the measure
    exact: str | None  # the exact metric of the run report shown beside it
    _formula: _Formula = field(repr=False)

    def value_and_grad(
        self,
        p: ArrayLike,
        groups: ArrayLike,
        y: ArrayLike | None,
        *,
        rho: float = 1.0,
        task: Task | str = Task.CLASSIFICATION,
        loss: LossFn | None = None,
    ) -> tuple[float, np.ndarray]:
        """The measure and its gradient ∂value/∂p, of shape (n,).

        `y` holds 0/1 labels for classification and real targets for regression; dp, dm and
        hsic do not read it and accept None. `rho` is used by the smoothed measures only.
        `loss` is read by group variance only: the model's own unregularised per-row loss
        (default: the logistic loss for classification, (p - y)^2 / 2 for regression).
        """
        if task not in set(Task):
            raise UserError(f"task must be one of {', '.join(Task)}; got {task!r}.")
        task = Task(task)
        if task not in self.tasks:
            raise UserError(
                f"{self.title} ({self.name}) is defined for {_tasks_in_words(self.tasks)} "
                f"only (paper 002, Table 3), not for {task}."
            )
        scores = as_scores(p)
        group_ids, n_groups = as_groups(groups, scores.size)
        if y is not None:
            y = (
                as_labels(y, scores.size)
                if task is Task.CLASSIFICATION
                else as_targets(y, scores.size)
            )
        rows = _Rows(scores, group_ids, n_groups, y, task)
        return self._formula(rows, _check_rho(rho) if self.smoothed else rho, loss)

    def value(self, p: ArrayLike, groups: ArrayLike, y: ArrayLike | None, **options: Any) -> float:
        """The measure alone; `options` as for `value_and_grad`."""
        return self.value_and_grad(p, groups, y, **options)[0]


_BOTH = frozenset(Task)
_CLASSIFICATION_ONLY = frozenset({Task.CLASSIFICATION})

BADR_MEASURES: Mapping[str, BadrMeasure] = MappingProxyType(
    {
        measure.name: measure
        for measure in (
            BadrMeasure(
                "dp", "demographic parity (smoothed)", _BOTH, True, "dp", _demographic_parity
            ),
            BadrMeasure(
                "dm",
                "disparate mistreatment",
                _BOTH,
                False,
                None,
                partial(_group_covariance, ddof=0),
            ),
            BadrMeasure(
                "eopp",
                "equal opportunity (smoothed)",
                _CLASSIFICATION_ONLY,
                True,
                "eopp",
                _equal_opportunity,
            ),
            BadrMeasure(
                "eodds",
                "equalized odds (smoothed)",
                _CLASSIFICATION_ONLY,
                True,
                "eo",
                _equalized_odds,
            ),
            BadrMeasure(
                "group_variance",
                "variance of the group losses",
                _BOTH,
                False,
                "group_loss_gap",
                _group_variance,
            ),
            BadrMeasure(
                "individual", "individual fairness", _BOTH, False, None, _individual_fairness
            ),
            BadrMeasure(
                "hsic",
                "HSIC (linear kernel)",
                _BOTH,
                False,
                None,
                partial(_group_covariance, ddof=1),
            ),
        )
    }
)


def badr_measure(name: str) -> BadrMeasure:
    """The measure called `name` (a key of `BADR_MEASURES`)."""
    try:
        return BADR_MEASURES[name]
    except KeyError:
        raise UserError(
            f"unknown badr measure {name!r}; the measures are: {', '.join(BADR_MEASURES)}."
        ) from None


def badr_group_variance(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Population variance over groups of the mean logistic loss log(1 + exp(-(2y-1) p))."""
    return BADR_MEASURES["group_variance"].value(scores, groups, y)


def badr_individual_fairness(scores: ArrayLike, groups: ArrayLike, y: ArrayLike) -> float:
    """Berk et al.'s individual fairness as generalised to S groups in paper 002, App. A."""
    return BADR_MEASURES["individual"].value(scores, groups, y)


def badr_demographic_parity(scores: ArrayLike, groups: ArrayLike, rho: float = 1.0) -> float:
    """Smoothed demographic parity of paper 002: smax_rho of |P_s - Pbar| (softened by 1e-6)."""
    return BADR_MEASURES["dp"].value(scores, groups, None, rho=rho)


def badr_disparate_mistreatment(scores: ArrayLike, groups: ArrayLike) -> float:
    """1/2 sum_s Cov(1[a = s], p)^2 with 1/n: paper 002's (Cov(a, p))^2 at two groups."""
    return BADR_MEASURES["dm"].value(scores, groups, None)


def badr_hsic(scores: ArrayLike, groups: ArrayLike) -> float:
    """Linear-kernel HSIC as 1/2 sum_s Cov(1[a = s], p)^2 with 1/(n-1) (see the module docstring)."""
    return BADR_MEASURES["hsic"].value(scores, groups, None)


def badr_equal_opportunity(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, rho: float = 1.0
) -> float:
    """smax_rho(TPR) - smin_rho(TPR) over groups, with smoothed TPRs (paper 002, App. A)."""
    return BADR_MEASURES["eopp"].value(scores, groups, y, rho=rho)


def badr_equalized_odds(
    scores: ArrayLike, groups: ArrayLike, y: ArrayLike, rho: float = 1.0
) -> float:
    """Half the sum of the smoothed TPR range and FPR range over groups (paper 002, App. A)."""
    return BADR_MEASURES["eodds"].value(scores, groups, y, rho=rho)
