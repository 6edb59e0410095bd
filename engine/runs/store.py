"""The run store: SQLite in WAL mode for specs, status, trajectories and metrics; files for the
model parameters and test scores.

Readers (the app) never block the writer for long: WAL lets reads proceed during a write, every
write is one short transaction, and workers batch their trajectory records.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.data.paths import BUNDLED_DATA
from engine.errors import UserError
from engine.runs.connections import store_connection
from engine.solvers.records import KAPPA_PRIME, SOLVE, RecordKind
from engine.status import ACTIVE, WITH_MODEL, RunStatus, StopCode, StopReason, stop_code

if TYPE_CHECKING:
    from engine.runs.spec import RunSpec

SCHEMA_VERSION = 2
STATUSES = tuple(str(s) for s in RunStatus)
# schema 1 said "done" for both converged and budget-ended runs, with the solver's status first
# in the reason ("budget: time budget of 6 s reached")
_MIGRATE_1_TO_2 = """
UPDATE runs SET status = CASE WHEN reason LIKE 'budget: %' THEN 'budget' ELSE 'converged' END,
    stop_code = CASE WHEN reason LIKE 'budget: time%' THEN 'time_budget'
                     WHEN reason LIKE 'budget: iteration%' THEN 'iteration_budget'
                     ELSE 'converged' END
    WHERE status = 'done';
UPDATE runs SET reason = substr(reason, instr(reason, ': ') + 2)
    WHERE reason LIKE 'budget: %' OR reason LIKE 'converged: %' OR reason LIKE 'diverged: %';
"""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    error TEXT,
    created REAL NOT NULL,
    started REAL,
    finished REAL,
    pid INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    iterations INTEGER,
    seconds REAL,
    solver_status TEXT,
    stop_code TEXT
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);
CREATE TABLE IF NOT EXISTS records (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    iteration INTEGER NOT NULL,
    seconds REAL NOT NULL,
    kind TEXT NOT NULL,
    objective REAL,
    max_violation REAL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS records_kind ON records(kind, run_id, seq);
CREATE TABLE IF NOT EXISTS metrics (
    run_id TEXT NOT NULL,
    split TEXT NOT NULL,
    name TEXT NOT NULL,
    value REAL,
    PRIMARY KEY (run_id, split, name)
);
CREATE TABLE IF NOT EXISTS sweeps (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created REAL NOT NULL,
    grid TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sweep_runs (
    sweep_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    PRIMARY KEY (sweep_id, run_id)
);
-- engine.runs.decision reads and writes it. A table added later needs no new schema version:
-- it is created when an older store is opened, and an older FairFront never reads it. Deleting a
-- run keeps its decisions: they say what was chosen, when and why.
CREATE TABLE IF NOT EXISTS decisions (
    run_id TEXT NOT NULL,
    made REAL NOT NULL,
    family TEXT,
    kappa REAL,
    alpha REAL NOT NULL,
    beta REAL NOT NULL,
    verdict TEXT NOT NULL,
    checksum TEXT NOT NULL,
    note TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_run ON decisions(run_id, made);
"""


def default_home() -> Path:
    """FAIRFRONT_HOME, or data/runs in the project."""
    return Path(os.environ.get("FAIRFRONT_HOME", BUNDLED_DATA / "runs"))


@dataclass(frozen=True)
class RunRow:
    """A stored run: its `spec`, read once from the store's JSON, and how it stands or ended.

    `spec_text` is that JSON as the store holds it: what a re-run queues again and an export
    shows, byte for byte. Read the run's settings from `spec`, never from the text.
    `engine_version` is the version of FairFront that wrote the spec."""

    id: str
    spec: RunSpec
    status: RunStatus
    reason: str
    error: str | None
    created: float
    started: float | None
    finished: float | None
    pid: int | None
    cancel_requested: bool
    iterations: int | None
    seconds: float | None
    stop_code: StopCode | None
    spec_text: str
    engine_version: str | None

    @property
    def has_model(self) -> bool:
        """True when the run ended with a reported model (converged, budget or diverged)."""
        return self.status in WITH_MODEL


