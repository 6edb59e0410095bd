"""What a run produces: iteration records on the way, a Solution at the end."""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.models import Params
from engine.status import RunStatus, StopReason


class RecordKind(enum.StrEnum):
    """What a trajectory record is (`IterationRecord`); stored as its word."""

    SURROGATE = "surrogate"  # the solver's own view of its iterate
    EXACT = "exact"  # exact train and validation metrics of the current candidate
    ITERATE = "iterate"  # a saved iterate, evaluated on every split (paper 000 §3)
    FRONT = "front"  # one model of the run's front
    FINAL = "final"  # the reported model's exact metrics on every split
    HONOUR = "honour"  # one solve of a run's κ′ search


def row_key(split: str, row: str) -> str:
    """The key of an exact constraint row in a record's values: "<split>.row.<row>"."""
    return f"{split}.row.{row}"


def rows_of(values: Mapping[str, Any], split: str) -> dict[str, Any]:
    """The exact constraint rows a record's values hold for `split`, by row name, in order."""
    prefix = row_key(split, "")
    return {k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix)}


def per_row(kind: str, rows: Sequence[str], values: Iterable[float]) -> dict[str, float]:
    """A state's entries of one kind per constraint row, "<kind>.<row>" (the duals: "dual")."""
    return {f"{kind}.{row}": float(v) for row, v in zip(rows, values, strict=True)}


def read_per_row(state: Mapping[str, Any], kind: str, rows: Sequence[str]) -> list[float] | None:
    """The entries `per_row` wrote for `rows`, in their order; None unless every row has one."""
    keys = [f"{kind}.{row}" for row in rows]
    if not all(key in state for key in keys):
        return None
    return [float(state[key]) for key in keys]


DUAL = "dual"  # a solver's multiplier of each row, in its state as per_row(DUAL, ...)
FRONT_COORDINATE = "coord."  # a front record's coordinates are its values "coord.<name>"
KAPPA_PRIME = "honour.kappa_prime"  # in a record's state: the κ′ of the solve that made it
SOLVE = "honour.solve"  # in a record's state: the index of the solve that made it (0, 1, ...)


@dataclass(frozen=True)
class IterationRecord:
    """One point of a trajectory.

    kind "surrogate": the solver's own view — objective and constraint rows (g ≤ 0 feasible) of
    the surrogate problem. kind "exact": exact metrics of the current candidate on train and
    validation, keyed "split.metric". kind "iterate": an iterate saved every `Budget.save_every`
    iterations (paper 000 §3), on every split: the exact metrics keyed "split.metric" and the
    exact constraint rows keyed "split.row.<row>"; its objective is the train loss and its
    largest violation the largest train row. kind "front": one model of the run's front
    (`Solver.front`), emitted when the run has ended, one record per model before the final
    record: `iteration` is its place in the front (0, 1, ...), `values` its exact metrics on
    every split keyed "split.metric" and its coordinates keyed "coord.<name>", `state` its
    label {"label": ...}. kind "final": the exact metrics of the reported iterate on every
    split. `seconds` is the solver's clock, which evaluations do not advance. Readers of one
    kind ignore the others.
    """

    iteration: int
    seconds: float
    kind: RecordKind
    objective: float | None = None
    max_violation: float | None = None
    values: dict[str, float | None] = field(default_factory=dict)
    state: dict[str, float | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", RecordKind(self.kind))  # a stored record holds its word

    def to_dict(self) -> dict[str, Any]:
        return _finite_or_none(dataclasses.asdict(self))


@dataclass
class Solution:
    """The chosen iterate, its exact metrics, the trajectory, and how the run ended. `front` is
    the run's front, the models of `Solver.front` in its order, each {"label", "coordinates",
    "metrics"} with its exact metrics `metrics[split][name]`; empty for a run that yields one
    model. `seconds` is the solver's clock (that of its records); `wall_seconds` the run's wall
    time, which its time budget limits: the solver's and its records' and evaluations' (None
    where it was not measured)."""

    solver: str
    config: dict[str, Any]
    stop: StopReason
    iterations: int
    seconds: float
    params: Params
    metrics: dict[str, dict[str, float | None]]
    trajectory: list[IterationRecord]
    snapshots: list[dict[str, Any]]
    group_names: tuple[str, ...]
    test_scores: np.ndarray
    test_groups: np.ndarray
    front: list[dict[str, Any]] = field(default_factory=list)
    wall_seconds: float | None = None

    @property
    def status(self) -> RunStatus:
        return self.stop.status

    @property
    def reason(self) -> str:
        return self.stop.text

    def last_surrogate(self) -> IterationRecord | None:
        """The last record of the solver's own (surrogate) view, if any; of a run that honours κ
        (`engine.solvers.honour`), the last of the solve whose model it reports."""
        chosen = next(
            (
                float(r.iteration)
                for r in self.trajectory
                if r.kind == RecordKind.HONOUR and r.state.get("chosen") == "yes"
            ),
            None,
        )
        return next(
            (
                r
                for r in reversed(self.trajectory)
                if r.kind == RecordKind.SURROGATE
                and (chosen is None or r.state.get(SOLVE) == chosen)
            ),
            None,
        )

    def to_dict(self, with_scores: bool = False) -> dict[str, Any]:
        out = {
            "solver": self.solver,
            "config": self.config,
            "status": str(self.status),
            "stop_code": str(self.stop.code),
            "reason": self.reason,
            "iterations": self.iterations,
            "seconds": self.seconds,
            "wall_seconds": self.wall_seconds,
            "metrics": self.metrics,
            "trajectory": [r.to_dict() for r in self.trajectory],
            "snapshots": self.snapshots,
            "group_names": list(self.group_names),
            "front": self.front,
        }
        if with_scores:
            out["test_scores"] = self.test_scores.tolist()
            out["test_groups"] = self.test_groups.tolist()
        return _finite_or_none(out)


def _finite_or_none(value: Any) -> Any:
    """JSON has no NaN or infinity: such numbers become null."""
    if isinstance(value, dict):
        return {k: _finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_or_none(v) for v in value]
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value
