"""Problem = prepared data + model + objective (engine.objectives) + a constraint family with κ
and I.

Everything a solver asks of the data goes through here: scores, the objective and its gradient in
score space, the bound constraint, and the exact metrics that are reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from engine import fairness
from engine.data.prepared import SPLITS, Prepared
from engine.design import CrossDesign, Design
from engine.errors import UserError
from engine.fairness import regression
from engine.fairness.constraints import BoundConstraint, ConstraintSpec, bind_ids, exact_metric
from engine.fairness.constraints.base import Members
from engine.fairness.constraints.batch_rows import BatchRows
from engine.fairness.criteria import REPORT_NAMES, report_criteria
from engine.fairness.families import AUC_GAP_REPORTED_AS, check_family_task, family_entry
from engine.fairness.intervals import interval_metrics
from engine.mlp import init_mlp_params
from engine.models import ModelSpec, Params
from engine.networks import Network
from engine.objectives import LogisticLoss, Objective, check_objective_task
from engine.scoring import Rows, model_network, model_scores
from engine.task import Task

HELD_OUT = ("val", "test")  # the splits whose exact values are sample estimates of new data's


@dataclass(frozen=True, eq=False)
class Problem:
    """min the objective's mean loss  s.t.  the constraint family's rows ≤ 0 on the training split.

    `interval` is I = [α, β), counted from the top of each group (paper 003, Def. 4.1); pSP and
    pDP are reported on it whatever the constraint is. `threshold` is the decision threshold θ̂.
    The objective and the constraint family must be defined for the data's task (a binary or a
    real-valued label, `engine.task.Task`). `start`, when given, is the model the solvers that
    take a warm start begin from (a neighbouring κ's or I's solution in a continuation sweep)
    instead of their papers' initial point; `start_state`, the state the solve of that model
    ended with, where its constraint differed from this one in κ alone (a sequence's κ′ step:
    `engine.solvers.solve_sequence`), from which a solver that keeps duals takes its first
    multipliers instead of 0 (`engine.solvers.kkt.multipliers_from_state`).
    """

    data: Prepared
    model: ModelSpec
    constraint: ConstraintSpec | None
    interval: tuple[float, float] = (0.0, 1.0)
    threshold: float = 0.0
    objective: Objective = LogisticLoss()
    start: Params | None = None
    start_state: Mapping[str, float | str] | None = None

    def __post_init__(self) -> None:
        alpha, beta = self.interval
        if not 0.0 <= alpha < beta <= 1.0:
            raise UserError(
                f"the interval [α, β) = [{alpha}, {beta}) needs 0 ≤ α < β ≤ 1 "
                "(ranks counted from the top of each group)"
            )
        counts = np.bincount(self.data.train.groups, minlength=self.data.n_groups)
        if counts.min() == 0:
            empty = [self.data.group_names[g] for g in np.flatnonzero(counts == 0)]
            raise UserError(f"group(s) {', '.join(empty)} have no training rows")
        label = f"data set {self.data.dataset_name}'s label '{self.data.label_name}'"
        check_objective_task(self.objective.name, self.data.task, label)
        if len(np.unique(self.data.train.y)) < 2:
            raise UserError("the training labels are all the same; there is nothing to learn")
        if self.constraint is not None:
            check_family_task(self.constraint.family, self.data.task, label)
            _ = self.bound  # binds now: a bad κ, I or a too narrow band is reported at once

    def under(
        self,
        constraint: ConstraintSpec | None,
        start: Params | None,
        start_state: Mapping[str, float | str] | None = None,
    ) -> Problem:
        """This problem with another constraint, start and start state: the same data and
        model, so the splits' rows as the model scores them (their designs, their signed
        labels) are shared with it, not built again for every solve of a sequence."""
        other = replace(self, constraint=constraint, start=start, start_state=start_state)
        other.__dict__["_rows"] = self._rows  # what `cached_property` would have built
        other.__dict__["_signed"] = self._signed
        return other

    # ---- data ---------------------------------------------------------------------------
    def rows(self, split: str) -> Rows:
        """A split's rows as the model scores them (engine.scoring), built once per split."""
        if split not in self._rows:
            part = self.data.split(split)
            self._rows[split] = Rows(
                part.X, part.groups, self.data.n_groups, self.model.cross_terms
            )
        return self._rows[split]

    @cached_property
    def _rows(self) -> dict[str, Rows]:
        return {}

    def features(self, split: str) -> np.ndarray:
        """The model's inputs of a split: X, with the group cross-terms if the model has them."""
        return self.rows(split).features

    def design(self, split: str = "train") -> Design | CrossDesign:
        """X̃ = [1, X] (with cross-terms if the model has them) of a split."""
        return self.rows(split).design

    def signed_labels(self, split: str = "train") -> np.ndarray:
        """ζ ∈ {−1, +1} (paper 003, Sec. 2)."""
        if split not in self._signed:
            self._signed[split] = 2.0 * self.data.split(split).y.astype(np.float64) - 1.0
        return self._signed[split]

    @cached_property
    def _signed(self) -> dict[str, np.ndarray]:
        return {}

    @cached_property
    def bound(self) -> BoundConstraint:
        """The constraint bound to the training split's groups and labels."""
        if self.constraint is None:
            raise UserError("this problem has no constraint")
        groups, y, members = self._samples("train", None)
        return bind_ids(
            self.constraint, ids=groups, names=self.data.group_names, y=y, members=members
        )

    def _samples(
        self, split: str, rows: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, Members | None]:
        """Group ids, labels and, for a family that constrains subgroups when the data has
        them, subgroup membership of a split's samples (or of its `rows`)."""
        part = self.data.split(split)
        chosen = slice(None) if rows is None else rows
        subgroups = self.data.subgroups
        members = None
        if subgroups is not None and family_entry(self.constraint.family).uses_subgroups:
            members = Members(part.members[chosen], subgroups.names, subgroups.levels)
        return part.groups[chosen], part.y[chosen], members

    def constraint_on(self, split: str, rows: np.ndarray | None = None) -> BoundConstraint:
        """The constraint on a split's samples (or on its `rows`), with the rows of `bound`."""
        groups, y, members = self._samples(split, rows)
        return self.bound.with_ids(groups, y, None if members is None else members.matrix)

    def batch_rows(self, rows: np.ndarray | None = None) -> BatchRows:
        """The constraint's rows on training rows (all of them by default) as numpy functions
        of their scores, with vector–Jacobian products (`BoundConstraint.batch_rows`)."""
        groups, y, members = self._samples("train", rows)
        return self.bound.batch_rows(groups, y, None if members is None else members.matrix)

    # ---- model --------------------------------------------------------------------------
    def init_params(self, seed: int = 0) -> Params:
        """w⁰ = 0 for linear models (paper 003, G.2.2); PyTorch's default init for an MLP; or,
        with a `start`, a copy of its model parameters (its auxiliary variables, fitted to its
        own κ and I, are left out: solvers fit them to the start's scores)."""
        if self.model.affine:
            cold = {"w": np.zeros(self.design().shape[1])}
        else:
            cold = init_mlp_params(self.rows("train").n_inputs, self.model.hidden, seed)
        if self.start is None:
            return cold
        return {name: _start_value(self.start, name, value) for name, value in cold.items()}

    @cached_property
    def network(self) -> Network:
        """The model as a numpy function of its flat weights (engine.networks)."""
        return model_network(self.model, self.rows("train"))

    def scores(self, params: Params, split: str = "train") -> np.ndarray:
        """The scores of a split (`engine.scoring.model_scores`, in the form of `params`:
        `engine.model_forms`). Every report, record and stored test score is computed here, so
        a group-wise map goes wherever the model goes."""
        return model_scores(self.model, params, self.rows(split), self.network)

    # ---- objective ----------------------------------------------------------------------
    def loss(self, h: np.ndarray, split: str = "train") -> float:
        """f0 of the scores `h` of a split (the objective's mean loss)."""
        return self.objective.value(h, self.data.split(split).y)

    def loss_and_grad_scores(self, h: np.ndarray) -> tuple[float, np.ndarray]:
        """f0 and ∂f0/∂h on the training split."""
        return self.objective.value_and_grad(h, self.data.train.y)

    # ---- exact metrics ------------------------------------------------------------------
    def report(self, params: Params, splits: tuple[str, ...] = SPLITS) -> dict[str, dict]:
        """Exact metrics (no surrogate) of the model on each split."""
        return {s: self.report_scores(self.scores(params, s), s) for s in splits}

    def interval_report(
        self, params: Params, splits: tuple[str, ...] = HELD_OUT, seed: int = 0
    ) -> dict[str, dict[str, float | None]]:
        """The 95 % intervals of a classifier's exact values on each held-out split with rows
        (`engine.fairness.intervals.interval_metrics`: "<metric>_low", "_high", and for the
        constrained value, pSP on I without a constraint, "_resolves" and "_rows"), to store
        beside its exact metrics; none for a regression."""
        if self.data.task is not Task.CLASSIFICATION:
            return {}
        out = {}
        for split in splits:
            part = self.data.split(split)
            if len(part):
                h = self.scores(params, split)
                out[split] = interval_metrics(
                    self.constraint, self.interval, self.threshold, h, part.groups, part.y, seed
                )
        return out

    def report_scores(
        self, h: np.ndarray, split: str, only: Collection[str] | None = None
    ) -> dict[str, float | None]:
        """Exact metrics of scores `h` on `split`; "constraint" is the exact value of the
        constrained quantity (the one held to κ: pSP, the EO gap, ...); "majority" the accuracy
        of always predicting the split's majority class, "positive_rate" the share predicted
        positive and "score_std" the spread of the scores (0: a constant score), so that a
        degenerate model can be told (engine.verdict); a classifier's "distinct_scores" counts
        the distinct values of its scores (few for a randomised classifier scored by its
        probability, whose ranks and so pSP are then coarse); then paper 000's criteria
        (engine.fairness.criteria.REPORT_NAMES). A regression has metrics of its own instead
        (`_regression_metrics`). `only` names the metrics wanted (default: all)."""
        part = self.data.split(split)
        if len(part) == 0:
            return {}
        classifier = self.data.task is Task.CLASSIFICATION
        values = (self._classifier_metrics if classifier else self._regression_metrics)(h, split)
        if self.constraint is not None:
            values["constraint"] = lambda: self._constraint_metric(h, split)
        if only is not None:
            values = {name: values[name] for name in only if name in values}
        report = {name: _metric_or_none(compute) for name, compute in values.items()}
        if classifier and (only is None or set(only) & set(REPORT_NAMES)):
            criteria = _criteria_or_none(h, part.y, part.groups)
            report |= {k: v for k, v in criteria.items() if only is None or k in only}
        return report

    def _classifier_metrics(self, h: np.ndarray, split: str) -> dict[str, Callable[[], float]]:
        """The exact metrics of a classifier's scores `h` on `split`, to compute when asked."""
        part = self.data.split(split)
        alpha, beta = self.interval
        g, y, t = part.groups, part.y, self.threshold
        return {
            "loss": lambda: self.objective.value(h, y),
            "accuracy": lambda: fairness.accuracy(h, y, t),
            "auc": lambda: fairness.roc_auc(h, y),
            "psp": lambda: fairness.psp(h, g, alpha, beta),
            "pdp": lambda: fairness.pdp(h, g, alpha, beta, t),
            "sp": lambda: fairness.psp(h, g, 0.0, 1.0),
            "dp": lambda: fairness.demographic_parity_gap(h, g, t),
            "eo": lambda: fairness.equalized_odds_gap(h, g, y, t),
            "eopp": lambda: fairness.equal_opportunity_gap(h, g, y, t),
            **{name: _auc_gap(variant, h, g, y) for variant, name in AUC_GAP_REPORTED_AS.items()},
            "group_loss_gap": lambda: np.ptp(fairness.group_losses(h, g, y)),
            "majority": lambda: max(np.mean(y), 1.0 - np.mean(y)),
            "positive_rate": lambda: np.mean(h > t),
            "score_std": lambda: np.std(h),
            "distinct_scores": lambda: np.unique(h).size,
        }

    def _regression_metrics(self, h: np.ndarray, split: str) -> dict[str, Callable[[], float]]:
        """The exact metrics of a regression's predictions `h` on `split`
        (engine.fairness.regression), to compute when asked: its loss, errors and R², the gaps
        between groups in mean prediction ("mean_gap") and in mean squared loss
        ("group_loss_gap"), "baseline_rmse", the RMSE of predicting the training split's mean
        label (the regression's "majority": a model no better than it is degenerate,
        engine.verdict), and "score_std"."""
        part = self.data.split(split)
        g, y = part.groups, part.y
        return {
            "loss": lambda: self.objective.value(h, y),
            "rmse": lambda: regression.rmse(h, y),
            "r2": lambda: regression.r2(h, y),
            "mae": lambda: regression.mae(h, y),
            "mean_gap": lambda: regression.mean_gap(h, g),
            "group_loss_gap": lambda: regression.squared_loss_gap(h, g, y),
            "baseline_rmse": lambda: regression.rmse(np.full(len(y), self.data.train.y.mean()), y),
            "score_std": lambda: np.std(h),
        }

    def _constraint_metric(self, h: np.ndarray, split: str) -> float:
        return self.constraint_on(split).exact(h)


