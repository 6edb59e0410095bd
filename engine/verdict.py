"""The verdict on a run: can its result be trusted and shown? (pure; no torch, no Streamlit)

A run's exact metrics say what its model does; the verdict says what that means for the user who
asked for "the constrained quantity ≤ κ":

    meets κ          the exact value on the split is ≤ κ
    misses κ         it is > κ (by how much is said)
    surrogate only   the solver's surrogate rows are feasible (≤ its tolerance ε), but the exact
                     train value is > κ: the surrogate approximates the indicator
    degenerate       accuracy not above always predicting the majority class (unless the
                     objective only ranks), AUC ≤ 0.5, or a constant score; for a regression,
                     R² ≤ 0 (no better than predicting the mean label): whatever its fairness,
                     the model is not worth showing
    not converged    a budget ended the run (the model may still change with a longer one)

plus the run's own end when it has no model (failed, cancelled, interrupted) or has none yet.
The label speaks of the reported split (test, else validation, else train): degenerate first,
then whether κ is met there (a miss whose surrogate was feasible is "surrogate only"); "not
converged" and "diverged" are flags beside it. Every split gets its own check, and every finding
is a sentence. A classifier whose scores take few distinct values on the reported split (a
randomised classifier scored by its probability) gets a finding that says so (`few_scores`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from engine.status import RunStatus

DEGENERATE_MARGIN = 1e-9  # accuracy must exceed the majority rate by more than rounding
CONSTANT_SCORE_STD = 1e-12
REPORTED_SPLITS = ("test", "val", "train")  # the first present is the one a headline speaks of
# scores with at most this many distinct values put most samples in ties, whose order is
# arbitrary: pSP and the other measures on ranks or quantiles of the scores then move in coarse
# steps. fairlearn's randomised classifiers, scored by their probability P(ŷ = 1 | x), have a
# few: a mixture of k classifiers at most 2^k values (k is a handful), two randomised thresholds
# per group at most four values per group.
FEW_DISTINCT_SCORES = 20


class Level(StrEnum):
    OK = "ok"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class Label(StrEnum):
    MEETS = "meets κ"
    MISSES = "misses κ"
    SURROGATE_ONLY = "surrogate only"
    DEGENERATE = "degenerate"
    NOT_CONVERGED = "not converged"
    UNCONSTRAINED = "no constraint"
    DIVERGED = "diverged"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    QUEUED = "queued"
    RUNNING = "running"


@dataclass(frozen=True)
class SplitCheck:
    """One split: the exact constrained value against κ, and whether the model is degenerate."""

    split: str
    value: float | None
    kappa: float | None
    degenerate: str | None  # why, in words; None when it is not

    @property
    def excess(self) -> float | None:
        """value − κ (> 0: κ missed by this much)."""
        if self.value is None or self.kappa is None:
            return None
        return self.value - self.kappa

    @property
    def meets(self) -> bool | None:
        excess = self.excess
        return None if excess is None else excess <= 0.0

    def cell(self) -> str:
        """A table cell: "0.041 ≤ 0.05 ✓", "0.073 > 0.05 ✗ (+0.023)", or the value alone."""
        if self.value is None:
            return "—"
        if self.kappa is None:
            return f"{self.value:.4f}"
        if self.meets:
            return f"{self.value:.4f} ≤ {self.kappa:g} ✓"
        return f"{self.value:.4f} > {self.kappa:g} ✗ (+{self.excess:.4f})"


@dataclass(frozen=True)
class Verdict:
    """`label` and `level` for a badge, `flags` for secondary badges (not converged, diverged),
    `findings` as sentences (the label's first), and one `SplitCheck` per split with metrics.
    `quantity` names the constrained value ("EO gap")."""

    label: Label
    level: Level
    findings: tuple[str, ...]
    splits: dict[str, SplitCheck]
    quantity: str
    kappa: float | None
    flags: tuple[Label, ...] = ()

    @property
    def headline(self) -> str:
        return self.findings[0] if self.findings else str(self.label)

    @property
    def summary(self) -> str:
        """The label with its flags, for a table cell: "meets κ · not converged"."""
        return " · ".join(str(label) for label in (self.label, *self.flags))

    def check(self, split: str) -> SplitCheck | None:
        return self.splits.get(split)

    def to_dict(self) -> dict:
        return {
            "label": str(self.label),
            "level": str(self.level),
            "flags": [str(f) for f in self.flags],
            "findings": list(self.findings),
            "quantity": self.quantity,
            "kappa": self.kappa,
            "splits": {s: {"value": c.value, "meets": c.meets, "excess": c.excess,
                           "degenerate": c.degenerate} for s, c in self.splits.items()},
        }  # fmt: skip


_SEVERITY = [Level.OK, Level.INFO, Level.WARNING, Level.ERROR]
_NO_MODEL = {
    RunStatus.FAILED: (Label.FAILED, Level.ERROR),
    RunStatus.CANCELLED: (Label.CANCELLED, Level.INFO),
    RunStatus.INTERRUPTED: (Label.INTERRUPTED, Level.ERROR),
    RunStatus.QUEUED: (Label.QUEUED, Level.INFO),
    RunStatus.RUNNING: (Label.RUNNING, Level.INFO),
}


def judge(
    status: RunStatus | str,
    metrics: dict[str, dict[str, float | None]],
    quantity: str,
    kappa: float | None,
    reason: str = "",
    surrogate_violation: float | None = None,
    tolerance: float = 0.0,
    value_metric: str | None = "constraint",
    thresholded: bool = True,
) -> Verdict:
    """The verdict on one run.

    `metrics[split]` are the exact metrics of `Problem.report` ("constraint", "accuracy",
    "majority", "auc", "score_std", "positive_rate"; a regression's "r2" instead of the
    classifier's); `kappa` is None for a run without a constraint; `surrogate_violation` is
    the largest surrogate row of the reported iterate (the solver's own view) and `tolerance`
    the ε it is held to. `value_metric` is the metric that holds `quantity` ("constraint", or
    e.g. "psp" for a run without constraint, "mean_gap" for a regression's; None: none).
    `thresholded` is False for an objective that only ranks (paper 004's pairwise AUC loss is
    unchanged by a shift of every score), whose accuracy at the threshold says nothing.
    """
    status = RunStatus(status)
    splits = {
        split: SplitCheck(
            split,
            _number(values.get(value_metric)) if value_metric else None,
            kappa,
            _degenerate(values, thresholded),
        )  # fmt: skip
        for split, values in metrics.items()
        if values
    }
    if status in _NO_MODEL or not splits:
        label, level = _NO_MODEL.get(status, (Label.FAILED, Level.ERROR))
        text = f"{label}: {reason}" if reason else str(label)
        return Verdict(label, level, (text,), splits, quantity, kappa)
    reported = next(splits[s] for s in REPORTED_SPLITS if s in splits)
    findings = _fairness_findings(reported, splits.get("train"), quantity, surrogate_violation,
                                  tolerance)  # fmt: skip
    distinct = _number(metrics[reported.split].get("distinct_scores"))
    if few_scores(distinct):
        findings.append((findings[0][0], Level.INFO,
                         f"On {_split_words(reported.split)}, {_few_scores_words(distinct)}."))  # fmt: skip
    if reported.degenerate:
        findings.insert(0, (Label.DEGENERATE, Level.ERROR,
                            f"Degenerate on {_split_words(reported.split)}: "
                            f"{reported.degenerate}."))  # fmt: skip
    flags = []
    if status is RunStatus.DIVERGED:
        flags.append((Label.DIVERGED, Level.ERROR,
                      f"Diverged ({reason or 'a non-finite value'}): the last finite iterate is "
                      "reported; smaller step sizes (the solver's options) usually prevent "
                      "it."))  # fmt: skip
    elif status is RunStatus.BUDGET:
        flags.append((Label.NOT_CONVERGED, Level.WARNING,
                      f"Not converged ({reason or 'a budget ended it'}): a longer run may give "
                      "another model."))  # fmt: skip
    label, level, _ = findings[0]
    if flags and _SEVERITY.index(flags[0][1]) > _SEVERITY.index(level):
        level = flags[0][1]  # a met κ of a model that did not converge is not all clear
    return Verdict(label, level, tuple(f[2] for f in findings + flags), splits, quantity, kappa,
                   tuple(f[0] for f in flags))  # fmt: skip


def few_scores(distinct: float | None) -> bool:
    """Whether a model's scores take more than one value (one: a constant score, degenerate) but
    no more than FEW_DISTINCT_SCORES (`distinct` is its "distinct_scores" metric, None if
    unknown)."""
    return distinct is not None and 1 < distinct <= FEW_DISTINCT_SCORES


def _few_scores_words(distinct: float) -> str:
    """Why few distinct scores matter, as a clause: "its scores take only 3 distinct values: ..."."""
    return (f"its scores take only {distinct:.0f} distinct values: samples tied at a value "
            "have no order among them, so pSP and other measures on ranks or quantiles of the "
            "scores are coarse")  # fmt: skip


def _fairness_findings(
    reported: SplitCheck,
    train: SplitCheck | None,
    quantity: str,
    surrogate_violation: float | None,
    tolerance: float,
) -> list[tuple[Label, Level, str]]:
    where = _split_words(reported.split)
    if reported.kappa is None:
        value = "—" if reported.value is None else f"{reported.value:.4f}"
        return [(Label.UNCONSTRAINED, Level.INFO,
                 f"No fairness constraint; {quantity} on {where} is {value}.")]  # fmt: skip
    if reported.value is None:
        return [(Label.MISSES, Level.WARNING,
                 f"{quantity} could not be computed on {where}, so κ cannot be checked.")]  # fmt: skip
    surrogate_only = (train is not None and train.meets is False
                      and surrogate_violation is not None and surrogate_violation <= tolerance)  # fmt: skip
    if reported.meets:
        findings = [(Label.MEETS, Level.OK,
                     f"Meets κ on {where}: {quantity} = {reported.value:.4f} ≤ κ = "
                     f"{reported.kappa:g}.")]  # fmt: skip
    else:
        label = Label.SURROGATE_ONLY if surrogate_only else Label.MISSES
        findings = [(label, Level.WARNING,
                     f"Misses κ on {where}: {quantity} = {reported.value:.4f} > κ = "
                     f"{reported.kappa:g}, by {reported.excess:.4f}.")]  # fmt: skip
    if surrogate_only:
        findings.append((Label.SURROGATE_ONLY, Level.INFO,
                         f"Surrogate feasible but exact infeasible: the solver's surrogate rows "
                         f"are within its tolerance ({surrogate_violation:+.4f} ≤ ε = "
                         f"{tolerance:g}), yet the exact train {quantity} is {train.value:.4f} > "
                         f"κ. The surrogate approximates the exact indicator; a longer budget, a "
                         "smaller κ or a wider interval I helps."))  # fmt: skip
    elif train is not None and train is not reported and train.meets is False:
        findings.append((Label.MISSES, Level.INFO,
                         f"Misses κ on the training data: {quantity} = {train.value:.4f} > κ."))  # fmt: skip
    elif train is not None and train is not reported and reported.meets is False:
        findings.append((Label.MISSES, Level.INFO,
                         f"Meets κ on the training data ({train.value:.4f}); the gap on held-out "
                         "data is sampling noise or overfitting: a slightly smaller κ leaves "
                         "room for it."))  # fmt: skip
    return findings


def _degenerate(values: dict[str, float | None], thresholded: bool) -> str | None:
    """Why a model is not worth showing on a split, or None."""
    accuracy, majority = _number(values.get("accuracy")), _number(values.get("majority"))
    auc, spread = _number(values.get("auc")), _number(values.get("score_std"))
    positive_rate, r2 = _number(values.get("positive_rate")), _number(values.get("r2"))
    if spread is not None and spread <= CONSTANT_SCORE_STD:
        return "every sample gets the same score"
    if r2 is not None and r2 <= 0.0:
        return (f"R² {r2:.4f} ≤ 0: its predictions are no better than predicting the mean "
                "label")  # fmt: skip
    if (thresholded and accuracy is not None and majority is not None
            and accuracy <= majority + DEGENERATE_MARGIN):  # fmt: skip
        always = ""
        if positive_rate in (0.0, 1.0):
            always = f" (it predicts everyone {'positive' if positive_rate else 'negative'})"
        return (f"accuracy {accuracy:.4f} is not above always predicting the majority class "
                f"({majority:.4f}){always}")  # fmt: skip
    if auc is not None and auc <= 0.5:
        return f"AUC {auc:.4f} ≤ 0.5: its scores rank no better than chance"
    return None


def _split_words(split: str) -> str:
    return {"test": "the test set", "val": "the validation set", "train": "the training set"}.get(
        split, split
    )


def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)
