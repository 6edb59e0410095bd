"""The decision record: one page, in plain language, for a reader who was not at the screen (a
stakeholder, an auditor), saying which model was chosen and what that means.

In order: the data and its groups, what κ and I ask of these groups, the chosen model's
verdict with its uncertainty, what fairness costs against the unconstrained reference of the
same data, the alternatives that were in the store, the limits of what the data can tell, the
note of whoever chose, and the model file's checksum. The verdict and its sentences are
`engine.verdict`'s, the settings `engine.runs.describe`'s, intervals `interval_text`'s.

The page is self-contained (inline CSS; no script, font or image from elsewhere), so it opens
offline; every string that comes from a person or a data file (the note, group and column names,
file names) is escaped.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterable, Sequence

from engine import __version__
from engine.data.prepare import PrepareOptions
from engine.data.prepared import LABEL_STATISTIC_WORDS, SPLITS, group_table, summary_statistic
from engine.data.sources import load_prepared
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import family_entry
from engine.model_quality import split_words
from engine.runs.decision import Decision
from engine.runs.decision_words import (
    Estimate,
    cost_sentence,
    fairness_clause,
    interval_label,
    meaning_sentences,
    sentence,
)
from engine.runs.describe import describe_spec
from engine.runs.frontier import SCORE_NAMES
from engine.runs.results import frontier_axes, run_verdict
from engine.runs.spec import RunSpec
from engine.runs.store import RunRow, Store
from engine.verdict import KappaState, Label, SplitCheck, Verdict

MAX_ALTERNATIVES = 20  # rows of the alternatives table; the rest are counted below it
_SPLIT_TITLES = {"train": "train", "val": "validation", "test": "test"}
# the three places a held-out interval can put the constrained value against κ
_STATES = (
    (
        KappaState.MEETS,
        Label.MEETS,
        "the whole 95 % interval is at most κ: the model holds κ on new data like these rows",
    ),
    (
        KappaState.MISSES,
        Label.MISSES,
        "the whole 95 % interval lies above κ: the model does not hold κ on such data",
    ),
    (
        KappaState.CANNOT_TELL,
        Label.CANNOT_TELL,
        "κ lies inside the 95 % interval: the rows are too few to say either way",
    ),
)
_STATE_LABELS = {state: label for state, label, _ in _STATES}
_LIMITING = frozenset({Label.MISSES, Label.DEGENERATE, Label.SURROGATE_ONLY, Label.CANNOT_TELL})


def decision_record(store: Store, decision: Decision) -> str:
    """The HTML page of `decision`, from its run as the store holds it now."""
    row = store.run(decision.run_id)
    summary = load_prepared(row.spec.data, row.spec.prepare).summary()
    verdict = run_verdict(store, row)
    groups = [group["name"] for group in summary["groups"]]
    reference = reference_run(store, row)
    sections = [
        ("The data and its groups", _data_section(row, summary)),
        ("What κ and I ask of these groups", _meaning_section(row, groups)),
        ("The chosen model's verdict", _verdict_section(verdict)),
        ("What fairness costs", _cost_section(store, row, reference, groups)),
        ("Alternatives considered", _alternatives_section(store, row, reference)),
        ("Limits", _limits_section(store, row, summary, verdict)),
        ("Why this model", _note_section(decision)),
        ("The model file", _model_section(row, decision)),
    ]
    title = f"Decision record: {summary['dataset']}, model of run {row.id[:8]}"
    body = [
        f"<h1>{_text(title)}</h1>",
        f"<p class='meta'>Chosen {_text(_when(decision))} · verdict then: "
        f"{_text(decision.verdict)} · written by FairFront {_text(__version__)}</p>",
    ]
    body += [
        f"<section><h2>{n}. {_text(name)}</h2>{content}</section>"
        for n, (name, content) in enumerate(sections, start=1)
    ]
    return _PAGE.format(title=_text(title), body="\n".join(body))


def reference_run(store: Store, row: RunRow) -> RunRow | None:
    """The newest run without a constraint, ended with a model, on the same data, split, model
    and objective as the constrained run `row` (and on its interval, for a family defined on
    one): the reference its cost of fairness is measured against. None when the store has
    none, or `row` has no constraint."""
    if row.spec.family is None:
        return None
    by_interval = family_entry(row.spec.family).uses_interval

    def problem(spec: RunSpec) -> tuple:
        return spec.data, spec.prepare, spec.model, spec.objective

    for other in store.runs(newest_first=True):
        if (
            other.has_model
            and other.spec.constraint is None
            and problem(other.spec) == problem(row.spec)
            and (not by_interval or other.spec.constraint_interval == row.spec.constraint_interval)
        ):
            return other
    return None


def alternative_runs(store: Store, row: RunRow) -> list[RunRow]:
    """The runs that ended with a model among the run `row`'s sweeps and those on the same
    data and grouping (any split seed) under its constraint family or none, `row` among them:
    its interval first, then by interval, solver, κ (none first) and seed."""
    mates = _sweep_mates(store, row.id)

    def grouping(spec: RunSpec) -> PrepareOptions:
        return dataclasses.replace(spec.prepare, seed=0)  # any split seed

    def alike(other: RunRow) -> bool:
        return (
            other.spec.data == row.spec.data
            and grouping(other.spec) == grouping(row.spec)
            and other.spec.family in (row.spec.family, None)
        )

    chosen = row.spec.constraint_interval

    def order(other: RunRow) -> tuple:
        spec = other.spec
        interval, kappa = spec.constraint_interval, spec.kappa
        return (
            interval != chosen,
            interval,
            spec.solver,
            kappa is not None,
            kappa or 0.0,
            spec.seed,
        )

    return sorted(
        (r for r in store.runs() if r.has_model and (r.id in mates or alike(r))), key=order
    )


# ---- sections ------------------------------------------------------------------------------


def _data_section(row: RunRow, summary: dict) -> str:
    settings = dict(describe_spec(row.spec))
    rows = summary["rows"]
    said = [
        f"Data: {settings['data']}. The model predicts {summary['label']}.",
        f"Protected groups: {settings['protected groups']}.",
        f"Split: {settings['split']}: {rows['train']:,} rows to train on, {rows['val']:,} "
        f"to validate and {rows['test']:,} held out to test.",
    ]
    said += [f"Note: {note}." for note in summary["notes"]]
    said += [sentence(warning) for warning in summary["warnings"]]
    statistic = summary_statistic(summary)
    words = LABEL_STATISTIC_WORDS[statistic]
    head = [
        "group",
        *(f"{_SPLIT_TITLES[s]} rows" for s in SPLITS),
        *(f"{_SPLIT_TITLES[s]} {words}" for s in SPLITS),
    ]
    table = [
        [
            entry["group"],
            *(f"{entry[f'{s} size']:,}" for s in SPLITS),
            *(_share(entry[f"{s} {words}"], statistic == "label_rate") for s in SPLITS),
        ]
        for entry in group_table(summary)
    ]
    return _paragraphs(said) + _table(head, table)


def _meaning_section(row: RunRow, groups: Sequence[str]) -> str:
    spec = row.spec
    said = meaning_sentences(spec.family, spec.kappa, groups, spec.constraint_interval)
    technical = dict(describe_spec(row.spec))["constraint"]
    return _paragraphs(said) + f"<p class='meta'>As set: {_text(technical)}.</p>"


def _verdict_section(verdict: Verdict) -> str:
    check = verdict.reported
    badge = f"<span class='badge {_text(str(verdict.level))}'>{_text(verdict.summary)}</span>"
    if check is None or check.value is None or check.kappa is None or not check.held_out:
        return f"<p>{badge} {_text(verdict.headline)}</p>"
    where = split_words(check.split)
    measured = f"On {where}, {verdict.quantity} is {check.value:.4f}"
    measured += f", {check.interval_words()}" if check.has_interval else ""
    parts = [f"<p>{badge} {_text(measured)}; κ = {check.kappa:g}.</p>"]
    if verdict.label is not _STATE_LABELS.get(check.state):  # the headline speaks of another split
        parts.append(_paragraphs([verdict.headline]))
    if not check.has_interval:
        return "".join(parts)
    items = []
    for state, label, meaning in _STATES:
        current = state is check.state
        opening = "<li class='current'>" if current else "<li>"
        mark = " ← this model" if current else ""
        items.append(f"{opening}<b>{_text(str(label))}</b>: {_text(meaning + mark)}</li>")
    parts.append(
        f"<p>A held-out value is an estimate; against κ its 95 % interval puts the "
        f"model in one of three states:</p><ul class='states'>{''.join(items)}</ul>"
    )
    parts.append(_resolution_table(check, where, verdict.quantity))
    return "".join(parts)


def _resolution_table(check: SplitCheck, where: str, quantity: str) -> str:
    """What the held-out split can tell of the constrained value, as numbers."""
    if check.resolves is None:
        return ""
    needed = check.rows_for(check.kappa)
    if needed is None or check.rows is None:
        resolve = "—"
    elif needed <= check.rows:
        resolve = f"already resolved: κ = {check.kappa:g} is above what {where} resolves"
    else:
        resolve = f"about {needed:,}"
    rows = [
        [f"smallest {quantity} {where} tells from zero", f"about {check.resolves:.3f}"],
        [
            f"rows of the smallest group in {where}",
            "—" if check.rows is None else f"{check.rows:,}",
        ],
        [f"rows per group that would resolve κ = {check.kappa:g}", resolve],
    ]
    return f"<p>What {_text(where)} can tell:</p>{_table(None, rows)}"


def _cost_section(
    store: Store, row: RunRow, reference: RunRow | None, groups: Sequence[str]
) -> str:
    if row.spec.family is None:
        return _paragraphs(
            [
                "This model was trained without a fairness constraint: it is the "
                "reference that constrained models are measured against."
            ]
        )
    if reference is None:
        return _paragraphs(
            [
                "The store holds no model trained without the constraint on the "
                "same data, split, model and interval, so what fairness costs here "
                "cannot be said (a sweep with the unconstrained solver gives one)."
            ]
        )
    sentence = run_cost(store, row, reference, groups)
    if not sentence:
        return _paragraphs(
            [f"The reference, run {reference.id[:8]}, lacks the test metrics to compare with."]
        )
    return _paragraphs(
        [
            f"Against the same model trained without the constraint (run "
            f"{reference.id[:8]}), on the test set: {sentence}."
        ]
    )


def run_cost(store: Store, row: RunRow, reference: RunRow, groups: Sequence[str]) -> str:
    """The cost of fairness of the constrained run `row` against its `reference`
    (`reference_run`) on the test set, in one sentence (`cost_sentence`); "" when either lacks
    the metrics."""
    spec = row.spec
    score, _ = frontier_axes([spec])
    chosen, then = _outcome(store, row, score), _outcome(store, reference, score, spec.constraint)
    clause = fairness_clause(spec.family, groups, spec.constraint_interval)
    return cost_sentence(score, chosen, then, clause)


def _alternatives_section(store: Store, row: RunRow, reference: RunRow | None) -> str:
    runs = alternative_runs(store, row)
    if len(runs) < 2:
        return _paragraphs(
            ["No other model on this data and constraint is in the store: none was compared."]
        )
    first = {row.id} | ({reference.id} if reference is not None else set())
    shown = [r for r in runs if r.id in first] + [r for r in runs if r.id not in first]
    shown = sorted(shown[:MAX_ALTERNATIVES], key=runs.index)
    score, _ = frontier_axes([row.spec])
    view = row.spec.constraint
    quantity = run_verdict(store, row).quantity
    head = [
        "",
        "solver",
        "κ",
        "I",
        "seed",
        f"test {SCORE_NAMES[score]}",
        f"test {quantity}",
        "verdict",
    ]
    table = []
    for other in shown:
        verdict = run_verdict(store, other, view)
        score_now, value = _outcome(store, other, score, view)
        kappa = other.spec.kappa
        mark = (
            "chosen"
            if other.id == row.id
            else "reference"
            if reference is not None and other.id == reference.id
            else ""
        )
        table.append(
            [
                mark,
                other.spec.solver,
                "none" if kappa is None else f"{kappa:g}",
                interval_label(other.spec.constraint_interval),
                str(other.spec.seed),
                _estimate(score_now),
                _estimate(value),
                verdict.summary,
            ]
        )
    said = [
        "The models on the same data and groups under the same kind of constraint, or "
        "none, that the store held when this record was written; each number with its "
        "95 % interval on the test set."
    ]
    if len(runs) > len(shown):
        said.append(
            f"{len(runs) - len(shown)} more are in the store: fairfront runs list shows them."
        )
    return _paragraphs(said) + _table(head, table, marked={0}, css="alternatives")


def _limits_section(store: Store, row: RunRow, summary: dict, verdict: Verdict) -> str:
    check = verdict.reported
    said = []
    where = "the training set" if check is None else split_words(check.split)
    if check is not None and check.held_out:
        sizes = {group["name"]: group[check.split]["size"] for group in summary["groups"]}
        smallest = min(sizes, key=sizes.get)
        said.append(
            f"Every held-out number is an estimate from {where}: "
            f"{summary['rows'][check.split]:,} rows, {sizes[smallest]:,} of them in its "
            f"smallest group, {smallest}."
        )
        if check.resolves is not None and check.kappa is not None and check.kappa < check.resolves:
            said.append(
                f"At this size {where} tells {verdict.quantity} from zero only above "
                f"about {check.resolves:.3f}, more than κ = {check.kappa:g}: no model can "
                "be shown to meet κ on it."
            )
    values = {} if check is None else store.metrics(row.id).get(check.split, {})
    accuracy, majority = values.get("accuracy"), values.get("majority")
    if row.spec.thresholded and accuracy is not None and majority is not None:
        said.append(
            f"On {where}, always predicting the most common outcome is right for "
            f"{majority:.1%} of the rows; this model for {accuracy:.1%}."
        )
    limiting = verdict.label in _LIMITING
    said += list(verdict.findings if limiting else verdict.findings[1:])
    return _paragraphs(said, css=str(verdict.level) if limiting or verdict.flags else "")


def _note_section(decision: Decision) -> str:
    return (
        f"<blockquote class='note'>{_text(decision.note)}</blockquote>"
        f"<p class='meta'>Chosen {_text(_when(decision))}.</p>"
    )


def _model_section(row: RunRow, decision: Decision) -> str:
    settings = dict(describe_spec(row.spec))
    rows = [
        ["run", row.id],
        *(
            [name, settings[name]]
            for name in ("model", "objective", "solver", "solver options", "budget")
        ),
        ["how it ended", f"{row.status}: {row.reason}" if row.reason else row.status],
        ["model file SHA-256", decision.checksum],
    ]
    command = f"fairfront runs export-model {row.id} model.npz"
    return (
        _table(None, rows, marked={0})
        + f"<p><code>{_text(command)}</code> writes the model file. The file carries this "
        "checksum over its contents, and FairFront refuses a file whose contents do not "
        "match it: the model put to use can be checked to be the one chosen here.</p>"
    )


# ---- helpers -------------------------------------------------------------------------------


def _outcome(
    store: Store, row: RunRow, score: str, view: ConstraintSpec | None = None
) -> tuple[Estimate | None, Estimate | None]:
    """A run's test score and constrained value (for a run without a constraint, `view`'s
    quantity), each with its interval."""
    verdict = run_verdict(store, row, view)
    return (
        Estimate.of(store.metrics(row.id).get("test", {}), score),
        Estimate.of_check(verdict.check("test")),
    )


def _sweep_mates(store: Store, run_id: str) -> set[str]:
    """The runs of every sweep that run `run_id` is in."""
    mates: set[str] = set()
    for sweep in store.sweeps():
        members = {r.id for r in store.runs(sweep_id=sweep["id"])}
        if run_id in members:
            mates |= members
    return mates


def _estimate(estimate: Estimate | None) -> str:
    return "—" if estimate is None else estimate.words(named=False)


def _share(value: float | None, rate: bool) -> str:
    if value is None:
        return "—"
    return f"{value:.1%}" if rate else f"{value:.4g}"


def _when(decision: Decision) -> str:
    return f"{decision.made.astimezone():%Y-%m-%d %H:%M %Z}".strip()


def _text(value: str) -> str:
    return html.escape(value, quote=True)


def _paragraphs(sentences: Iterable[str], css: str = "") -> str:
    body = "".join(f"<p>{_text(s)}</p>" for s in sentences)
    return f"<div class='box {_text(css)}'>{body}</div>" if css else body


def _table(
    head: Sequence[str] | None,
    rows: Sequence[Sequence[str]],
    marked: Iterable[int] = (),
    css: str = "",
) -> str:
    """A table of text cells under the titles `head` (none if None), of class `css`; the
    columns in `marked` in bold."""
    bold = set(marked)
    titles = "" if head is None else "".join(f"<th>{_text(h)}</th>" for h in head)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{'<b>' if c in bold else ''}{_text(v)}{'</b>' if c in bold else ''}</td>"
            for c, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    thead = f"<thead><tr>{titles}</tr></thead>" if titles else ""
    opening = f"<table class='{css}'>" if css else "<table>"
    return f"{opening}{thead}<tbody>{body}</tbody></table>"


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 860px; padding: 0 1rem; color: #222; line-height: 1.45; }}
h1 {{ font-size: 1.5rem; margin-bottom: 0.2rem; }}
h2 {{ font-size: 1.1rem; margin: 1.4rem 0 0.4rem; border-bottom: 1px solid #ddd; }}
p {{ margin: 0.35rem 0; }}
.meta {{ color: #666; font-size: 0.9rem; }}
code {{ font-size: 0.9em; background: #f6f8fa; padding: 0 0.2rem; }}
table {{ border-collapse: collapse; margin: 0.5rem 0; font-size: 0.88rem; }}
th, td {{ border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: left;
          vertical-align: top; }}
th {{ background: #f4f4f4; }}
.alternatives td:not(:last-child) {{ white-space: nowrap; }}
.badge {{ font-size: 0.85rem; padding: 0.1rem 0.55rem; border-radius: 0.6rem; color: #fff;
          background: #888; white-space: nowrap; }}
.badge.ok {{ background: #1a7f37; }} .badge.info {{ background: #0969da; }}
.badge.warning {{ background: #9a6700; }} .badge.error {{ background: #cf222e; }}
.states li {{ color: #666; }} .states li.current {{ color: #222; }}
.box {{ border-left: 5px solid #888; padding: 0.2rem 0.8rem; }}
.box.warning {{ border-color: #9a6700; }} .box.error {{ border-color: #cf222e; }}
.box.info {{ border-color: #0969da; }} .box.ok {{ border-color: #1a7f37; }}
.note {{ white-space: pre-wrap; margin: 0.4rem 0; padding: 0.5rem 0.8rem; background: #f6f8fa;
         border-left: 5px solid #0969da; }}
@media print {{ body {{ margin: 0; max-width: none; }} h2 {{ break-after: avoid; }} }}
</style></head><body>
{body}
</body></html>
"""
