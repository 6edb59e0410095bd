"""Paper 004's model selection (App. E.3, Sec. 5): "track the models from all iterations and
return the one that is feasible to (2) and reaches the best AUC on the validation set", with
feasibility judged on the exact constrained quantity (the true AUC gap, not its surrogate).

A stochastic solver takes thousands of steps a second, so iterates are offered every few steps
rather than every one (spec 004 §5), and only the best feasible one is kept: memory O(d). When
no iterate is within κ on validation, the paper's rule has no answer; the iterate nearest to κ
(the smallest exact value on validation) is kept for that case, so that a run that misses κ
reports its fairest model rather than whichever came last (ours). The time spent evaluating is
counted in `seconds`, which the driver takes off the run's clock, as it does for its records.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from engine.models import Params
from engine.problem import Problem
from engine.solvers.base import Snapshot

SPLIT = "val"


@dataclass
class ValidationSelection:
    """The best validation `score` (e.g. "auc") among the iterates offered whose exact
    constrained quantity on validation is ≤ κ; `best` is None until one is. `nearest` is the
    iterate of smallest exact value on validation."""

    problem: Problem
    score: str = "auc"
    best: Snapshot | None = None
    nearest: Snapshot | None = None
    offered: int = 0
    seconds: float = field(default=0.0)

    @property
    def active(self) -> bool:
        """False without validation rows: nothing can be judged."""
        return len(self.problem.data.split(SPLIT)) > 0

    def offer(self, iteration: int, outer: int, params: Params) -> Snapshot | None:
        """Evaluate `params` on validation and keep it if it is the best feasible so far; the
        snapshot, or None without validation rows."""
        if not self.active:
            return None
        started = time.perf_counter()
        h = self.problem.scores(params, SPLIT)
        metrics = {SPLIT: self.problem.report_scores(h, SPLIT, only=(self.score, "constraint"))}
        snapshot = Snapshot(iteration, outer, params, metrics)
        if self.feasible(snapshot) and (
            self.best is None or _score(snapshot, self.score) > _score(self.best, self.score)
        ):
            self.best = snapshot
        value = metrics[SPLIT].get("constraint")
        if value is not None and (
            self.nearest is None or value < self.nearest.metrics[SPLIT]["constraint"]
        ):
            self.nearest = snapshot
        self.offered += 1
        self.seconds += time.perf_counter() - started
        return snapshot

    def feasible(self, snapshot: Snapshot) -> bool:
        """Within κ on validation for the exact constrained quantity, with a known score."""
        values = snapshot.metrics.get(SPLIT, {})
        constraint = values.get("constraint")
        kappa = self.problem.bound.spec.kappa if self.problem.constraint is not None else None
        return (
            values.get(self.score) is not None
            and constraint is not None
            and kappa is not None
            and constraint <= kappa
        )

    def note(self) -> str:
        """The outcome in words, for the run's stop reason."""
        if not self.active:
            return "no validation rows: the solver's own last iterate is reported"
        if self.best is None and self.nearest is not None:
            return (
                f"none of the {self.offered:,} iterates judged on validation was within κ "
                "there: the one nearest to κ is reported (validation value "
                f"{self.nearest.metrics[SPLIT]['constraint']:.4f})"
            )
        if self.best is None:
            return (
                f"none of the {self.offered:,} iterates judged on validation was within κ "
                "there: the solver's own last iterate is reported"
            )
        values = self.best.metrics[SPLIT]
        return (
            f"reported: the iterate after {self.best.iteration:,} iterations, the best "
            f"validation {self.score.upper() if self.score == 'auc' else self.score} "
            f"({values[self.score]:.4f}) of the {self.offered:,} judged on validation with "
            f"the exact constrained value within κ ({values['constraint']:.4f})"
        )

    def chosen(self, fallback: Params) -> Params:
        """The best feasible iterate, else the one nearest to κ, else `fallback` (the solver's
        own candidate)."""
        kept = self.best or self.nearest
        return fallback if kept is None else kept.params


def _score(snapshot: Snapshot, name: str) -> float:
    return float(snapshot.metrics[SPLIT][name])
