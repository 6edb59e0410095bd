"""The verdict on a run: can its result be trusted and shown? (pure; no torch, no Streamlit)

A run's exact metrics say what its model does; the verdict says what that means for the user who
asked for "the constrained quantity ≤ κ". A value on a held-out split (validation, test) is a
sample estimate of the model's value on the population that split is drawn from, so it is
judged with its 95 % interval (`engine.fairness.intervals`, stored beside it as
"<metric>_low" / "<metric>_high"), in one of three states:

    meets κ          the whole interval is ≤ κ
    misses κ         the whole interval is > κ
    cannot tell      κ lies inside it: the split cannot tell at this size; the smallest κ it can
                     resolve ("<metric>_resolves": the interval's typical upper end for a model
                     whose groups do not differ) and about how many rows per group would
                     resolve the user's κ (the width shrinks as 1/√n) are said
On the training data the value is the quantity the solver was asked to bring to κ, on the very
rows it fitted, not an estimate of something else: it is compared with κ as it is.

One judgement per run, by this rule (the label):
1. no model (failed, cancelled, interrupted, or none yet): how the run stands;
2. degenerate on the reported split (test, else validation, else train): accuracy not above
   always predicting the majority class (unless the objective only ranks), AUC ≤ 0.5, a
   constant score, or for a regression R² ≤ 0: whatever its fairness, the model is not worth
   showing;
3. no constraint: the quantity every run reports, for reference;
4. misses κ when the reported held-out split's interval lies above κ;
5. otherwise, when the exact training value exceeds κ: "surrogate only" if the solver's
   surrogate rows held (≤ its tolerance ε: the surrogate approximates the indicator), else
   misses κ (on the training data);
6. otherwise the held-out state: meets κ, or cannot tell at this size (on the training data
   alone, when there is no held-out split: meets κ).
So "meets κ" says both that the model holds κ on the data it was fitted to and that held-out
data shows, at 95 %, that it holds on new data. Beside the label, flags: "not converged" (a
budget ended it), "diverged", and "near the majority class" (accuracy above the majority rate
but its interval reaches it: the split cannot tell the model from always predicting it), and
"likely leak" (a held-out AUC or accuracy of at least `LEAK_SCORE`: real outcomes are almost
never predicted that well, so a feature probably holds the answer; an accuracy that high counts
only when always predicting the majority class would score below it).
Every split gets its own check, and every finding is a sentence. A classifier whose scores take
few distinct values on the reported split gets a finding that says so (`few_scores`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from engine.model_quality import (
    HIGH,
    LOW,
    degenerate,
    few_scores,
    few_scores_words,
    finite_number,
    leak_finding,
    near_majority,
    split_words,
)
from engine.status import RunStatus

REPORTED_SPLITS = ("test", "val", "train")  # the first present is the one a headline speaks of
RESOLVES, ROWS = "_resolves", "_rows"  # a metric's interval names


class Level(StrEnum):
    OK = "ok"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class Label(StrEnum):
    MEETS = "meets κ"
    MISSES = "misses κ"
    CANNOT_TELL = "cannot tell at this size"
    SURROGATE_ONLY = "surrogate only"
    DEGENERATE = "degenerate"
    NEAR_MAJORITY = "near the majority class"
    LIKELY_LEAK = "likely leak"
    NOT_CONVERGED = "not converged"
    UNCONSTRAINED = "no constraint"
    DIVERGED = "diverged"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    QUEUED = "queued"
    RUNNING = "running"


class KappaState(StrEnum):
    """Where a split puts the constrained value against κ."""

    MEETS = "meets κ"
    MISSES = "misses κ"
    CANNOT_TELL = "cannot tell"


@dataclass(frozen=True)
class SplitCheck:
    """One split: the exact constrained value against κ and whether the model is degenerate;
    on a held-out split, the value's 95 % interval [`low`, `high`], the smallest κ the split
    resolves (`resolves`) and the rows of the smallest group (or cell) it was measured on
    (`rows`), each None where unknown."""

    split: str
    value: float | None
    kappa: float | None
    degenerate: str | None  # why, in words; None when it is not
    low: float | None = None
    high: float | None = None
    resolves: float | None = None
    rows: int | None = None

    @property
    def held_out(self) -> bool:
        return self.split != "train"

    @property
    def has_interval(self) -> bool:
        return self.held_out and self.low is not None and self.high is not None

    @property
    def excess(self) -> float | None:
        """value − κ (> 0: the value is above κ by this much)."""
        if self.value is None or self.kappa is None:
            return None
        return self.value - self.kappa

    @property
    def state(self) -> KappaState | None:
        """Meets, misses or cannot tell: by the interval on a held-out split that has one, by
        the value itself on the training data (or without an interval); None without κ or a
        value."""
        if self.value is None or self.kappa is None:
            return None
        if not self.has_interval:
            return KappaState.MEETS if self.value <= self.kappa else KappaState.MISSES
        if self.high <= self.kappa:
            return KappaState.MEETS
        if self.low > self.kappa:
            return KappaState.MISSES
        return KappaState.CANNOT_TELL

    @property
    def meets(self) -> bool | None:
        """True when the split shows the value ≤ κ, False when it shows it above; None when it
        cannot tell, or there is no κ or value."""
        state = self.state
        return None if state in (None, KappaState.CANNOT_TELL) else state is KappaState.MEETS

    def rows_for(self, kappa: float) -> int | None:
        """About how many rows per group (of the smallest cell) would resolve `kappa`: the
        interval's width shrinks as 1/√n."""
        if self.resolves is None or self.rows is None or kappa <= 0:
            return None
        return math.ceil(self.rows * (self.resolves / kappa) ** 2)

    def interval_words(self) -> str:
        """ "95 % interval 0.012–0.047", or "" without one."""
        return f"95 % interval {self.low:.3f}–{self.high:.3f}" if self.has_interval else ""

    def cell(self) -> str:
        """A table cell: "0.0410 ≤ 0.05 ✓", "0.0730 > 0.05 ✗ (+0.0230)" (train, or a split
        without an interval), "0.0383 [0.000, 0.085] ? 0.05" (a held-out split that cannot
        tell), or the value alone (no κ)."""
        if self.value is None:
            return "—"
        if self.kappa is None:
            return f"{self.value:.4f}"
        interval = f" [{self.low:.3f}, {self.high:.3f}]" if self.has_interval else ""
        state = self.state
        if state is KappaState.MEETS:
            return f"{self.value:.4f}{interval} ≤ {self.kappa:g} ✓"
        if state is KappaState.MISSES:
            by = "" if interval else f" (+{self.excess:.4f})"
            return f"{self.value:.4f}{interval} > {self.kappa:g} ✗{by}"
        return f"{self.value:.4f}{interval} ? {self.kappa:g}"


