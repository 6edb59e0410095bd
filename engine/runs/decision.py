"""Decisions: a person chose a stored run's model, under its κ and I, and said who, what and why.

A decision names the model by the SHA-256 checksum its model file carries (`engine.model_file`),
the file `runs export-model` writes, so that the model put to use can be checked to be the one
that was chosen. The verdict is kept as it read when the choice was made.

Decisions live in the run store's `decisions` table (its schema is the store's); they are read
and written here, through the store's connection, because deciding needs the model's export,
which itself reads the store. A run's decisions outlive the run.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from engine.errors import UserError
from engine.model_file import model_checksum
from engine.runs.export import stored_run_model
from engine.runs.results import run_verdict
from engine.runs.store import RunRow, Store
from engine.status import ACTIVE

_SHA256 = re.compile(r"[0-9a-f]{64}")
_COLUMNS = "run_id, made, family, kappa, alpha, beta, verdict, checksum, note"


@dataclass(frozen=True)
class Decision:
    """Run `run_id`'s model was chosen at `made` under the constraint `family` with tolerance
    `kappa` (both None for a run without a constraint) on the interval I = `interval`; `note`
    says who chose it, what for and why; `verdict` is the run's verdict summary then
    (`Verdict.summary`), `checksum` the SHA-256 its model file carries."""

    run_id: str
    family: str | None
    kappa: float | None
    interval: tuple[float, float]
    note: str
    made: datetime.datetime
    checksum: str
    verdict: str

    def __post_init__(self) -> None:
        _require_note(self.note)
        if not _SHA256.fullmatch(self.checksum):
            raise UserError(f"'{self.checksum}' is not a SHA-256 checksum (64 hexadecimal digits)")


def decide(store: Store, run_id: str, note: str, made: datetime.datetime | None = None) -> Decision:
    """The decision to use the model of run `run_id` (an id or an unambiguous prefix), made now
    unless `made`; not yet stored (`add_decision`). A run still queued or running, or one that
    ended without a model, is refused with a sentence, and so is a run whose model cannot be
    exported as it ran (its data changed since)."""
    _require_note(note)
    row = chosen_run(store, run_id)
    return Decision(
        run_id=row.id,
        family=row.spec.family,
        kappa=row.spec.kappa,
        interval=row.spec.constraint_interval,
        note=note.strip(),
        made=made or datetime.datetime.now(datetime.UTC),
        checksum=run_model_checksum(store, row.id),
        verdict=run_verdict(store, row).summary,
    )


def _require_note(note: str) -> None:
    if not note.strip():
        raise UserError("a decision needs a note: who chooses this model, for what, and why")


def chosen_run(store: Store, run_id: str) -> RunRow:
    """The stored run whose model a decision can choose: one that has ended with a model."""
    row = store.run(run_id)
    if row.status in ACTIVE:
        raise UserError(f"run {row.id} is still {row.status}: choose its model once it has ended")
    if not row.has_model:
        raise UserError(f"run {row.id} is {row.status}: it has no model to choose")
    return row


def run_model_checksum(store: Store, run_id: str) -> str:
    """The SHA-256 checksum of the model file that `runs export-model` writes for the run."""
    return model_checksum(stored_run_model(store, run_id))


def add_decision(store: Store, decision: Decision) -> None:
    """Store `decision`."""
    alpha, beta = decision.interval
    with store.connection() as db:
        db.execute(
            f"INSERT INTO decisions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                decision.run_id,
                decision.made.timestamp(),
                decision.family,
                decision.kappa,
                alpha,
                beta,
                decision.verdict,
                decision.checksum,
                decision.note,
            ),
        )


def decisions(store: Store, run_id: str | None = None) -> list[Decision]:
    """The stored decisions, newest first; only those of run `run_id` (its full id) if given."""
    where, args = ("WHERE run_id = ?", (run_id,)) if run_id is not None else ("", ())
    with store.connection() as db:
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM decisions {where} ORDER BY made DESC, rowid DESC", args
        ).fetchall()
    return [
        Decision(
            run_id=r[0],
            family=r[2],
            kappa=r[3],
            interval=(r[4], r[5]),
            note=r[8],
            made=datetime.datetime.fromtimestamp(r[1], datetime.UTC),
            checksum=r[7],
            verdict=r[6],
        )
        for r in rows
    ]
