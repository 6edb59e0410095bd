"""Paper 004's post-processing baseline (App. E.2, after Kallus & Zhou 2019): train an AUC model
without constraints, then map the protected group's scores to ω1·h + ω2.

Phase 1 is the unconstrained solver (L-BFGS) on the pairwise AUC objective. When the run ends,
every map (ω1, ω2) of the grid (App. E.3: ω1 ∈ [0, 5] by 0.05, ω2 ∈ [−3, 3] by 0.1) is applied
to the protected group's validation scores, the other group's left as they are, and the map
reported is the one with the best validation AUC among those whose exact AUC gap on validation
is ≤ κ (problem (2); App. E.3's selection rule); ties go to the map nearest the identity,
|ω1 − 1| + |ω2| smallest. The protected group (γ = 1) is group 0, as in every AUC gap here (of a
pair k < k', k plays γ = 1). The exact validation metrics of all maps come from one sort per
group (`engine.fairness.auc_shift`), and the search is evaluation, not solving: its time is kept
off the run's clock (`evaluation_seconds`).

The reported model is group-aware at prediction time: its parameters carry the map as
`POST_SCALE` and `POST_SHIFT`, one entry per group (1 and 0 for the unmapped group), which
`Problem.scores` applies to every report and stored score.

Choices:
- Two groups only: paper 004's γ is binary; with three or more groups the constraint holds
  every pair, which one group's map cannot answer and the paper does not extend to, so such
  data is refused when the solver is built.
- Without a map within κ on validation (or without validation rows that can judge one), the
  unmapped model is reported. The grid is searched in `select`, when the run ends, and the
  run's stop reason says what came of it (`selection_note`).
- `candidate()` is phase 1's model, unmapped: the records during the run show it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from engine.fairness.auc_shift import PROTECTED, TwoGroupScores, map_metrics
from engine.model_forms import POST_SCALE, POST_SHIFT
from engine.models import Params
from engine.problem import Problem
from engine.solvers.base import Snapshot
from engine.solvers.paper004.cards_postprocess import PostProcessConfig
from engine.solvers.reference.unconstrained import Unconstrained

SPLIT = "val"  # paper 004, Sec. 6: validation is for tuning and model selection


@dataclass(frozen=True)
class PostProcessed:
    """The parameters to report, and what the search found, in a sentence."""

    params: Params
    note: str


class AUCPostProcess(Unconstrained):
    """The unconstrained solver, then the grid search of a map of the protected group's scores
    when the run ends (module docstring)."""

    def __init__(self, problem: Problem, config: PostProcessConfig, rng: np.random.Generator):
        super().__init__(problem, config, rng)
        self._result: PostProcessed | None = None
        self._seconds = 0.0

    def select(self, snapshots: list[Snapshot]) -> Params:
        return self._post_processed().params

    def selection_note(self) -> str:
        return self._post_processed().note

    def evaluation_seconds(self) -> float:
        return self._seconds

    def _post_processed(self) -> PostProcessed:
        """The search's result, made once (from phase 1's model when first asked)."""
        if self._result is None:
            started = time.perf_counter()
            self._result = post_process(self.problem, self.candidate(), self.config)
            self._seconds += time.perf_counter() - started
        return self._result


def grid_axis(low: float, high: float, step: float) -> np.ndarray:
    """low, low + step, … up to high (within rounding), rounded to 12 decimals so that the
    values are the doubles nearest the decimals (0.15, and exactly 1 and 0 on the paper's
    grid)."""
    count = math.floor((high - low) / step + 1e-9) + 1
    return np.round(low + step * np.arange(count), 12) + 0.0  # + 0.0: no −0


def grid(config: PostProcessConfig) -> tuple[np.ndarray, np.ndarray]:
    """The grid's ω1 (from 0) and ω2 values."""
    scales = grid_axis(0.0, config.scale_max, config.scale_step)
    return scales, grid_axis(config.shift_min, config.shift_max, config.shift_step)


def group_map(scale: float, shift: float) -> Params:
    """The parameters of the map ω1·h + ω2 on the protected group, the identity on the other."""
    scales, shifts = np.ones(2), np.zeros(2)
    scales[PROTECTED], shifts[PROTECTED] = scale, shift
    return {POST_SCALE: scales, POST_SHIFT: shifts}


def post_process(problem: Problem, params: Params, config: PostProcessConfig) -> PostProcessed:
    """`params` with the best map of the grid within κ on validation, else unmapped; the note
    says which."""
    h = problem.scores(params, SPLIT)
    unmapped = problem.report_scores(h, SPLIT, only=("auc", "constraint"))  # {}: no rows
    if unmapped.get("auc") is None or unmapped.get("constraint") is None:
        return PostProcessed(
            params,
            "no post-processing: the validation split cannot judge a "
            "map (it needs finite scores and both labels in each group); the "
            "unmapped model is reported",
        )
    kappa = problem.bound.spec.kappa
    part = problem.data.split(SPLIT)
    scales, shifts = grid(config)
    values = map_metrics(TwoGroupScores.build(h, part.groups, part.y), scales, shifts)
    gap = getattr(values, problem.bound.variant)
    feasible = gap <= kappa
    if not feasible.any():
        return PostProcessed(
            params,
            "post-processing failed: no map of the grid brings the "
            f"validation AUC gap within κ = {kappa:g} (the smallest is "
            f"{np.nanmin(gap):.4f}); the unmapped model is reported",
        )
    best = feasible & (values.auc == values.auc[feasible].max())
    distance = np.abs(scales[:, None] - 1.0) + np.abs(shifts[None, :])
    i, j = np.unravel_index(np.argmin(np.where(best, distance, np.inf)), gap.shape)
    scale, shift = float(scales[i]), float(shifts[j])
    name = problem.data.group_names[PROTECTED]
    sign = "+" if shift >= 0 else "−"
    note = (
        f"post-processing: {name}'s scores mapped to {scale:g}·h {sign} {abs(shift):g}, "
        f"validation AUC {values.auc[i, j]:.4f} and AUC gap {gap[i, j]:.4f} ≤ κ = {kappa:g} "
        f"({int(feasible.sum()):,} of {gap.size:,} maps within κ)"
    )
    return PostProcessed(params | group_map(scale, shift), note)
