"""Which reference runs train the same model, and which run's model a stored run reuses: what
the queue and the pages need of `engine.runs.reference_reuse` without loading a solver."""

from __future__ import annotations

import dataclasses

from engine.runs.spec import RunSpec
from engine.runs.store import Store
from engine.solvers.records import RecordKind

# in the state of a reusing run's own records (its exact record and its final one): the run that
# trained the model, and how that training ended in words, so that a run reusing a reusing run
# names the run that trained, not the one that reused
TRAINED_IN = "reuse.trained_in"
TRAINED_REASON = "reuse.trained_reason"


def reference_key(spec: RunSpec) -> str | None:
    """What two reference runs that train the same model share: the canonical JSON of `spec`
    with I, and its constraint's I, left out; None for a run of a constrained solver, which
    trains on I."""
    if spec.card.constrained:
        return None
    constraint = spec.constraint
    if constraint is not None:
        constraint = dataclasses.replace(constraint, interval=None)
    return dataclasses.replace(spec, interval=(0.0, 1.0), constraint=constraint).canonical_json()


def reused_from(store: Store, run_id: str) -> str | None:
    """The run that trained the model the stored run `run_id` reuses (the mark of its final
    record), or None for a run that trained its own."""
    finals = store.records(run_id, kind=RecordKind.FINAL)
    marks = finals[-1].get("state", {}) if finals else {}
    trained_in = marks.get(TRAINED_IN)
    return None if trained_in is None else str(trained_in)
