"""The store and the in-process worker path: reuse, cancel, divergence, bad specs."""

import dataclasses
import json
import math
import sqlite3

import pytest
from old_specs import OLD_SPECS
from run_fixtures import INTERVAL, make_spec

from engine import __version__
from engine.data.acs import ACSSpec
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.objectives import PairwiseAUCLoss
from engine.runs import RunSpec
from engine.runs.results import export_run
from engine.runs.spec import stored_spec
from engine.runs.submit import submit
from engine.runs.warm_up import warm_solver
from engine.runs.worker import execute_run
from engine.solvers import driver as driver_module
from engine.solvers.base import Solver
from engine.solvers.paper003.idca import IDCA
from engine.status import StopCode, StopReason
from engine.task import Task


def test_spec_round_trips_and_its_hash_is_its_content(csv_spec):
    spec = make_spec(csv_spec, kappa=0.1)
    again = RunSpec.from_dict(spec.to_dict())
    assert again == spec and again.run_id == spec.run_id
    assert make_spec(csv_spec, kappa=0.2).run_id != spec.run_id
    assert make_spec(csv_spec, seed=1).run_id != spec.run_id


def test_a_spec_says_what_its_constraint_holds_and_on_which_interval(csv_spec):
    held = make_spec(csv_spec, kappa=0.1)  # pSP on its own I = (0.1, 0.5)
    assert (held.family, held.kappa, held.constraint_interval) == ("pSP", 0.1, (0.1, 0.5))
    on_the_spec = dataclasses.replace(held, constraint=ConstraintSpec("pSP", 0.1), interval=(0, 1))
    assert on_the_spec.constraint_interval == (0.0, 1.0)
    free = make_spec(csv_spec, "unconstrained")
    assert (free.family, free.kappa, free.constraint_interval) == (None, None, INTERVAL)
    assert held.task is Task.CLASSIFICATION and held.thresholded
    ranking = dataclasses.replace(held, objective=PairwiseAUCLoss())
    assert ranking.task is Task.CLASSIFICATION and not ranking.thresholded


def test_a_spec_whose_constraint_holds_another_interval_than_the_run_is_refused(csv_spec):
    """The run reports pSP and pDP on its interval: a constraint on another one would be judged
    on an interval it does not hold."""
    held = make_spec(csv_spec, kappa=0.1)  # pSP on (0.1, 0.5)
    held.validate()
    elsewhere = dataclasses.replace(held, interval=(0.0, 0.5))
    with pytest.raises(UserError, match="is not the run's"):
        elsewhere.validate()
    dataclasses.replace(held, constraint=ConstraintSpec("DP", 0.1), interval=(0.0, 0.5)).validate()


def test_a_stored_spec_is_read_once_per_text(csv_spec):
    text = json.dumps(make_spec(csv_spec).to_dict(), sort_keys=True)
    spec, version = stored_spec(text)
    assert spec == make_spec(csv_spec) and version == __version__
    assert stored_spec(text)[0] is spec


def test_a_run_executes_in_process_and_its_results_are_stored(store, csv_spec):
    spec = make_spec(csv_spec, iterations=300)
    (run_id,) = submit([spec], store, start_runner=False)
    assert execute_run(str(store.home), run_id) == "budget"
    row = store.run(run_id)
    assert row.status == "budget" and row.iterations == 300 and row.pid is not None
    assert {"train", "val", "test"} <= set(store.metrics(run_id))
    assert any(r["kind"] == "surrogate" for r in store.records(run_id))
    params = store.load_params(run_id)
    scores, groups = store.load_scores(run_id)
    assert "w" in params and "aux.theta" in params and len(scores) == len(groups) > 0
    assert execute_run(str(store.home), run_id) == "skipped"  # not queued any more
    assert row.stop_code is StopCode.ITERATION_BUDGET  # IDCA would have run on
    assert row.reason == "iteration budget of 300 reached"


def test_a_stop_code_sets_the_status(store, csv_spec):
    spec = make_spec(csv_spec).to_dict()
    ends = [
        StopReason(StopCode.TIME_BUDGET, "time budget of 6 s reached"),
        StopReason(StopCode.CONVERGED, "objective unchanged"),
        StopReason(StopCode.STEP_FAILED, "projection failed"),
        StopReason(StopCode.CANCELLED, "cancelled"),
    ]
    for run_id, stop in zip("abcd", ends, strict=True):
        store.enqueue(run_id, spec)
        store.claim(run_id, 1)
        store.finish(run_id, stop)
    rows = [store.run(r) for r in "abcd"]
    assert [r.status for r in rows] == ["budget", "converged", "failed", "cancelled"]
    assert [r.has_model for r in rows] == [True, True, False, False]
    assert [r.stop_code for r in rows] == [e.code for e in ends]
    store.enqueue("e", spec)  # the statuses a page polls, of the runs it names
    assert store.statuses(["a", "c", "e", "absent"]) == {
        "a": "budget",
        "c": "failed",
        "e": "queued",
    }
    assert store.statuses([]) == {}


