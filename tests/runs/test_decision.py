"""Decisions: stored and listed; the decision record says what the run is (κ, I, verdict, the
intervals, the groups, the cost against the reference, the limits), escapes what people and data
files wrote, loads nothing from elsewhere and names the checksum of the model file that the
export writes; `decide` and `runs decisions` on the command line."""

from __future__ import annotations

import datetime
import html
import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from run_fixtures import INTERVAL, make_spec
from toy_tables import write_toy_csv

from engine.cli import main
from engine.data.sources import load_prepared
from engine.errors import UserError
from engine.fairness.families import FAMILIES
from engine.model_file import DOCUMENT
from engine.runs import Store
from engine.runs.decision import Decision, add_decision, decide, decisions
from engine.runs.decision_record import decision_record
from engine.runs.decision_words import interval_label, meaning_sentences
from engine.runs.results import interval_text, run_verdict
from engine.runs.worker import execute_run
from engine.status import StopReason
from engine.verdict import Label

NOTE = 'Ana <credit risk> & Bo: κ = 0.1 keeps approvals "fair" within the band'
GROUPS = {"a": "Women & <girls>", "b": "Men"}  # names a page must escape
WHEN = datetime.datetime(2026, 3, 1, 9, 30, tzinfo=datetime.UTC)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> dict[str, str]:
    """A store holding, on the toy table (its groups renamed): the IDCA run to choose (κ = 0.1),
    its unconstrained reference, an IDCA run at κ = 0.2 and one that failed (κ = 0.01: its rank
    band holds no sample); by role, the run ids and the store's home."""
    folder = tmp_path_factory.mktemp("decision")
    data = write_toy_csv(folder)
    frame = pd.read_csv(data.path)
    frame.assign(g=frame["g"].map(GROUPS)).to_csv(data.path, index=False)
    store = Store(folder / "home")
    specs = {
        "chosen": make_spec(data, kappa=0.1, iterations=30),
        "reference": make_spec(data, "unconstrained", iterations=20),
        "looser": make_spec(data, kappa=0.2, iterations=30),
        "failed": make_spec(data, kappa=0.01, iterations=5),
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRFRONT_CACHE", str(folder / "cache"))
        for spec in specs.values():
            store.enqueue(spec.run_id, spec.to_dict())
            execute_run(str(store.home), spec.run_id)
    assert store.run(specs["failed"].run_id).status == "failed"
    assert all(store.run(specs[r].run_id).has_model for r in ("chosen", "reference", "looser"))
    return {"home": str(store.home)} | {role: spec.run_id for role, spec in specs.items()}


@pytest.fixture
def runs(finished, tmp_path) -> tuple[Store, dict[str, str]]:
    """A copy of the finished store, for one test to change."""
    home = tmp_path / "home"
    shutil.copytree(finished["home"], home)
    return Store(home), finished


def section(page: str, title: str) -> str:
    """The HTML of the record's section named `title`."""
    return page.split(f". {html.escape(title)}</h2>")[1].split("<h2>")[0]


def words(fragment: str) -> str:
    """The text of an HTML fragment, tags dropped and entities read."""
    return html.unescape(re.sub(r"<[^>]+>", " ", fragment))


def file_checksum(path) -> str:
    """The checksum a model file's document carries, read from the archive itself."""
    with np.load(path, allow_pickle=False) as archive:
        return json.loads(archive[DOCUMENT].tobytes().decode())["checksum"]


def test_a_decision_is_stored_and_listed_newest_first(runs):
    store, ids = runs
    first = decide(store, ids["chosen"][:6], NOTE, made=WHEN)
    later = decide(store, ids["looser"], "the looser one", made=WHEN + datetime.timedelta(hours=1))
    add_decision(store, first)
    add_decision(store, later)
    assert first.run_id == ids["chosen"] and first.family == "pSP" and first.kappa == 0.1
    assert first.interval == INTERVAL and first.note == NOTE
    assert first.verdict == run_verdict(store, store.run(ids["chosen"])).summary
    assert decisions(store) == [later, first]
    assert decisions(store, ids["chosen"]) == [first]
    assert decisions(Store(store.home), ids["reference"]) == []


def test_a_decision_needs_a_note_and_a_finished_run_with_a_model(runs):
    store, ids = runs
    with pytest.raises(UserError, match="needs a note"):
        decide(store, ids["chosen"], "  \n ")
    with pytest.raises(UserError, match="is failed: it has no model"):
        decide(store, ids["failed"], NOTE)
    queued = make_spec(store.run(ids["chosen"]).spec.data, seed=3)
    store.enqueue(queued.run_id, queued.to_dict())
    with pytest.raises(UserError, match="still queued"):
        decide(store, queued.run_id, NOTE)
    with pytest.raises(UserError, match="no run"):
        decide(store, "ffffffffffff", NOTE)
    assert decisions(store) == []


def test_the_record_names_the_checksum_of_the_model_file_that_export_writes(runs, tmp_path):
    store, ids = runs
    decision = decide(store, ids["chosen"], NOTE)
    model = tmp_path / "model.npz"
    assert main(["runs", "export-model", ids["chosen"], str(model), "--home", str(store.home)]) == 0
    assert decision.checksum == file_checksum(model)
    model_section = section(decision_record(store, decision), "The model file")
    assert decision.checksum in model_section


def test_the_record_says_what_the_run_is(runs):
    store, ids = runs
    decision = decide(store, ids["chosen"], NOTE, made=WHEN)
    page = decision_record(store, decision)
    row = store.run(ids["chosen"])
    verdict, test = run_verdict(store, row), store.metrics(row.id)["test"]
    reference = store.metrics(ids["reference"])["test"]
    # the data: each group's rows in each split, its name escaped
    prepared = load_prepared(row.spec.data, row.spec.prepare)
    data = section(page, "The data and its groups")
    for split in ("train", "val", "test"):
        for name, count in prepared.group_sizes(split).items():
            assert f"<td>{html.escape(name)}</td>" in data and f"<td>{count:,}</td>" in data
    assert "<girls>" not in page and html.escape(GROUPS["a"]) in page
    # κ and I in words, for these groups
    meaning = words(section(page, "What κ and I ask of these groups"))
    assert "κ = 0.1" in meaning and interval_label(INTERVAL) in meaning
    assert " and ".join(prepared.group_names) in meaning and len(prepared.group_names) == 2
    # the verdict: its label, the held-out value with its interval, the state it is in
    said = words(section(page, "The chosen model's verdict"))
    assert verdict.summary in said and str(verdict.label) in said
    assert interval_text(test["constraint_low"], test["constraint_high"]) in said
    current = re.search(r"<li class='current'><b>([^<]+)</b>", page)
    # the state the held-out interval puts the model in is the one marked
    marked = Label[verdict.reported.state.name]
    assert current is not None and current.group(1) == html.escape(str(marked))
    # the cost against the reference: both accuracies and both values, with their intervals
    cost = words(section(page, "What fairness costs"))
    assert ids["reference"][:8] in cost
    for values, metric in (
        (test, "accuracy"),
        (reference, "accuracy"),
        (test, "constraint"),
        (reference, "psp"),
    ):
        assert f"{values[metric]:.3f}" in cost
        assert interval_text(values[f"{metric}_low"], values[f"{metric}_high"]) in cost
    points = 100 * (test["accuracy"] - reference["accuracy"])
    assert f"{points:+.1f} points".replace("-", "−") in cost
    # the alternatives: every run with a model, the chosen and the reference marked
    alternatives = section(page, "Alternatives considered")
    assert alternatives.count("<tr>") == 1 + 3  # the header, then three runs (not the failed)
    assert "<td><b>chosen</b></td>" in alternatives and "<td><b>reference</b></td>" in alternatives
    assert "<td>0.2</td>" in alternatives
    # the note, escaped, and when
    note = section(page, "Why this model")
    assert html.escape(NOTE) in note and "<credit risk>" not in page
    assert f"{WHEN.astimezone():%Y-%m-%d %H:%M}" in note


def test_a_model_that_misses_kappa_says_so_under_its_limits(runs):
    store, ids = runs
    verdict = run_verdict(store, store.run(ids["chosen"]))
    # 30 iterations, κ held on no split: the exact value far above κ, surrogate feasible or not
    assert verdict.label in (Label.MISSES, Label.SURROGATE_ONLY)
    limits = words(section(decision_record(store, decide(store, ids["chosen"], NOTE)), "Limits"))
    assert verdict.headline in limits


def test_a_model_no_better_than_the_majority_class_says_so_under_its_limits(runs):
    store, ids = runs
    row = store.run(ids["looser"])
    majority = store.metrics(row.id)["test"]["majority"]
    store.finish(
        row.id,
        StopReason(row.stop_code, row.reason),
        metrics={"test": {"accuracy": majority}},
        only_if=(row.status,),
    )
    limits = words(section(decision_record(store, decide(store, row.id, NOTE)), "Limits"))
    assert "Degenerate on the test set" in limits
    assert f"{majority:.4f}" in limits


def test_without_a_reference_the_cost_is_not_said(runs):
    store, ids = runs
    store.delete(ids["reference"])
    page = decision_record(store, decide(store, ids["chosen"], NOTE))
    assert "cannot be said" in words(section(page, "What fairness costs"))
    assert "<b>reference</b>" not in page


def test_the_record_loads_nothing_from_elsewhere(runs):
    store, ids = runs
    page = decision_record(store, decide(store, ids["chosen"], NOTE))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    for reference in ("://", "<script", "<link", "src=", "@import", "url("):
        assert reference not in page


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_says_what_kappa_means_for_the_groups(family):
    said = " ".join(meaning_sentences(family, 0.07, ["North", "South"], (0.12, 0.34)))
    assert "κ = 0.07" in said and "North and South" in said
    assert ("12 %" in said and "34 %" in said) == FAMILIES[family].uses_interval


def test_decide_on_the_command_line_stores_the_decision_and_writes_the_record(
    runs, tmp_path, capsys
):
    store, ids = runs
    out = tmp_path / "record.html"
    home = ["--home", str(store.home)]
    assert main(["decide", ids["chosen"][:8], "--note", NOTE, "--out", str(out), *home]) == 0
    (decision,) = decisions(store)
    assert decision.checksum in capsys.readouterr().err
    assert decision.checksum in out.read_text() and html.escape(NOTE) in out.read_text()
    assert main(["runs", "decisions", *home]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["when", "run", "κ"]
    for shown in (
        ids["chosen"],
        "0.1",
        interval_label(INTERVAL),
        decision.verdict,
        decision.checksum[:12],
        NOTE[:20],
    ):
        assert shown in line


@pytest.mark.parametrize("role, says", [("missing", "no run"), ("failed", "is failed")])
def test_decide_refuses_a_run_without_a_model_in_one_line(runs, tmp_path, capsys, role, says):
    store, ids = runs
    out = tmp_path / "record.html"
    run_id = ids.get(role, "0123456789abcdef")
    code = main(["decide", run_id, "--note", NOTE, "--out", str(out), "--home", str(store.home)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and says in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists() and decisions(store) == []


def test_a_decision_is_a_frozen_value():
    decision = Decision("r", "pSP", 0.1, INTERVAL, NOTE, WHEN, "0" * 64, "meets κ")
    with pytest.raises(AttributeError):
        decision.note = "other"  # type: ignore[misc]
    with pytest.raises(UserError, match="SHA-256"):
        Decision("r", "pSP", 0.1, INTERVAL, NOTE, WHEN, "abc", "meets κ")
