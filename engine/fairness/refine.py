"""A finer surrogate of the same constraint, fitted to a model's training scores: what a run that
holds κ on the exact training value solves next when the surrogate was feasible and the exact
value was not.

Paper 003, App. F bounds the exact excess of a point feasible for model (15) by a discretisation
term O(1/|Î|) and, for each group, the share of its points close to a threshold θ_p, where the
surrogate σ and the indicator it stands for differ. Both are the solver's to shrink:

- **ranks (constraint generation).** Lemma 5.1: pSP ≤ κ iff for every p ∈ [α, β − κ(β − α)) one
  shared threshold puts every group's rank in [p, p + κ(β − α)]. Between two levels of Î two
  groups' ranks can drift apart by up to the levels' spacing, so the grid is first made as
  dense as half a band (`LEVELS_PER_BAND`, at most `MOST_LEVELS`); then, where the exact gap
  between two groups' clipped ranks (eq. 62) still exceeds the band at a threshold θ, the lower
  of those ranks is a p whose condition fails: it joins Î (`ConstraintSpec.ranks`), most
  violated first, at least a quarter band from every level already there.
- **ramp width.** σ((h − θ)/τ) differs from 1[h > θ] only for scores within the ramp's width of
  θ (τ for the ramp, about 4τ for the sigmoid, whose slope at 0 is 1/(4τ)). The width is set so
  that at every level of Î the ramp holds at most half a band of each group's scores
  (`SHARE_OF_BAND`), measured on the model's own scores: the scale of the scores is the model's,
  not the paper's fixed τ = 1.

- **the solver's tolerance.** A solver that holds each row to ≤ ε lets each of pSP's rows exceed
  its band by ε, and so the exact value by up to 2ε/(β − α); a refinement says the tolerance its
  rows need (`TOLERANCE_SHARE` of their band), which a solver that declares its tolerance
  option takes (`engine.solvers.card.SolverCard.tolerance_option`).

pDP (at θ̂, paper 003 eq. 21) has no levels: only the width, at the threshold. The rate gaps
(DP, EO, EOpp, paper 001 eq. 15/17) the same, in the cells whose rates they compare, with κ as
the band. The other families have no resolution to refine: the group-loss gap and the hinge
excess are their own exact values, and paper 004's square-loss AUC surrogate has no width; a
run holds κ on them by the inner κ′ alone (`engine.solvers.exact_train`). Each family names
its refinement on its card (`engine.fairness.families.Family.refine`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.table import GroupTable

SHARE_OF_BAND = 0.5  # the ramp holds at most this share of the band of each group's scores
# and, at every level, at least this many of them: a ramp that holds none of a group's scores
# has no slope there, and a subgradient step on its violated row would be a zero step
LEAST_RAMP_ROWS = 10
RANK_SPACING = 0.25  # an added rank lies at least this share of the band from every other level
MOST_ADDED_RANKS = 40  # ranks added in one refinement
LEVELS_PER_BAND = 2  # the grid is made this many levels per band dense
MOST_LEVELS = 200  # in all, at most
TOLERANCE_SHARE = 0.125  # a row's tolerance ε at most this share of its band
SIGMOID_WIDTH = 4.0  # the sigmoid σ(x/τ) rises with the slope of a ramp of width 4τ
NARROWER = 0.9  # a width counts as narrower below this share of the current one


@dataclass(frozen=True)
class Refinement:
    """The finer surrogate's spec and what changed: the levels of Î before and after (pSP), and
    the width τ before and after; and `tolerance`, the largest ε its rows should be held to."""

    spec: ConstraintSpec
    levels: tuple[int, int]
    temperature: tuple[float, float]
    tolerance: float

    @property
    def words(self) -> str:
        """What changed, e.g. "Î 10 → 42 ranks, ramp width τ 1 → 0.035"."""
        parts = []
        if self.levels[1] != self.levels[0]:
            parts.append(f"Î {self.levels[0]} → {self.levels[1]} ranks")
        if self.temperature[1] != self.temperature[0]:
            kind = "ramp width" if self.spec.surrogate == "ramp" else "sigmoid temperature"
            parts.append(f"{kind} τ {self.temperature[0]:.3g} → {self.temperature[1]:.3g}")
        return ", ".join(parts)


def refine_psp(
    spec: ConstraintSpec, kappa: float, h: np.ndarray, groups: np.ndarray, y: np.ndarray
) -> Refinement | None:
    """pSP (model (15)): the violated ranks added to Î and the ramp narrowed at its levels, for
    the model with training scores `h`, aiming at an exact value ≤ `kappa` (the spec's own κ may
    be an inner κ′ < κ); None when the surrogate is already as fine as these scores ask."""
    alpha, beta = spec.interval if spec.interval is not None else (0.0, 1.0)
    band = spec.kappa * (beta - alpha)
    levels = spec.rank_levels()
    if levels.size == 0:  # κ = 1: the constraint is vacuous
        return None
    dense = dataclasses.replace(spec, grid_size=max(spec.grid_size, _dense_grid_size(spec)))
    added = _violated_ranks(
        h, groups, alpha, beta, band, kappa * (beta - alpha), dense.rank_levels()
    )
    finer = dataclasses.replace(dense, ranks=(*spec.ranks, *added))
    cells = [(h[groups == k], finer.rank_levels()) for k in np.unique(groups)]
    refinement = _narrower(finer, _ramp_width(cells, band), band)
    if refinement is None:
        if finer == spec:
            return None
        refinement = Refinement(finer, (0, 0), (spec.temperature,) * 2, TOLERANCE_SHARE * band)
    return dataclasses.replace(refinement, levels=(levels.size, finer.rank_levels().size))


def refine_pdp(
    spec: ConstraintSpec, kappa: float, h: np.ndarray, groups: np.ndarray, y: np.ndarray
) -> Refinement | None:
    """pDP (model (21)): the ramp narrowed at the threshold θ̂, its band κ(β − α)."""
    alpha, beta = spec.interval if spec.interval is not None else (0.0, 1.0)
    band = spec.kappa * (beta - alpha)
    cells = _at_threshold([h[groups == k] for k in np.unique(groups)], spec.threshold)
    return _narrower(spec, _ramp_width(cells, band), band)


def refine_rate_gap(
    spec: ConstraintSpec, kappa: float, h: np.ndarray, groups: np.ndarray, y: np.ndarray
) -> Refinement | None:
    """DP, EOpp and EO (paper 001, eq. 15 and 17): σ narrowed at the threshold in every cell
    whose rate they compare (a group; its positives for EOpp; its positives and its negatives
    for EO), the band being κ itself."""
    labels = {"DP": (None,), "EOpp": (1,), "EO": (1, 0)}[spec.family]
    cells = [
        h[(groups == k) & ((y == label) if label is not None else True)]
        for k in np.unique(groups)
        for label in labels
    ]
    return _narrower(
        spec, _ramp_width(_at_threshold(cells, spec.threshold), spec.kappa), spec.kappa
    )


def _dense_grid_size(spec: ConstraintSpec) -> int:
    """The grid size that puts `LEVELS_PER_BAND` levels in each band of I's range of levels
    [α, β − κ(β − α)), at most `MOST_LEVELS`."""
    return min(MOST_LEVELS, int(np.ceil(LEVELS_PER_BAND * (1.0 - spec.kappa) / spec.kappa)))


def _violated_ranks(
    h: np.ndarray,
    groups: np.ndarray,
    alpha: float,
    beta: float,
    band: float,
    target_band: float,
    levels: np.ndarray,
) -> list[float]:
    """The ranks p whose Lemma 5.1 condition the scores break, most violated first: at each
    pooled score where the groups' clipped ranks (eq. 62) lie more than `target_band` apart, the
    lowest of them (kept inside [α, β − band), the range of Î), each at least `RANK_SPACING` of
    a band from the levels and from the ranks chosen before it."""
    table = GroupTable.build(h, groups)
    clipped = np.clip(1.0 - table.group_cdf, alpha, beta)  # (G, U): ranks at θ = each score
    gap = clipped.max(axis=0) - clipped.min(axis=0)
    violated = np.flatnonzero(gap > target_band)
    if violated.size == 0:
        return []
    highest = np.nextafter(beta - band, -np.inf)
    lowest = np.clip(clipped.min(axis=0)[violated], alpha, highest)
    candidates = lowest[np.argsort(-gap[violated], kind="stable")]
    spacing = RANK_SPACING * band
    if levels.size:  # the levels rule most candidates out: test them all at once
        candidates = candidates[_distance_to(np.sort(levels), candidates) >= spacing]
    chosen: list[float] = []
    for p in candidates:
        if all(abs(p - q) >= spacing for q in chosen):
            chosen.append(float(p))
            if len(chosen) == MOST_ADDED_RANKS:
                break
    return chosen


def _distance_to(ordered: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Each point's distance to the nearest of the sorted, non-empty `ordered`."""
    above = np.searchsorted(ordered, points)
    left = ordered[np.clip(above - 1, 0, ordered.size - 1)]
    right = ordered[np.clip(above, 0, ordered.size - 1)]
    return np.minimum(np.abs(points - left), np.abs(points - right))