def test_a_store_of_schema_one_is_migrated(tmp_path):
    import sqlite3

    home = tmp_path / "old"
    home.mkdir()
    db = sqlite3.connect(home / "runs.sqlite")
    db.executescript(
        "CREATE TABLE runs (id TEXT PRIMARY KEY, spec TEXT NOT NULL, status TEXT NOT NULL,"
        " reason TEXT NOT NULL DEFAULT '', error TEXT, created REAL NOT NULL, started REAL,"
        " finished REAL, pid INTEGER, cancel_requested INTEGER NOT NULL DEFAULT 0,"
        " iterations INTEGER, seconds REAL, solver_status TEXT);"
        "PRAGMA user_version = 1;"
    )
    db.executemany(
        "INSERT INTO runs (id, spec, status, reason, created) VALUES (?, ?, ?, ?, ?)",
        [
            ("a", OLD_SPECS[0].text, "done", "budget: time budget of 6 s reached", 1),
            ("b", OLD_SPECS[0].text, "done", "converged: objective unchanged", 2),
            ("c", OLD_SPECS[0].text, "failed", "bad input", 3),
        ],
    )
    db.commit()
    db.close()
    from engine.runs.store import Store

    store = Store(home)
    rows = {r.id: r for r in store.runs()}
    assert [rows[r].status for r in "abc"] == ["budget", "converged", "failed"]
    assert rows["a"].stop_code is StopCode.TIME_BUDGET
    assert rows["a"].reason == "time budget of 6 s reached"
    assert rows["b"].reason == "objective unchanged"
    assert [r.id for r in store.runs(newest_first=True)] == ["c", "b", "a"]


def test_identical_specs_reuse_the_result_unless_forced(store, csv_spec):
    spec = make_spec(csv_spec, iterations=50)
    (run_id,) = submit([spec], store, start_runner=False)
    execute_run(str(store.home), run_id)
    assert not store.enqueue(run_id, spec.to_dict())
    assert store.run(run_id).status == "budget"
    assert store.enqueue(run_id, spec.to_dict(), force=True)
    assert store.run(run_id).status == "queued" and store.records(run_id) == []


def test_progress_is_the_record_count_and_the_last_iteration(store, csv_spec):
    spec = make_spec(csv_spec, iterations=300)
    (run_id,) = submit([spec], store, start_runner=False)
    assert store.progress(run_id) == (0, None)
    execute_run(str(store.home), run_id)
    records = store.records(run_id)
    assert store.progress(run_id) == (len(records), records[-1]["iteration"])


def test_a_solver_that_produces_nan_ends_diverged_with_its_trajectory(store, csv_spec, monkeypatch):
    warm_solver("idca")  # now, not through the patch: a process's first run warms its solver up
    original = IDCA.step
    calls = {"n": 0}

    def step(self):
        calls["n"] += 1
        info = original(self)
        if calls["n"] == 120:
            info.objective = math.nan
        return info

    monkeypatch.setattr(IDCA, "step", step)
    monkeypatch.setattr(IDCA, "advance", Solver.advance)  # a step a call, through the patch
    monkeypatch.setattr(driver_module, "LOG_EVERY_SECONDS", 0.0)
    monkeypatch.setitem(driver_module.RECORD_SHARE, "surrogate", 0.0)  # a record every step
    (run_id,) = submit([make_spec(csv_spec)], store, start_runner=False)
    assert execute_run(str(store.home), run_id) == "diverged"
    row = store.run(run_id)
    assert "iteration 120" in row.reason
    surrogate = [r for r in store.records(run_id) if r["kind"] == "surrogate"]
    assert len(surrogate) == 119
    assert store.metrics(run_id)["test"]["accuracy"] is not None


def test_cancelling_a_queued_run_is_immediate(store, csv_spec):
    (run_id,) = submit([make_spec(csv_spec)], store, start_runner=False)
    assert store.request_cancel(run_id) == "cancelled"
    assert execute_run(str(store.home), run_id) == "skipped"
    assert store.run(run_id).status == "cancelled"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.__class__(**{**s.__dict__, "solver": "nope"}), "unknown solver 'nope'"),
        (lambda s: s.__class__(**{**s.__dict__, "interval": (0.5, 0.2)}), "0 ≤ α < β ≤ 1"),
        (lambda s: make_spec(s.data, kappa=1.5), "outside \\(0, 1\\]"),
        (lambda s: s.__class__(**{**s.__dict__, "config": {"outer": 3}}), "unknown option"),
    ],
)
def test_bad_specs_are_refused_before_anything_is_queued(store, csv_spec, change, message):
    good = make_spec(csv_spec)
    with pytest.raises(UserError, match=message):
        submit([good, change(good)], store, start_runner=False)
    assert store.runs() == []


def test_missing_data_files_are_refused_at_submission(store, csv_spec, tmp_path):
    spec = make_spec(csv_spec)
    acs = spec.__class__(**{**spec.__dict__, "data": ACSSpec(states=("CT",), root=str(tmp_path))})
    with pytest.raises(UserError, match="person file for CT is missing"):
        submit([acs], store, start_runner=False)
    assert store.runs() == []


def test_export_as_json_and_csv(store, csv_spec):
    (run_id,) = submit([make_spec(csv_spec, iterations=50)], store, start_runner=False)
    execute_run(str(store.home), run_id)
    assert f'"id": "{run_id}"' in export_run(store, run_id, "json")
    lines = export_run(store, run_id, "csv").splitlines()
    assert "final.test.accuracy" in lines[0] and len(lines) == 1 + len(store.records(run_id))


def test_a_newer_schema_is_refused(store):
    with sqlite3.connect(store.path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(UserError, match="newer FairFront"):
        type(store)(store.home)