def _criteria_or_none(h: np.ndarray, y: np.ndarray, g: np.ndarray) -> dict[str, float | None]:
    """Paper 000's Table 2 criteria, inaccuracy, accuracy gap and Wasserstein distance; all None
    on a split that cannot support them (e.g. a group without rows)."""
    try:
        return report_criteria(h, y, g)
    except UserError:
        return dict.fromkeys(REPORT_NAMES)


def _auc_gap(variant: str, h: np.ndarray, g: np.ndarray, y: np.ndarray) -> Callable[[], float]:
    """The exact AUC gap of paper 004's `variant` (App. A), to compute when asked."""
    gap = exact_metric(f"auc_gap:{variant}")
    return (lambda: gap(h, g)) if variant == "group" else (lambda: gap(h, g, y))


def _metric_or_none(compute) -> float | None:
    """A metric that a split cannot support (e.g. a group without positives) is None."""
    try:
        value = float(compute())
    except UserError:
        return None
    return value if math.isfinite(value) else None


def _start_value(start: Params, name: str, cold: np.ndarray) -> np.ndarray:
    """The warm start's parameter `name`, which must have the shape of the cold one."""
    value = start.get(name)
    if value is None or np.shape(value) != cold.shape:
        found = "none" if value is None else f"shape {np.shape(value)}"
        raise UserError(
            f"the warm start does not fit this model: its parameter {name} should "
            f"have shape {cold.shape}, found {found}"
        )
    return np.array(value, dtype=cold.dtype, copy=True)
