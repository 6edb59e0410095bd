"""A store written by older versions of FairFront: its runs are listed, opened and described under
the ids they were stored with, their specs read in any older shape without a solver card or a
data file, and a re-run or an export keeps the spec as it was stored."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from old_specs import OLD_SPECS, OldSpec

from engine.data.acs import ACSSpec, SyntheticACSSpec
from engine.data.adult import AdultSpec
from engine.data.classic import ClassicSpec
from engine.data.csv_source import CSVSpec
from engine.errors import UserError
from engine.runs import RunSpec, Store
from engine.runs import spec as spec_module
from engine.runs.describe import describe_spec, run_label
from engine.runs.results import run_document, run_verdict
from engine.status import RunStatus, StopCode

FIRST = [s for s in OLD_SPECS if s.commit == "f52ffcb"]  # stored by a store of schema 1
LATER = [s for s in OLD_SPECS if s.commit != "f52ffcb"]
# the runs table as the first version created it (schema 1: "done" for every run with a model)
SCHEMA_ONE = (
    "CREATE TABLE runs (id TEXT PRIMARY KEY, spec TEXT NOT NULL, status TEXT NOT NULL,"
    " reason TEXT NOT NULL DEFAULT '', error TEXT, created REAL NOT NULL, started REAL,"
    " finished REAL, pid INTEGER, cancel_requested INTEGER NOT NULL DEFAULT 0,"
    " iterations INTEGER, seconds REAL, solver_status TEXT);"
    "PRAGMA user_version = 1;"
)


def write_rows(path: Path, specs: list[OldSpec], statuses: list[str]) -> None:
    """Rows of `specs` as an older store wrote them: the spec's JSON, under its run id."""
    with closing(sqlite3.connect(path)) as db, db:
        db.executemany(
            "INSERT INTO runs (id, spec, status, reason, created) VALUES (?, ?, ?, ?, ?)",
            [
                (s.id, s.text, status, "converged: objective unchanged", float(n))
                for n, (s, status) in enumerate(zip(specs, statuses, strict=True))
            ],
        )


@pytest.fixture
def old_store(tmp_path, monkeypatch) -> Store:
    """A store of schema 1 holding the first version's runs, opened (and so migrated) by this
    version, with the later versions' runs written into it as they stored them."""
    home = tmp_path / "old"
    home.mkdir()
    with closing(sqlite3.connect(home / "runs.sqlite")) as db:
        db.executescript(SCHEMA_ONE)
    write_rows(home / "runs.sqlite", FIRST, ["done", "failed", "done"])
    spec_module.stored_spec.cache_clear()

    def no_card(name):
        raise AssertionError(f"the solver card of {name} was looked up to read a stored spec")

    def no_file(self, progress=None):
        raise AssertionError("a data file was looked for to read a stored spec")

    monkeypatch.setattr(spec_module, "solver_card", no_card)
    for source in (CSVSpec, AdultSpec, ACSSpec, SyntheticACSSpec, ClassicSpec):
        monkeypatch.setattr(source, "files", no_file)
    store = Store(home)
    write_rows(store.path, LATER, ["converged"] * len(LATER))
    rows = store.runs()  # every spec read here, without cards or files
    monkeypatch.undo()
    assert len(rows) == len(OLD_SPECS)
    return store


def test_every_older_shape_is_listed_and_opened_under_its_stored_id(old_store):
    rows = {row.id: row for row in old_store.runs()}
    assert set(rows) == {s.id for s in OLD_SPECS}
    for old in OLD_SPECS:
        row = old_store.run(old.id[:8])  # a prefix opens it, as the command line does
        assert row.id == old.id and rows[old.id].spec == row.spec
        assert isinstance(row.spec, RunSpec) and row.spec_text == old.text
        assert row.engine_version == "0.1.0"
        assert row.spec == RunSpec.from_dict(old.fields)
    statuses = {row.id: row.status for row in rows.values()}
    assert [statuses[s.id] for s in FIRST] == [
        RunStatus.CONVERGED,
        RunStatus.FAILED,
        RunStatus.CONVERGED,
    ]
    assert rows[FIRST[0].id].stop_code is StopCode.CONVERGED