@dataclass(frozen=True)
class Verdict:
    """`label` and `level` for a badge, `flags` for secondary badges (not converged, diverged,
    near the majority class, likely leak), `findings` as sentences (the label's first), and one
    `SplitCheck` per split with metrics. `quantity` names the constrained value ("EO gap")."""

    label: Label
    level: Level
    findings: tuple[str, ...]
    splits: dict[str, SplitCheck]
    quantity: str
    kappa: float | None
    flags: tuple[Label, ...] = ()
    # how many leading findings are read at a glance: the label's, and when that one speaks of
    # the training data, what the held-out split says too (the rest are details)
    glance: int = 1

    @property
    def headline(self) -> str:
        return self.findings[0] if self.findings else str(self.label)

    @property
    def at_a_glance(self) -> tuple[str, ...]:
        return self.findings[: self.glance]

    @property
    def summary(self) -> str:
        """The label with its flags, for a table cell: "meets κ · not converged"."""
        return " · ".join(str(label) for label in (self.label, *self.flags))

    @property
    def reported(self) -> SplitCheck | None:
        """The check of the split the headline speaks of (test, else validation, else train)."""
        return next((self.splits[s] for s in REPORTED_SPLITS if s in self.splits), None)

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
            "splits": {
                s: {
                    "value": c.value,
                    "low": c.low,
                    "high": c.high,
                    "state": None if c.state is None else str(c.state),
                    "meets": c.meets,
                    "excess": c.excess,
                    "resolves": c.resolves,
                    "rows_for_kappa": None if c.kappa is None else c.rows_for(c.kappa),
                    "degenerate": c.degenerate,
                }
                for s, c in self.splits.items()
            },
        }