class Store:
    """One folder: runs.sqlite plus artifacts/<run id>/ (params.npz, scores.npz)."""

    def __init__(self, home: Path | str | None = None) -> None:
        self.home = Path(home) if home is not None else default_home()
        self.home.mkdir(parents=True, exist_ok=True)
        self.path = self.home / "runs.sqlite"
        with self._connect() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise UserError(
                    f"the run store {self.path} was written by a newer FairFront "
                    f"(schema {version}; this one reads {SCHEMA_VERSION})"
                )
            db.executescript(_SCHEMA)
            if version == 1:
                columns = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
                if "stop_code" not in columns:
                    db.execute("ALTER TABLE runs ADD COLUMN stop_code TEXT")
                db.executescript(_MIGRATE_1_TO_2)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection to runs.sqlite, kept open between uses
        (`engine.runs.connections`)."""
        yield store_connection(self.path)

    def connection(self) -> AbstractContextManager[sqlite3.Connection]:
        """A connection to runs.sqlite, each statement its own transaction, for a table of the
        schema that another module reads and writes (`engine.runs.decision`)."""
        return self._connect()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # ---- runs ---------------------------------------------------------------------------
    def enqueue(self, run_id: str, spec: dict[str, Any], force: bool = False) -> bool:
        """Queue a run of `spec` (`RunSpec.to_dict`); returns False when an identical run is
        already queued, running or done (unless `force`, which discards the old result)."""
        return self._enqueue(run_id, json.dumps(spec, sort_keys=True), force)

    def _enqueue(self, run_id: str, spec_text: str, force: bool) -> bool:
        with self._write() as db:
            row = db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is not None and not force and (row[0] in ACTIVE or row[0] in WITH_MODEL):
                return False
            if row is not None and row[0] == RunStatus.RUNNING:
                raise UserError(f"run {run_id} is running; cancel it before running it again")
            db.execute("DELETE FROM records WHERE run_id = ?", (run_id,))
            db.execute("DELETE FROM metrics WHERE run_id = ?", (run_id,))
            db.execute(
                "INSERT OR REPLACE INTO runs (id, spec, status, created) VALUES (?, ?, ?, ?)",
                (run_id, spec_text, RunStatus.QUEUED, time.time()),
            )
        return True

    def claim(self, run_id: str, pid: int) -> dict[str, Any] | None:
        """Mark a queued run running in process `pid`; its spec, or None if it is not queued."""
        with self._write() as db:
            row = db.execute(
                "SELECT spec, status, cancel_requested FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            if row is None or row[1] != RunStatus.QUEUED:
                return None
            if row[2]:
                _cancel(db, run_id, "cancelled before it started")
                return None
            db.execute(
                "UPDATE runs SET status = ?, started = ?, pid = ? WHERE id = ?",
                (RunStatus.RUNNING, time.time(), pid, run_id),
            )
            return json.loads(row[0])

    def finish(
        self,
        run_id: str,
        stop: StopReason,
        iterations: int | None = None,
        seconds: float | None = None,
        metrics: dict[str, dict[str, float | None]] | None = None,
        error: str | None = None,
        only_if: Iterable[RunStatus] = (RunStatus.RUNNING,),
    ) -> bool:
        """Record how a run ended (its status follows `stop.code`); only a run whose status is
        in `only_if` changes."""
        allowed = tuple(only_if)
        with self._write() as db:
            marks = ",".join("?" * len(allowed))
            changed = db.execute(
                f"UPDATE runs SET status = ?, reason = ?, stop_code = ?, error = ?, finished = ?, "
                f"iterations = COALESCE(?, iterations), seconds = COALESCE(?, seconds) "
                f"WHERE id = ? AND status IN ({marks})",
                (
                    str(stop.status),
                    stop.text,
                    str(stop.code),
                    error,
                    time.time(),
                    iterations,
                    seconds,
                    run_id,
                    *allowed,
                ),
            ).rowcount
            if changed and metrics:
                db.executemany(
                    "INSERT OR REPLACE INTO metrics (run_id, split, name, value) VALUES (?, ?, ?, ?)",
                    [
                        (run_id, split, name, value)
                        for split, values in metrics.items()
                        for name, value in values.items()
                    ],
                )
        return bool(changed)

    def request_cancel(self, run_id: str) -> RunStatus:
        """Cancel a queued run at once; ask a running one to stop. Returns the status after."""
        with self._write() as db:
            row = db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise UserError(f"no run {run_id}")
            if row[0] == RunStatus.QUEUED:
                _cancel(db, run_id, "cancelled while queued")
                return RunStatus.CANCELLED
            if row[0] == RunStatus.RUNNING:
                db.execute("UPDATE runs SET cancel_requested = 1 WHERE id = ?", (run_id,))
            return RunStatus(row[0])

    def cancel_requested(self, run_id: str) -> bool:
        with self._connect() as db:
            row = db.execute("SELECT cancel_requested FROM runs WHERE id = ?", (run_id,)).fetchone()
        return bool(row and row[0])

    def rerun(self, run_id: str, replace: bool = False) -> bool:
        """Queue a run again under its own stored spec and id, dropping its trajectory and
        metrics; True if it was queued. Failed, cancelled and interrupted runs are; a queued or
        running one is left as it is, and so is one that ended with a model unless `replace`:
        its spec gives the same model again (unless a time budget ended it), so a re-run would
        only lose the result it has."""
        row = self.run(run_id)
        if row.status in ACTIVE or (row.has_model and not replace):
            return False
        return self._enqueue(row.id, row.spec_text, force=True)

    def mark_orphans_interrupted(self) -> list[str]:
        """Runs left 'running' with no live runner: called by the runner that owns the store."""
        with self._write() as db:
            running = (RunStatus.RUNNING,)
            ids = [r[0] for r in db.execute("SELECT id FROM runs WHERE status = ?", running)]
            db.execute(
                "UPDATE runs SET status = ?, reason = 'the process running it ended', "
                "stop_code = ?, finished = ? WHERE status = ?",
                (RunStatus.INTERRUPTED, StopCode.INTERRUPTED, time.time(), *running),
            )
        return ids

    def delete(self, run_id: str) -> None:
        with self._write() as db:
            status = db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
            if status is None:
                raise UserError(f"no run {run_id}")
            if status[0] in ACTIVE:
                raise UserError(f"run {run_id} is {status[0]}; cancel it first")
            for table, column in (
                ("records", "run_id"),
                ("metrics", "run_id"),
                ("sweep_runs", "run_id"),
                ("runs", "id"),
            ):
                db.execute(f"DELETE FROM {table} WHERE {column} = ?", (run_id,))
        for path in (self.artifacts(run_id) / name for name in ("params.npz", "scores.npz")):
            path.unlink(missing_ok=True)

    # ---- reading ------------------------------------------------------------------------
    def run(self, run_id: str) -> RunRow:
        rows = self._runs("WHERE id = ?", (run_id,))
        if not rows:
            matches = self._runs("WHERE id LIKE ?", (f"{run_id}%",)) if len(run_id) >= 4 else []
            if len(matches) != 1:
                raise UserError(f"no run {run_id}" if not matches else f"{run_id} is ambiguous")
            return matches[0]
        return rows[0]

    def runs(
        self,
        status: RunStatus | None = None,
        sweep_id: str | None = None,
        newest_first: bool = False,
    ) -> list[RunRow]:
        """The runs (oldest first, or newest first), optionally of one status or sweep."""
        clauses, args = [], []
        if status is not None:
            clauses.append("status = ?")
            args.append(status)
        if sweep_id is not None:
            clauses.append("id IN (SELECT run_id FROM sweep_runs WHERE sweep_id = ?)")
            args.append(sweep_id)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        order = " ORDER BY created DESC, id" if newest_first else " ORDER BY created, id"
        return self._runs(where + order, tuple(args))

    def _runs(self, where: str, args: tuple) -> list[RunRow]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT id, spec, status, reason, error, created, started, finished, pid, "
                f"cancel_requested, iterations, seconds, stop_code FROM runs {where}",
                args,
            ).fetchall()
        return [_row(*r) for r in rows]

    def statuses(self, run_ids: Collection[str]) -> dict[str, RunStatus]:
        """The status of each of `run_ids` in the store, without reading their specs (a page
        polls this every second while its runs go)."""
        ids = list(run_ids)
        marks = ", ".join("?" * len(ids))
        with self._connect() as db:
            rows = db.execute(f"SELECT id, status FROM runs WHERE id IN ({marks})", ids)
            return {run_id: RunStatus(status) for run_id, status in rows.fetchall()}

    def queued(self, limit: int) -> list[str]:
        """The oldest queued runs that can start now: a run that starts from another run's
        model (its spec's `warm_start`) waits while that run is queued or running."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT id FROM runs AS r WHERE status = ? AND NOT EXISTS ("
                "  SELECT 1 FROM runs AS source"
                "  WHERE source.id = json_extract(r.spec, '$.warm_start')"
                "  AND source.status IN (?, ?))"
                " ORDER BY created, id LIMIT ?",
                (RunStatus.QUEUED, RunStatus.QUEUED, RunStatus.RUNNING, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def counts(self) -> dict[str, int]:
        with self._connect() as db:
            rows = db.execute("SELECT status, COUNT(*) FROM runs GROUP BY status").fetchall()
        return dict(rows)

    def metrics(self, run_id: str) -> dict[str, dict[str, float | None]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT split, name, value FROM metrics WHERE run_id = ?", (run_id,)
            ).fetchall()
        out: dict[str, dict[str, float | None]] = {}
        for split, name, value in rows:
            out.setdefault(split, {})[name] = value
        return out

    # ---- trajectories -------------------------------------------------------------------
    def append_records(self, run_id: str, records: list[dict[str, Any]], first_seq: int) -> None:
        with self._write() as db:
            db.executemany(
                "INSERT OR REPLACE INTO records (run_id, seq, iteration, seconds, kind, objective,"
                " max_violation, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run_id,
                        first_seq + i,
                        r["iteration"],
                        r["seconds"],
                        r["kind"],
                        r.get("objective"),
                        r.get("max_violation"),
                        json.dumps({"values": r.get("values", {}), "state": r.get("state", {})}),
                    )
                    for i, r in enumerate(records)
                ],
            )

    def progress(self, run_id: str) -> tuple[int, int | None]:
        """How many trajectory records the run has, and the iteration of the last one (cheap
        enough to ask on every poll of a live view); a "front" record's iteration is its place
        in the front, not an iteration of the solver, so it is passed over."""
        with self._connect() as db:
            count, last = db.execute(
                "SELECT COUNT(*), (SELECT iteration FROM records WHERE run_id = ?1"
                " AND kind != ?2 ORDER BY seq DESC LIMIT 1) FROM records WHERE run_id = ?1",
                (run_id, RecordKind.FRONT),
            ).fetchone()
        return count, last

    def last_surrogate_violation(self, run_id: str) -> float | None:
        """The largest surrogate row of the run's last surrogate record (the solver's own view
        of feasibility at the end), or None when it logged none; of a run whose solves form a
        search (`engine.solvers.solve_sequence`), the last of the solve whose model it reports,
        the one its chosen "honour" record names (by index, or by κ′ in runs stored before
        solves had one)."""
        chosen = (
            "SELECT {} FROM records WHERE run_id = ?1 AND kind = ?2"
            " AND json_extract(data, '$.state.chosen') = 'yes'"
        )
        index, kappa_prime = (
            chosen.format("iteration"),
            chosen.format("json_extract(data, '$.values.kappa_prime')"),
        )
        with self._connect() as db:
            row = db.execute(
                "SELECT max_violation FROM records WHERE run_id = ?1 AND kind = 'surrogate'"
                f" AND (NOT EXISTS ({index}) OR json_extract(data, ?3) = ({index})"
                f" OR (json_extract(data, ?3) IS NULL AND json_extract(data, ?4) = ({kappa_prime})))"
                " ORDER BY seq DESC LIMIT 1",
                (run_id, RecordKind.HONOUR, f'$.state."{SOLVE}"', f'$.state."{KAPPA_PRIME}"'),
            ).fetchone()
        return None if row is None else row[0]

    def records(
        self, run_id: str, after_seq: int = -1, kind: str | None = None
    ) -> list[dict[str, Any]]:
        """The trajectory, optionally only what came after `after_seq` (for live polling) and
        only the records of one `kind` (`engine.solvers.records.IterationRecord`)."""
        only = "" if kind is None else " AND kind = ?"
        with self._connect() as db:
            rows = db.execute(
                "SELECT seq, iteration, seconds, kind, objective, max_violation, data FROM records"
                f" WHERE run_id = ? AND seq > ?{only} ORDER BY seq",
                (run_id, after_seq, *(() if kind is None else (kind,))),
            ).fetchall()
        return [
            {
                "seq": r[0],
                "iteration": r[1],
                "seconds": r[2],
                "kind": r[3],
                "objective": r[4],
                "max_violation": r[5],
                **json.loads(r[6]),
            }
            for r in rows
        ]

    def runs_with(self, kind: str) -> set[str]:
        """The ids of the runs that have records of `kind` (e.g. "front": the runs that yield a
        set of models)."""
        with self._connect() as db:
            rows = db.execute("SELECT DISTINCT run_id FROM records WHERE kind = ?", (kind,))
            return {r[0] for r in rows}

    # ---- sweeps -------------------------------------------------------------------------
    def add_sweep(self, sweep_id: str, name: str, grid: dict[str, Any], run_ids: list[str]) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO sweeps (id, name, created, grid) VALUES (?, ?, ?, ?)",
                (sweep_id, name, time.time(), json.dumps(grid, sort_keys=True)),
            )
            db.executemany(
                "INSERT OR IGNORE INTO sweep_runs (sweep_id, run_id) VALUES (?, ?)",
                [(sweep_id, r) for r in run_ids],
            )

    def sweeps(self) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT id, name, created, grid FROM sweeps ORDER BY created"
            ).fetchall()
        return [{"id": r[0], "name": r[1], "created": r[2], "grid": json.loads(r[3])} for r in rows]

    def sweep_id(self, prefix: str) -> str:
        matches = [s["id"] for s in self.sweeps() if s["id"].startswith(prefix)]
        if len(matches) != 1:
            raise UserError(f"no sweep {prefix}" if not matches else f"{prefix} is ambiguous")
        return matches[0]

    # ---- artifacts ----------------------------------------------------------------------
    def artifacts(self, run_id: str) -> Path:
        return self.home / "artifacts" / run_id

    def save_artifacts(
        self, run_id: str, params: dict[str, np.ndarray], scores: np.ndarray, groups: np.ndarray
    ) -> None:
        folder = self.artifacts(run_id)
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / "params.npz", **params)
        np.savez(folder / "scores.npz", test_scores=scores, test_groups=groups)

    def load_params(self, run_id: str) -> dict[str, np.ndarray]:
        with np.load(self.artifacts(run_id) / "params.npz", allow_pickle=False) as data:
            return {k: data[k] for k in data.files}

    def load_scores(self, run_id: str) -> tuple[np.ndarray, np.ndarray]:
        with np.load(self.artifacts(run_id) / "scores.npz", allow_pickle=False) as data:
            return data["test_scores"], data["test_groups"]


