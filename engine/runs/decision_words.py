"""Plain-language words about a choice of κ and I, for the decision record
(`engine.runs.decision_record`) and the pages that show a chosen model: what a family holds to κ
for the named groups and what I picks in each group (`meaning_sentences`), and what fairness
costs against the unconstrained reference (`cost_sentence`), each held-out value with its 95 %
interval (`Estimate`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from engine.fairness.families import family_entry
from engine.model_quality import HIGH, LOW
from engine.runs.describe import interval_words, percent_words
from engine.runs.frontier import SCORE_NAMES
from engine.runs.results import interval_text
from engine.verdict import SplitCheck

# what a family holds to κ, up to its bound, for the groups named by {groups}; a family not
# here is said by its quantity's name
_CLAUSES = {
    "pSP": "the shares of {groups} above any threshold differ by at most",
    "pDP": "the shares of {groups} given a positive decision differ by at most",
    "DP": "the shares of {groups} given a positive decision differ by at most",
    "EO": "among people with the same true outcome, the shares of {groups} given a positive "
    "decision (true- and false-positive rates) differ by at most",
    "EOpp": "among people whose true outcome is positive, the shares of {groups} given a "
    "positive decision (true-positive rates) differ by at most",
}


@dataclass(frozen=True)
class Estimate:
    """A held-out value with its 95 % interval (`low`, `high`: None where unknown)."""

    value: float
    low: float | None = None
    high: float | None = None

    @classmethod
    def of(cls, values: dict[str, float | None], metric: str) -> Estimate | None:
        """The estimate of `metric` among a split's stored metrics, None without one."""
        value = values.get(metric)
        if value is None or not math.isfinite(value):
            return None
        return cls(value, values.get(metric + LOW), values.get(metric + HIGH))

    @classmethod
    def of_check(cls, check: SplitCheck | None) -> Estimate | None:
        """The constrained value a verdict's split check holds, None without one."""
        if check is None or check.value is None:
            return None
        return cls(check.value, check.low, check.high)

    def words(self, named: bool = True) -> str:
        """ "0.833 (95 % interval 0.826–0.840)"; "0.833 (0.826–0.840)" unless `named`."""
        interval = interval_text(self.low, self.high)
        if not interval:
            return f"{self.value:.3f}"
        return f"{self.value:.3f} ({'95 % interval ' if named else ''}{interval})"


def fairness_clause(family: str, groups: Sequence[str], interval: tuple[float, float]) -> str:
    """What `family` holds to κ for `groups`, up to its bound, in words: "within each group's
    top 5 % to 30 % of scores, the shares of Female and Male above any threshold differ by at
    most" (the interval only for a family defined on one)."""
    entry = family_entry(family)
    named = groups_words(groups)
    clause = _CLAUSES.get(family, f"the {entry.quantity} between {{groups}} is at most")
    scope = f"within {interval_words(*interval)} of scores, " if entry.uses_interval else ""
    return scope + clause.format(groups=named)


def meaning_sentences(
    family: str | None, kappa: float | None, groups: Sequence[str], interval: tuple[float, float]
) -> list[str]:
    """What κ and I mean for these groups, as sentences."""
    if family is None or kappa is None:
        return [
            "No fairness constraint: neither κ nor I binds this model. It is shown beside "
            "constrained models, measured as they are, for reference."
        ]
    entry = family_entry(family)
    said, bound = [], f"{fairness_clause(family, groups, interval)} κ = {kappa:g}"
    if entry.uses_interval:
        alpha, beta = interval
        said.append(
            f"The interval I = {interval_label(interval)} picks, in each group "
            f"separately, the people whose scores rank between {percent_words(alpha)} "
            f"and {percent_words(beta)} from the top of their own group."
        )
        bound += (
            f", counted within that band of {percent_words(beta - alpha)} of each group: "
            f"on the whole group, by at most {percent_words(kappa * (beta - alpha))}"
        )
    said.append(sentence(bound))
    if entry.kappa_scale:
        said.append(sentence(entry.kappa_scale))
    return said


def cost_sentence(
    score: str,
    chosen: tuple[Estimate | None, Estimate | None],
    reference: tuple[Estimate | None, Estimate | None],
    clause: str,
) -> str:
    """The cost of fairness in one sentence: the chosen model's score and constrained value
    (each an `Estimate`, None where unknown) against the reference's, e.g. "accuracy 0.833 (95 %
    interval 0.826–0.840) instead of 0.852 (0.845–0.859), −1.9 points; within each group's top
    5 % to 30 % of scores, the shares of Female and Male above any threshold differ by at most
    0.041 (…) instead of 0.840 (…)"; `clause` is the family's (`fairness_clause`)."""
    parts = []
    (score_now, value_now), (score_then, value_then) = chosen, reference
    if score_now is not None and score_then is not None:
        points = 100 * (score_now.value - score_then.value)
        parts.append(
            f"{SCORE_NAMES[score]} {score_now.words()} instead of "
            f"{score_then.words(named=False)}, {points:+.1f} points".replace("-", "−")
        )
    if value_now is not None and value_then is not None:
        parts.append(f"{clause} {value_now.words()} instead of {value_then.words(named=False)}")
    return "; ".join(parts)


def interval_label(interval: tuple[float, float]) -> str:
    """I for a table cell: "[5 %, 30 %)"."""
    alpha, beta = interval
    return f"[{percent_words(alpha)}, {percent_words(beta)})"


def groups_words(groups: Sequence[str]) -> str:
    """ "Female and Male", "A, B and C"."""
    if len(groups) < 2:
        return "".join(groups)
    return f"{', '.join(groups[:-1])} and {groups[-1]}"


def sentence(text: str) -> str:
    text = text.strip()
    return f"{text[:1].upper()}{text[1:]}" + ("" if text.endswith(".") else ".")
