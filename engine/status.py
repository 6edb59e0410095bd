"""One vocabulary for how a run stands or ended, shared by the solvers, the store, the command
line and the pages (no torch, no Streamlit).

A run is `queued`, then `running`, then ends in one of:

    converged    the solver's own stopping rule fired (stationary point, no progress, L-BFGS)
    budget       a budget ended it: the run's time or iteration budget, or the solver's own
                 iteration cap (e.g. IDCA's K outer iterations); the model may not be final
    infeasible   the run holds κ on the exact training value, and no model it solved for met κ
                 there (the closest is kept)
    diverged     a non-finite objective or constraint value; the last finite iterate is kept
    failed       it could not run or could not finish (bad input, a failed projection, a worker
                 that died); a failed solver step keeps the iterate before it
    cancelled    someone stopped it
    interrupted  the process running it ended (machine or app restart)

Each end comes with a `StopReason`: the status, a stable code that programs can test, and a
sentence for people.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    CONVERGED = "converged"
    BUDGET = "budget"
    DIVERGED = "diverged"
    INFEASIBLE = "infeasible"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


ACTIVE = frozenset({RunStatus.QUEUED, RunStatus.RUNNING})
FINAL = frozenset(RunStatus) - ACTIVE
# the ends that leave a reported model (a failed solver step keeps the iterate before it, and
# then has a model too: see `Store.has_model`)
WITH_MODEL = frozenset(
    {RunStatus.CONVERGED, RunStatus.BUDGET, RunStatus.DIVERGED, RunStatus.INFEASIBLE}
)
# a queued or finished run with one of these ends is worth starting again as it is
RETRYABLE = frozenset({RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.INTERRUPTED})


class StopCode(StrEnum):
    """Why a run ended, for programs (the sentence beside it is for people)."""

    CONVERGED = "converged"  # the solver's stopping rule
    TIME_BUDGET = "time_budget"
    ITERATION_BUDGET = "iteration_budget"  # the run's iteration budget
    ITERATION_CAP = "iteration_cap"  # the solver's own iteration count (K, T, ...)
    # the share of a run's iterations or time that a sequence of solves gave one of them
    # (`engine.solvers.solve_sequence`)
    SOLVE_SHARE = "solve_share"
    NON_FINITE = "non_finite"
    KAPPA_UNMET = "kappa_unmet"  # no model solved for met κ on the exact training value
    STEP_FAILED = "step_failed"  # e.g. a projection the convex solver could not do
    USER_ERROR = "user_error"  # the problem cannot be solved as specified
    INTERNAL_ERROR = "internal_error"
    WORKER_DIED = "worker_died"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


STATUS_OF_CODE: dict[StopCode, RunStatus] = {
    StopCode.CONVERGED: RunStatus.CONVERGED,
    StopCode.TIME_BUDGET: RunStatus.BUDGET,
    StopCode.ITERATION_BUDGET: RunStatus.BUDGET,
    StopCode.ITERATION_CAP: RunStatus.BUDGET,
    StopCode.SOLVE_SHARE: RunStatus.BUDGET,
    StopCode.NON_FINITE: RunStatus.DIVERGED,
    StopCode.KAPPA_UNMET: RunStatus.INFEASIBLE,
    StopCode.STEP_FAILED: RunStatus.FAILED,
    StopCode.USER_ERROR: RunStatus.FAILED,
    StopCode.INTERNAL_ERROR: RunStatus.FAILED,
    StopCode.WORKER_DIED: RunStatus.FAILED,
    StopCode.CANCELLED: RunStatus.CANCELLED,
    StopCode.INTERRUPTED: RunStatus.INTERRUPTED,
}


@dataclass(frozen=True)
class StopReason:
    """How a run ended: `code` for programs, `text` for people; the status follows the code."""

    code: StopCode
    text: str

    @property
    def status(self) -> RunStatus:
        return STATUS_OF_CODE[self.code]


def stop_code(value: str | None) -> StopCode | None:
    """A stored code read back (None for runs that have not ended or predate codes)."""
    try:
        return StopCode(value) if value else None
    except ValueError:
        return None