def _ramp_width(cells: list[tuple[np.ndarray, np.ndarray]], band: float) -> float | None:
    """The score width of a ramp centred at each of a cell's ranks, for every (scores, ranks)
    of `cells`: the narrowest range that holds `SHARE_OF_BAND` of a band of a cell's scores,
    widened where needed so that every such range holds at least `LEAST_RAMP_ROWS` of them
    (None where the scores give no range, e.g. all tied)."""
    narrowest, widest_few = np.inf, 0.0
    for scores, ranks in cells:
        if scores.size < 2:
            continue
        share = _widths(scores, 1.0 - ranks, SHARE_OF_BAND * band)
        if share.size:
            narrowest = min(narrowest, float(share.min()))
        few = _widths(scores, 1.0 - ranks, LEAST_RAMP_ROWS / scores.size)
        if few.size:
            widest_few = max(widest_few, float(few.max()))
    return max(narrowest, widest_few) if np.isfinite(narrowest) else None


def _widths(scores: np.ndarray, quantiles: np.ndarray, share: float) -> np.ndarray:
    """The score ranges centred at `quantiles` of `scores` that hold a `share` of them (the
    ranges of tied scores, of width 0, left out)."""
    upper = np.quantile(scores, np.clip(quantiles + 0.5 * share, 0.0, 1.0))
    lower = np.quantile(scores, np.clip(quantiles - 0.5 * share, 0.0, 1.0))
    widths = upper - lower
    return widths[widths > 0]


def _at_threshold(cells: list[np.ndarray], threshold: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each cell's scores with its own rank of `threshold` (the share above it)."""
    return [(cell, np.array([np.mean(cell > threshold)])) for cell in cells if cell.size]


def _narrower(spec: ConstraintSpec, width: float | None, band: float) -> Refinement | None:
    """`spec` with the temperature whose σ has the score `width`, when that is narrower than its
    own (`NARROWER`); None otherwise. Its rows' `band` gives the tolerance they need."""
    if width is None:
        return None
    temperature = width / SIGMOID_WIDTH if spec.surrogate == "sigmoid" else width
    if temperature >= NARROWER * spec.temperature:
        return None
    levels = spec.rank_levels().size if spec.family == "pSP" else 0
    return Refinement(
        dataclasses.replace(spec, temperature=temperature),
        (levels, levels),
        (spec.temperature, temperature),
        TOLERANCE_SHARE * band,
    )
