"""A run's front read back: the models of `engine.solvers.base.Solver.front`, from the store's
"front" records (`engine.solvers.records.IterationRecord`) or from a Solution, in the run's
order, each with its label, its coordinates and its exact metrics on every split."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.runs.store import Store
from engine.solvers.records import FRONT_COORDINATE, RecordKind

REPORTED = "reported model"  # the label of the model the run reports, beside its front


@dataclass(frozen=True)
class FrontMember:
    """One model of a run's front: its `label` ("λ = (0.25, 0.75)"), its `coordinates`
    ({"lambda.<group name>": 0.25}; None for a value JSON cannot hold, such as β = ∞) and its
    exact metrics `metrics[split][name]` (None where a metric could not be computed)."""

    label: str
    coordinates: dict[str, float | None]
    metrics: dict[str, dict[str, float | None]]

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> FrontMember:
        """The model of a "front" record in the store's format (`Store.records`)."""
        coordinates: dict[str, float | None] = {}
        metrics: dict[str, dict[str, float | None]] = {}
        for key, value in (record.get("values") or {}).items():
            if key.startswith(FRONT_COORDINATE):
                coordinates[key.removeprefix(FRONT_COORDINATE)] = value
            else:
                split, _, name = key.partition(".")
                metrics.setdefault(split, {})[name] = value
        return cls(str((record.get("state") or {}).get("label", "")), coordinates, metrics)

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> FrontMember:
        """The model of an entry of `Solution.front` (or of its JSON)."""
        metrics = {split: dict(values) for split, values in entry["metrics"].items()}
        return cls(str(entry["label"]), dict(entry["coordinates"]), metrics)

    def to_dict(self) -> dict[str, Any]:
        """The shape of an entry of `Solution.front`: {"label", "coordinates", "metrics"}."""
        return {"label": self.label, "coordinates": self.coordinates, "metrics": self.metrics}


def run_front(store: Store, run_id: str) -> list[FrontMember]:
    """The stored run's front in its order; [] for a run that yields one model."""
    return [FrontMember.from_record(r) for r in store.records(run_id, kind=RecordKind.FRONT)]


def solution_front(front: Iterable[Mapping[str, Any]]) -> list[FrontMember]:
    """The front of a run made here (`Solution.front`)."""
    return [FrontMember.from_dict(entry) for entry in front]


def reported_member(
    members: Iterable[FrontMember], metrics: Mapping[str, Mapping[str, float | None]]
) -> FrontMember | None:
    """The model of the front that the run reports, whose exact metrics are `metrics`: the
    first whose metrics are the same on every split (the run's may hold more: the intervals of
    its held-out values); None when it is none of them."""
    return next((m for m in members if m.metrics and _same(m.metrics, metrics)), None)


def _same(ours: Mapping[str, Mapping], theirs: Mapping[str, Mapping]) -> bool:
    """The same values of every metric of ours on the same splits; a missing value (None, as
    stored, or NaN, as computed) is the same as another."""
    return set(ours) == set(theirs) and all(
        set(ours[s]) <= set(theirs[s]) and all(_equal(v, theirs[s][k]) for k, v in ours[s].items())
        for s in ours
    )


def _equal(ours: float | None, theirs: float | None) -> bool:
    return ours == theirs or (_missing(ours) and _missing(theirs))


def _missing(value: float | None) -> bool:
    return value is None or not math.isfinite(value)