def _row(run_id: str, spec_text: str, status: str, *columns: Any) -> RunRow:
    """A row of the runs table as a `RunRow`, its spec parsed (`engine.runs.spec.stored_spec`,
    imported here, when a run is read, so that the runner, which reads none, starts without the
    data and solver modules)."""
    from engine.runs.spec import stored_spec

    try:
        spec, version = stored_spec(spec_text)
    except (UserError, KeyError, TypeError, ValueError) as unread:
        raise UserError(
            f"run {run_id}: this version cannot read its stored spec ({unread})"
        ) from unread
    reason, error, created, started, finished, pid, cancel, iterations, seconds, code = columns
    return RunRow(
        id=run_id,
        spec=spec,
        status=RunStatus(status),
        reason=reason,
        error=error,
        created=created,
        started=started,
        finished=finished,
        pid=pid,
        cancel_requested=bool(cancel),
        iterations=iterations,
        seconds=seconds,
        stop_code=stop_code(code),
        spec_text=spec_text,
        engine_version=version,
    )


def _cancel(db: sqlite3.Connection, run_id: str, reason: str) -> None:
    """Mark a run that has not started cancelled, saying when."""
    db.execute(
        "UPDATE runs SET status = ?, reason = ?, stop_code = ?, finished = ? WHERE id = ?",
        (RunStatus.CANCELLED, reason, StopCode.CANCELLED, time.time(), run_id),
    )
