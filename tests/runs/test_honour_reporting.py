"""Wherever a run that honours κ is reported, its κ′ search is said: the spec in words, the HTML
report's verdict block (the search's sentence and a κ′ table), the frontier figure's subtitle;
and the "surrogate only" verdict reads the surrogate of the solve whose model the run reports."""

from __future__ import annotations

import dataclasses
import html

import pytest
from run_fixtures import make_spec

from engine.plots.frontier import frontier_figure
from engine.report import store_report
from engine.runs.describe import describe_spec
from engine.runs.frontier import frontier
from engine.runs.frontier_text import honour_words
from engine.runs.honour_search import honour_search
from engine.runs.results import run_results, run_verdict, solution_verdict
from engine.runs.submit import submit
from engine.runs.worker import execute_run
from engine.solvers.records import KAPPA_PRIME, SOLVE, IterationRecord, RecordKind, Solution
from engine.status import StopCode, StopReason
from engine.verdict import Label

KAPPA = 0.2


@pytest.fixture
def honoured_run(store, csv_spec) -> str:
    """A finished toy run that honours κ on train."""
    spec = dataclasses.replace(make_spec(csv_spec, kappa=KAPPA), honour="train")
    (run_id,) = submit([spec], store, start_runner=False)
    execute_run(str(store.home), run_id)
    return run_id


def test_the_spec_in_words_says_on_which_split_kappa_is_honoured(csv_spec):
    plain = make_spec(csv_spec, kappa=KAPPA)
    for split, words in (
        ("val", "held on the training data and honoured on validation ("),
        ("train", "held on the training data ("),
    ):
        honoured = dict(describe_spec(dataclasses.replace(plain, honour=split)))
        assert f"; κ {words}" in honoured["constraint"]
    assert "held on" not in dict(describe_spec(plain))["constraint"]


def test_the_report_gives_each_honoured_run_its_search_sentence_and_kappa_prime_table(
    store, csv_spec, honoured_run
):
    plain = make_spec(csv_spec, kappa=KAPPA, iterations=50)
    (plain_id,) = submit([plain], store, start_runner=False)
    execute_run(str(store.home), plain_id)
    page = store_report(store, [honoured_run, plain_id], "honoured")
    text = page.split("<body>")[1].split("<h2>Trajectories")[0]
    search = honour_search(store.records(honoured_run, kind=RecordKind.HONOUR))
    blocks = text.split("<div class='verdict")[1:]
    honoured_block, plain_block = blocks
    assert html.escape(search.sentence) in honoured_block
    assert "Holding κ on train" in honoured_block
    assert "<th>κ′</th>" in honoured_block and "<th>pSP (train)</th>" in honoured_block
    assert honoured_block.count("<td>◆</td>") == 1  # the reported solve, marked
    for row in search.rows:
        assert f"<td>{row.kappa_prime:.4g}</td>" in honoured_block
        assert f"<td>{row.value:.4f}</td>" in honoured_block
    assert "Holding κ" not in plain_block
    assert "κ held on the training data" in honoured_block  # its own settings say it
    assert "κ held on the training data" not in plain_block


def test_the_frontier_subtitle_says_where_kappa_was_honoured(store, honoured_run):
    results = run_results(store.run(honoured_run), store)
    subtitle = frontier_figure(frontier(results, metric="constraint", split="train"))
    assert honour_words("train") in subtitle.layout.title.subtitle.text.replace("<br>", " ")
    plain = [dataclasses.replace(r, honour=None) for r in results]
    assert "κ honoured" not in frontier_figure(frontier(plain)).layout.title.subtitle.text


# ---- the surrogate of the reported solve --------------------------------------------------


def _search_records(chosen: float, indexed: bool = True) -> list[IterationRecord]:
    """Two solves, κ′ = 0.2 then 0.1: the first's last surrogate is feasible (violation −0.01),
    the second's is not (+0.3); then the search's records with the solve at `chosen` reported.
    `indexed`: the surrogate records name their solve, as they do since solves have an index
    (before, only their κ′)."""
    surrogate = [(0.2, 0.0), (0.2, -0.01), (0.1, 0.5), (0.1, 0.3)]
    records = [
        IterationRecord(
            i,
            0.1 * i,
            "surrogate",
            objective=1.0,
            max_violation=violation,
            state={KAPPA_PRIME: kappa_prime}
            | ({SOLVE: float(kappa_prime == 0.1)} if indexed else {}),
        )
        for i, (kappa_prime, violation) in enumerate(surrogate)
    ]
    for i, kappa_prime in enumerate((0.2, 0.1)):
        state = {"split": "train", "chosen": "yes" if kappa_prime == chosen else "no"}
        records.append(
            IterationRecord(
                i,
                0.4,
                RecordKind.HONOUR,
                values={"kappa_prime": kappa_prime, "value": 0.25},
                state=state,
            )
        )
    return records


def _metrics() -> dict[str, dict[str, float | None]]:
    """Above κ = 0.2 on train; on test, an interval that cannot tell."""
    row = {"accuracy": 0.8, "majority": 0.6, "score_std": 1.0, "constraint": 0.25}
    test = row | {"constraint": 0.19, "constraint_low": 0.1, "constraint_high": 0.3}
    return {"train": row, "test": test}


@pytest.mark.parametrize("indexed", [True, False])
@pytest.mark.parametrize(("chosen", "violation"), [(0.2, -0.01), (0.1, 0.3)])
def test_the_last_surrogate_is_that_of_the_reported_solve(
    store, csv_spec, chosen, violation, indexed
):
    spec = dataclasses.replace(make_spec(csv_spec, kappa=KAPPA), honour="train")
    store.enqueue(spec.run_id, spec.to_dict())
    store.claim(spec.run_id, pid=1)
    records = _search_records(chosen, indexed)
    store.append_records(spec.run_id, [r.to_dict() for r in records], first_seq=0)
    store.finish(
        spec.run_id,
        StopReason(StopCode.CONVERGED, "converged"),
        iterations=4,
        seconds=0.4,
        metrics=_metrics(),
    )
    assert store.last_surrogate_violation(spec.run_id) == pytest.approx(violation)
    if not indexed:
        return  # a Solution is made by this version: its records name their solve
    solution = Solution(
        "idca",
        {},
        StopReason(StopCode.CONVERGED, "converged"),
        4,
        0.4,
        {},
        _metrics(),
        records,
        [],
        ("a", "b"),
        None,
        None,
    )
    assert solution.last_surrogate().max_violation == pytest.approx(violation)
    # feasible surrogate of the reported solve, exact train value above κ: "surrogate only"
    surrogate_only = violation <= 0.0
    stored = run_verdict(store, store.run(spec.run_id))
    here = solution_verdict(spec, solution)
    for verdict in (stored, here):
        assert (verdict.label is Label.SURROGATE_ONLY) == surrogate_only
        assert (verdict.label is Label.MISSES) == (not surrogate_only)


def test_a_run_without_a_search_reads_its_last_surrogate(store, csv_spec):
    spec = make_spec(csv_spec, kappa=KAPPA)
    store.enqueue(spec.run_id, spec.to_dict())
    store.claim(spec.run_id, pid=1)
    plain = [r for r in _search_records(0.2) if r.kind == "surrogate"]
    store.append_records(spec.run_id, [r.to_dict() for r in plain], first_seq=0)
    assert store.last_surrogate_violation(spec.run_id) == pytest.approx(0.3)