def test_a_shape_since_every_field_of_todays_spec_existed_keeps_its_id(old_store):
    """The ids an older version gave are the ids this one computes from the same spec: the
    canonical JSON of a spec leaves out what was added since, at its default. The first
    version's specs lack the model's activation and the CSV features, so they keep the id they
    were stored under instead."""
    for old in LATER:
        spec = old_store.run(old.id).spec
        assert spec.canonical_json() == json.dumps(
            old.fields, sort_keys=True, separators=(",", ":")
        )
        assert spec.run_id == old.id, old.shape
    for old in FIRST:
        assert old_store.run(old.id).spec.run_id != old.id


def test_older_runs_are_described(old_store):
    said = {s.id: dict(describe_spec(old_store.run(s.id).spec)) for s in OLD_SPECS}
    labels = {s.id: run_label(old_store.run(s.id).spec) for s in OLD_SPECS}
    first, adult, retired = (s.id for s in FIRST)
    assert labels[first] == "idca (κ = 0.05)" and labels[adult] == "unconstrained"
    assert said[first]["data"] == "CSV file toy.csv, label column “y”"
    assert said[first]["solver options"] == "epsilon = 0.004 (default 0.005)"
    assert said[first]["budget"] == "at most 50 iterations"
    assert said[adult]["split"].endswith("test: the published adult.test; seed 0")
    assert said[retired]["solver"] == "idca_retired"  # a solver this version does not have
    assert said[retired]["solver options"] == "outer_iterations = 3"
    assert said[retired]["model"] == "MLP 8-4, ReLU"  # stored before activations were
    assert said[retired]["data"] == "ACS census survey, CT 2018 (1-Year), task “income”"
    by_commit = {s.commit: said[s.id] for s in LATER}
    assert by_commit["7ab34d9"]["model"] == "MLP 16, sigmoid"
    assert by_commit["ee306d6"]["data"].startswith("COMPAS (ProPublica)")
    assert by_commit["cbe5059"]["objective"].endswith("c1 = 1, c2 = 1")
    assert by_commit["b15d9ee"]["constraint"].startswith("DP gap ≤ κ = 0.05; κ held on the")
    assert by_commit["c35a02f"]["budget"] == "at most 4 s of solver time"
    subgroups = old_store.run(next(s.id for s in LATER if s.commit == "2788e3e")).spec
    assert subgroups.prepare.subgroups.attributes == ("x1", "x2")
    warm = old_store.run(next(s.id for s in LATER if s.commit == "7ff0667")).spec
    assert warm.warm_start == first
    ranks = old_store.run(next(s.id for s in LATER if s.commit == "7f0cd3a")).spec
    assert ranks.constraint.ranks == (0.2, 0.3) and ranks.honour == "train"


def test_a_rerun_and_an_export_keep_the_spec_as_stored(old_store):
    failed = FIRST[1]
    assert old_store.rerun(failed.id)
    row = old_store.run(failed.id)
    assert row.status is RunStatus.QUEUED and row.spec_text == failed.text
    assert run_document(old_store, FIRST[0].id)["spec"] == FIRST[0].fields


def test_a_spec_this_version_cannot_read_names_its_run(tmp_path):
    store = Store(tmp_path / "home")
    fields = dict(FIRST[0].fields, model={"kind": "forest"})
    with closing(sqlite3.connect(store.path)) as db, db:
        db.execute(
            "INSERT INTO runs (id, spec, status, created) VALUES ('x1', ?, 'queued', 0)",
            (json.dumps(fields, sort_keys=True),),
        )
    with pytest.raises(UserError, match="run x1: this version cannot read its stored spec"):
        store.run("x1")


def test_a_run_of_a_solver_this_version_lacks_still_has_a_verdict(old_store):
    """Judged by its own constraint, as any run: the Runs page's table and the reports read
    every stored run's verdict."""
    retired = old_store.run(FIRST[2].id)
    assert retired.spec.solver == "idca_retired"
    verdict = run_verdict(old_store, retired)
    assert verdict.quantity == "pSP"