_SEVERITY = [Level.OK, Level.INFO, Level.WARNING, Level.ERROR]
_NO_MODEL = {
    RunStatus.FAILED: (Label.FAILED, Level.ERROR),
    RunStatus.CANCELLED: (Label.CANCELLED, Level.INFO),
    RunStatus.INTERRUPTED: (Label.INTERRUPTED, Level.ERROR),
    RunStatus.QUEUED: (Label.QUEUED, Level.INFO),
    RunStatus.RUNNING: (Label.RUNNING, Level.INFO),
}
Finding = tuple[Label, Level, str]


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
    classifier's) with, on held-out splits, the intervals of `engine.fairness.intervals`
    ("<metric>_low", "_high", "_resolves", "_rows"); `kappa` is None for a run without a
    constraint; `surrogate_violation` is the largest surrogate row of the reported iterate
    (the solver's own view) and `tolerance` the ε it is held to. `value_metric` is the metric
    that holds `quantity` ("constraint", or e.g. "psp" for a run without constraint,
    "mean_gap" for a regression's; None: none). `thresholded` is False for an objective that
    only ranks (paper 004's pairwise AUC loss is unchanged by a shift of every score), whose
    accuracy at the threshold says nothing.
    """
    status = RunStatus(status)
    splits = {
        split: _split_check(split, values, value_metric, kappa, thresholded)
        for split, values in metrics.items()
        if values
    }
    if status in _NO_MODEL or not splits:
        label, level = _NO_MODEL.get(status, (Label.FAILED, Level.ERROR))
        text = f"{label}: {reason}" if reason else str(label)
        return Verdict(label, level, (text,), splits, quantity, kappa)
    reported = next(splits[s] for s in REPORTED_SPLITS if s in splits)
    findings, glance = _fairness_findings(
        reported, splits.get("train"), quantity, surrogate_violation, tolerance
    )
    values = metrics[reported.split]
    distinct = finite_number(values.get("distinct_scores"))
    if few_scores(distinct):
        findings.append(
            (
                findings[0][0],
                Level.INFO,
                f"On {split_words(reported.split)}, {few_scores_words(distinct)}.",
            )
        )
    if reported.degenerate:
        glance += 1
        findings.insert(
            0,
            (
                Label.DEGENERATE,
                Level.ERROR,
                f"Degenerate on {split_words(reported.split)}: {reported.degenerate}.",
            ),
        )
    flags = _flags(status, reason, reported, values, thresholded)
    leak = leak_finding(metrics, thresholded)
    if leak:
        flags.append((Label.LIKELY_LEAK, Level.WARNING, leak))
    label, level, _ = findings[0]
    worst = max((flag[1] for flag in flags), key=_SEVERITY.index, default=level)
    if _SEVERITY.index(worst) > _SEVERITY.index(level):
        level = worst  # a met κ of a model that did not converge is not all clear
    return Verdict(
        label,
        level,
        tuple(f[2] for f in findings + flags),
        splits,
        quantity,
        kappa,
        tuple(f[0] for f in flags),
        glance,
    )


def _split_check(
    split: str,
    values: dict[str, float | None],
    value_metric: str | None,
    kappa: float | None,
    thresholded: bool,
) -> SplitCheck:
    """A split's check from its metrics, with the value's interval where they hold one."""
    if value_metric is None:
        return SplitCheck(split, None, kappa, degenerate(values, thresholded))
    rows = finite_number(values.get(value_metric + ROWS))
    return SplitCheck(
        split,
        finite_number(values.get(value_metric)),
        kappa,
        degenerate(values, thresholded),
        low=finite_number(values.get(value_metric + LOW)),
        high=finite_number(values.get(value_metric + HIGH)),
        resolves=finite_number(values.get(value_metric + RESOLVES)),
        rows=None if rows is None else int(rows),
    )


def _fairness_findings(
    reported: SplitCheck,
    train: SplitCheck | None,
    quantity: str,
    surrogate_violation: float | None,
    tolerance: float,
) -> tuple[list[Finding], int]:
    """The label's finding first (rules 3–6 of the module's text), then what the other splits
    say; and how many of them are read at a glance: the label's, and when that one speaks of
    the training data, what the held-out split says of κ too."""
    where = split_words(reported.split)
    if reported.kappa is None:
        value = "—" if reported.value is None else f"{reported.value:.4f}"
        interval = f" ({reported.interval_words()})" if reported.has_interval else ""
        return [
            (
                Label.UNCONSTRAINED,
                Level.INFO,
                f"No fairness constraint; {quantity} on {where} is {value}{interval}.",
            )
        ], 1
    if reported.value is None:
        return [
            (
                Label.MISSES,
                Level.WARNING,
                f"{quantity} could not be computed on {where}, so κ cannot be checked.",
            )
        ], 1
    held_out = reported if reported.held_out else None
    training = _training_finding(train, quantity, surrogate_violation, tolerance)
    # a surrogate that holds while the exact value does not is explained after the findings
    why = (
        [(Label.SURROGATE_ONLY, Level.INFO, SURROGATE_WORDS)]
        if training and training[0] is Label.SURROGATE_ONLY
        else []
    )
    if held_out is not None and held_out.state is KappaState.MISSES:
        findings = _held_out_findings(held_out, quantity)
        return findings + ([training] if training else []) + why, 1
    if train is not None and train.meets is False:
        first = (training[0], Level.WARNING, training[2])
        if held_out is None:
            return [first, *why], 1
        return [first, *_held_out_findings(held_out, quantity, Level.INFO), *why], 2
    if held_out is None:
        return [
            (
                Label.MEETS,
                Level.OK,
                f"Meets κ on the training data: {quantity} = {reported.value:.4f} ≤ κ = "
                f"{reported.kappa:g}.",
            )
        ], 1
    return _held_out_findings(held_out, quantity) + ([training] if training else []), 1


SURROGATE_WORDS = (
    "The surrogate approximates the exact indicator; holding κ on the training "
    "data refines it until the exact value meets κ."
)


def _held_out_findings(
    check: SplitCheck, quantity: str, level: Level | None = None
) -> list[Finding]:
    """What a held-out split says of κ, then, when it cannot tell, what it would take to: the
    first a headline short enough to read at a glance, the second its detail."""
    finding = _held_out_finding(check, quantity, level)
    resolution = _resolution_words(check, quantity) if finding[0] is Label.CANNOT_TELL else ""
    return [finding] + ([(finding[0], Level.INFO, resolution)] if resolution else [])


def _held_out_finding(check: SplitCheck, quantity: str, level: Level | None = None) -> Finding:
    """What a held-out split says of κ, in one of its three states."""
    where, kappa, state = split_words(check.split), check.kappa, check.state
    interval = f", {check.interval_words()}," if check.has_interval else ""
    value = f"{quantity} = {check.value:.4f}{interval}"
    if state is KappaState.MEETS:
        return (
            Label.MEETS,
            level or Level.OK,
            f"Meets κ on {where}: {value} {'all ' if interval else ''}≤ κ = {kappa:g}.",
        )
    if state is KappaState.MISSES:
        by = "" if interval else f", by {check.excess:.4f}"
        return (
            Label.MISSES,
            level or Level.WARNING,
            f"Misses κ on {where}: {value} {'all ' if interval else ''}> κ = {kappa:g}{by}.",
        )
    return (
        Label.CANNOT_TELL,
        level or Level.INFO,
        f"Cannot tell at this size: on {where} {value} which contains κ = {kappa:g}.",
    )


def _resolution_words(check: SplitCheck, quantity: str) -> str:
    """ "The test set resolves pSP down to about 0.085; about 28,000 rows per group would
    resolve κ = 0.05.", or "" when the split's resolution is unknown."""
    if check.resolves is None:
        return ""
    where = split_words(check.split)
    text = f"{where[0].upper()}{where[1:]} resolves {quantity} down to about {check.resolves:.3f}"
    needed = check.rows_for(check.kappa)
    if needed is not None and check.kappa < check.resolves:
        text += f"; about {_rounded(needed):,} rows per group would resolve κ = {check.kappa:g}"
    return text + "."


def _rounded(count: int) -> int:
    """A count to two significant figures ("about 17,000 rows", not "17,165")."""
    return int(float(f"{count:.2g}"))


def _training_finding(
    train: SplitCheck | None, quantity: str, surrogate_violation: float | None, tolerance: float
) -> Finding | None:
    """What the exact training value says: held within κ, above it with the surrogate
    feasible ("surrogate only"), or above it."""
    if train is None or train.value is None or train.kappa is None:
        return None
    if train.meets:
        return (
            Label.MEETS,
            Level.INFO,
            f"Holds κ on the training data: {quantity} = {train.value:.4f} ≤ κ.",
        )
    if surrogate_violation is not None and surrogate_violation <= tolerance:
        return (
            Label.SURROGATE_ONLY,
            Level.INFO,
            f"Surrogate feasible but exact infeasible: surrogate rows "
            f"{surrogate_violation:+.4f} ≤ ε = {tolerance:g}, exact train {quantity} "
            f"{train.value:.4f} > κ = {train.kappa:g}.",
        )
    return (
        Label.MISSES,
        Level.INFO,
        f"Misses κ on the training data: {quantity} = {train.value:.4f} > κ = {train.kappa:g}.",
    )


def _flags(
    status: RunStatus,
    reason: str,
    reported: SplitCheck,
    values: dict[str, float | None],
    thresholded: bool,
) -> list[Finding]:
    """The flags beside the label: how the run ended, and a model the split cannot tell from
    always predicting the majority class."""
    flags = []
    if status is RunStatus.DIVERGED:
        flags.append(
            (
                Label.DIVERGED,
                Level.ERROR,
                f"Diverged ({reason or 'a non-finite value'}): the last finite iterate is "
                "reported; smaller step sizes (the solver's options) usually prevent "
                "it.",
            )
        )
    elif status is RunStatus.BUDGET:
        flags.append(
            (
                Label.NOT_CONVERGED,
                Level.WARNING,
                f"Not converged ({reason or 'a budget ended it'}): a longer run may give "
                "another model.",
            )
        )
    near = near_majority(values, thresholded) if not reported.degenerate else None
    if near:
        flags.append(
            (Label.NEAR_MAJORITY, Level.WARNING, f"On {split_words(reported.split)}, {near}.")
        )
    return flags


def majority_finding(
    values: dict[str, float | None], thresholded: bool = True
) -> tuple[Label, str] | None:
    """Whether a split's metrics `values` show a model no better than a constant one
    (`Label.DEGENERATE`) or one the split cannot tell from always predicting the majority class
    (`Label.NEAR_MAJORITY`), with why in words; None for neither."""
    worthless = degenerate(values, thresholded)
    if worthless:
        return Label.DEGENERATE, worthless
    near = near_majority(values, thresholded)
    return (Label.NEAR_MAJORITY, near) if near else None
