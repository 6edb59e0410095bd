"""95 % intervals for the exact values of a model on a held-out split, and what a split can
resolve of a constrained value.

A split is a sample of a population: each exact metric on it (`engine.fairness`) estimates the
model's value there. `Estimate` is the split's value with a 95 % interval; `Resolution` the
smallest constrained value the split can tell from zero at its group sizes. They serve a
three-state verdict: "meets κ" when high ≤ κ, "misses κ" when low > κ, "cannot tell" otherwise.
So the upper end must be a valid upper bound (a population value above κ seldom meets it) and
the lower end must seldom exceed a population value of 0.

Constrained values. Every family's value is a largest gap T = max_j v_j over signed gaps v_j
(both signs of every difference: pSP per pair of groups and shared threshold, pDP, DP, EOpp and
EO per pair and label, AUC and loss gaps per pair, from the family's exact rows). The sample value
T̂ is biased upward where T is small (a maximum of noise: ≈ 0.87 √(1/n₁ + 1/n₂)/(β − α) for pSP
at T = 0), and bootstrapping T̂ itself is not consistent where T = 0 or where gaps tie for the
maximum, T̂ not being differentiable there (Andrews 2000; Fang & Santos 2019); a percentile
interval then sits too high. Each end is bounded through the gaps instead, which are smooth,
with 2.5 % for each end:
- upper end: T − T̂ ≤ v_j* − v̂_j* for a gap j* attaining T, since T̂ ≥ v̂_j*: one smooth statistic
  at a population index, whichever it is. So high = max_j (v̂_j − b_j + z se_j), with z = z_0.975,
  the bias b_j and standard error se_j of v̂_j, fails with probability ≤ 2.5 % (to the normal
  approximation of v̂_j*) at every population, T = 0 and ties included; it needs no correction
  for the many j, since only j* counts.
- lower end: T̂ − T ≤ max_j (v̂_j − v_j), the largest deviation of the gaps, as in a
  Kolmogorov–Smirnov confidence band: low = T̂ − q with q the 97.5 % quantile of that largest
  deviation. At T = 0 it says "misses" (low > 0) only when T̂ > q, 2.5 % of the time.
The interval covers T with probability ≥ 95 % (≥ 97.5 % at T = 0), clipped to the value's range.
Where T has one clear maximiser the lower end is conservative (q bounds every gap at once).

How b_j, se_j and q are estimated, per family:
- pSP: a stratified bootstrap (rows resampled within each group; 1,000 draws) of the whole gap
  process, the clipped rank differences of eq. 62 (paper 003) at every pooled score where some
  group's rank lies within 6 standard errors of I (elsewhere every rank is clipped in every draw).
  b_j and se_j are the mean and standard deviation of the draws' deviations v*_j − v̂_j, q the
  97.5 % quantile of their largest |deviation|. The bootstrap of the supremum of a centred
  empirical process is consistent (Giné & Zinn 1990; van der Vaart & Wellner 1996, §3.6),
  unlike that of T̂, except where the clip bends: a rank whose population value is an end of I.
  So within 2 standard errors of an end a rank's deviation is taken unclipped, which bounds the
  clipped one (the clip is 1-Lipschitz); simulated, this brings the "misses at 0" rate from about
  4 % to the nominal 2.5 %. Draws are vectorised: pooled scores sorted once, each draw's counts
  per threshold one `bincount`, in chunks of bounded memory.
- pDP, DP, EOpp, EO: each gap is a difference of two independent proportions (clipped to I and
  divided by β − α for pDP), so closed forms replace the bootstrap: Newcombe's hybrid score limits
  (Newcombe 1998, method 10; the MOVER of Zou & Donner 2008) from Wilson intervals of each share,
  monotone transforms carried through. The upper end is the largest 97.5 % upper limit; the lower
  end the largest simultaneous lower limit (Bonferroni over the J signed gaps, z_(1 − 0.025/J)).
- other families (paper 004's AUC gaps, paper 000's group-loss gap, paper 003's quadratic AUC
  baselines through the AUC gap they report): the pSP band from a stratified bootstrap (200
  draws) of the family's exact rows, the family bound to each draw's rows. Rows are resampled
  within (group, label) cells where the value is made of means within those cells, within groups
  otherwise (resampling a group's labels apart would drop the variance of its label mix).
Accuracy: Wilson's score interval (Wilson 1927). ROC AUC: DeLong, DeLong & Clarke-Pearson (1988)
variance with a normal interval.

Resolution: the median upper end when the population value is 0. For the bootstrap families the
draws' deviations, centred, are the noise of v̂ about v = 0 (the law the band already uses), so
each kept draw gives an upper end max_j (v*_j − v̂_j − b_j + z se_j); for the rate gaps, binomial
draws of every cell at its label's pooled share (groups that do not differ) go through the same
Newcombe upper end. Every se scales as 1/√n, so κ needs min rows × (smallest/κ)² rows in the
smallest group or cell.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from statistics import NormalDist

import numpy as np

from engine.errors import UserError
from engine.fairness._inputs import as_groups, as_labels, as_scores
from engine.fairness.auc import roc_auc
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import REPORTED_AS, check_constraint, family_entry
from engine.fairness.partial import pdp, psp
from engine.fairness.rates import (
    accuracy,
    demographic_parity_gap,
    equal_opportunity_gap,
    equalized_odds_gap,
)

LEVEL = 0.95
_TAIL = (1.0 - LEVEL) / 2.0  # each end of an interval may fail with this probability
_Z = NormalDist().inv_cdf(1.0 - _TAIL)
PSP_DRAWS = 1000
FAMILY_DRAWS = 200  # each draw binds the family to its rows: slower, so fewer
NULL_DRAWS = 2000  # binomial draws of equal groups, for a rate gap's Resolution
_MARGIN_SE = 6.0  # pSP's bootstrap skips thresholds where every rank is this far outside I
_EDGE_SE = 2.0  # and takes a rank unclipped this near I (in standard errors at its ends)
_CHUNK_BYTES = 96 << 20  # memory of one chunk of pSP's bootstrap draws
_RATE_LABELS: dict[str, tuple[int, ...] | None] = {
    "pDP": None,
    "DP": None,
    "EOpp": (1,),
    "EO": (1, 0),
}
# the rate quantities every classifier run reports (`engine.fairness.families.REPORTED_AS`),
# by family: their intervals are closed forms of a few group rates, milliseconds a split, so
# every run stores them beside its values, whatever it is held to, for any table's column of
# them ("<metric>_low", "<metric>_high")
_REPORTED_RATES = {family: REPORTED_AS[family] for family in _RATE_LABELS}


@dataclass(frozen=True)
class Estimate:
    """An exact value on a split with its 95 % interval for the population value."""

    value: float  # the exact value on the split (what engine.fairness computes)
    low: float
    high: float
    method: str  # the interval's method in a few words


@dataclass(frozen=True)
class Resolution:
    """What a split can resolve of a constrained value: `smallest` is the smallest κ the split can
    tell from zero (the typical upper end of the interval when the population value is 0);
    `group_rows` the rows of the split's groups (or of the cells that matter, e.g. (group, label)
    for EO)."""

    smallest: float
    group_rows: tuple[int, ...]

    def rows_for(self, kappa: float) -> int:
        """Rows in the smallest group (or cell) that would resolve κ, the others growing alike:
        the interval's width scales as 1/√n."""
        if not kappa > 0:
            raise UserError(f"κ must be > 0 to ask what resolves it, got {kappa}.")
        needed = min(self.group_rows) * (self.smallest / kappa) ** 2
        return max(1, math.ceil(needed - 1e-9))  # 1e-9: κ = smallest needs the rows there are


@dataclass(frozen=True)
class _Assessment:
    estimate: Estimate
    resolution: Resolution


@dataclass(frozen=True)
class _GapDraws:
    """A bootstrap of the signed gaps v_j of a value T = max_j v_j, reduced to the band's needs
    (module docstring): `upper` = max_j (v̂_j − b_j + z se_j); `deviation` the largest v*_j − v̂_j
    of every draw; `null_upper` the upper end each kept draw would give at T = 0."""

    upper: float
    deviation: np.ndarray
    null_upper: np.ndarray


def value_estimate(
    spec: ConstraintSpec | None,
    interval: tuple[float, float],
    threshold: float,
    h: np.ndarray,
    groups: np.ndarray,
    y: np.ndarray | None,
    seed: int = 0,
    *,
    draws: int | None = None,
) -> Estimate | None:
    """The exact constrained value of `spec` on these rows with its 95 % interval; None when the
    split cannot support it (a group without rows of a cell that matters, fewer than two groups,
    or a family measured on subgroups, which are not among these inputs).

    A family is measured as its bound constraint's `exact` measures it, with the spec's own I (the
    whole [0, 1] when it has none) and threshold, so `value` is what a run reports as
    "constraint". `spec` None stands for pSP on `interval`, which every classifier run reports;
    `interval` and `threshold` are the run's. `draws` overrides the bootstrap's draws."""
    assessed = _assess(spec, interval, threshold, h, groups, y, seed, draws)
    return None if assessed is None else assessed.estimate


def value_resolution(
    spec: ConstraintSpec | None,
    interval: tuple[float, float],
    threshold: float,
    h: np.ndarray,
    groups: np.ndarray,
    y: np.ndarray | None,
    seed: int = 0,
    *,
    draws: int | None = None,
) -> Resolution | None:
    """What this split can resolve of the constrained value of `spec` (as `value_estimate`)."""
    assessed = _assess(spec, interval, threshold, h, groups, y, seed, draws)
    return None if assessed is None else assessed.resolution


def accuracy_estimate(h: np.ndarray, y: np.ndarray, threshold: float) -> Estimate:
    """Accuracy at `threshold` (score > threshold predicts 1) with Wilson's score interval."""
    scores = as_scores(h)
    labels = as_labels(y, scores.size)
    correct = np.count_nonzero((scores > threshold) == (labels == 1))
    low, high = _wilson(np.array(correct), np.array(scores.size), _Z)
    return Estimate(accuracy(scores, labels, threshold), float(low), float(high), "Wilson")


def auc_estimate(h: np.ndarray, y: np.ndarray) -> Estimate | None:
    """ROC AUC (ties count ½) with DeLong's variance (DeLong et al. 1988) and a normal interval,
    clipped to [0, 1]; None with fewer than two rows of either label."""
    try:
        scores = as_scores(h)
        labels = as_labels(y, scores.size)
    except UserError:
        return None
    positives, negatives = scores[labels == 1], scores[labels == 0]
    if min(positives.size, negatives.size) < 2:
        return None
    # DeLong's structural components: each row's share of the other label it outranks
    ordered = np.sort(negatives)
    below = np.searchsorted(ordered, positives, "left") + np.searchsorted(ordered, positives)
    of_positives = below / (2.0 * negatives.size)
    ordered = np.sort(positives)
    at_or_below = np.searchsorted(ordered, negatives, "left") + np.searchsorted(ordered, negatives)
    of_negatives = 1.0 - at_or_below / (2.0 * positives.size)
    variance = of_positives.var(ddof=1) / positives.size + of_negatives.var(ddof=1) / negatives.size
    value = roc_auc(scores, labels)
    half = _Z * math.sqrt(variance)
    return Estimate(value, max(0.0, value - half), min(1.0, value + half), "DeLong")


def interval_metrics(
    spec: ConstraintSpec | None,
    interval: tuple[float, float],
    threshold: float,
    h: np.ndarray,
    groups: np.ndarray,
    y: np.ndarray | None,
    seed: int = 0,
) -> dict[str, float | None]:
    """Flat metrics to store beside a split's exact ones: "constraint_low", "constraint_high",
    "constraint_resolves" (`Resolution.smallest`) and "constraint_rows" (the smallest group's or
    cell's rows, for `Resolution.rows_for`) of the constrained value of `spec`, or the same four
    as "psp_…" for pSP on `interval` when the run has no constraint; the intervals of the rate
    quantities every run reports (`_REPORTED_RATES`: "dp_low", "dp_high", ...); then
    "accuracy_low", "accuracy_high", "auc_low" and "auc_high". A value the split cannot support
    is None."""
    prefix = "constraint" if spec is not None else "psp"
    assessed = _assess(spec, interval, threshold, h, groups, y, seed, None)
    metrics: dict[str, float | None] = dict.fromkeys(
        (f"{prefix}_low", f"{prefix}_high", f"{prefix}_resolves", f"{prefix}_rows")
    )
    if assessed is not None:
        estimate, resolution = assessed.estimate, assessed.resolution
        metrics |= {
            f"{prefix}_low": estimate.low,
            f"{prefix}_high": estimate.high,
            f"{prefix}_resolves": resolution.smallest,
            f"{prefix}_rows": float(min(resolution.group_rows)),
        }
    for family, metric in _REPORTED_RATES.items():
        quantity = ConstraintSpec(
            family, 1.0, interval if family == "pDP" else None, threshold=threshold
        )
        rated = _assess(quantity, interval, threshold, h, groups, y, seed, None)
        metrics[f"{metric}_low"] = None if rated is None else rated.estimate.low
        metrics[f"{metric}_high"] = None if rated is None else rated.estimate.high
    labelled: dict[str, Estimate | None] = {"accuracy": None, "auc": None}
    if y is not None:
        with suppress(UserError):  # not 0/1 labels, or no rows: no accuracy to bound
            labelled["accuracy"] = accuracy_estimate(h, y, threshold)
        labelled["auc"] = auc_estimate(h, y)
    for name, estimate in labelled.items():
        metrics[f"{name}_low"] = None if estimate is None else estimate.low
        metrics[f"{name}_high"] = None if estimate is None else estimate.high
    return metrics


# ---- dispatch ---------------------------------------------------------------------------------
def _assess(
    spec: ConstraintSpec | None,
    interval: tuple[float, float],
    threshold: float,
    h: np.ndarray,
    groups: np.ndarray,
    y: np.ndarray | None,
    seed: int,
    draws: int | None,
) -> _Assessment | None:
    quantity = (
        spec if spec is not None else ConstraintSpec("pSP", 1.0, interval, threshold=threshold)
    )
    check_constraint(quantity)  # a bad spec is the caller's error, not the split's
    if family_entry(quantity.family).uses_subgroups:
        return None
    rng = np.random.default_rng(seed)
    try:
        scores = as_scores(h)
        ids, _ = as_groups(groups, scores.size)
        labels = None if y is None else as_labels(y, scores.size)
        if quantity.family == "pSP":
            return _psp_assessment(quantity, scores, ids, rng, draws or PSP_DRAWS)
        if quantity.family in _RATE_LABELS:
            return _rate_assessment(quantity, scores, ids, labels, rng)
        return _family_assessment(quantity, scores, ids, labels, rng, draws or FAMILY_DRAWS)
    except UserError:  # the split cannot support the value (e.g. a group without positives)
        return None


def _band(value: float, draws: _GapDraws, top: float, method: str, rows: np.ndarray) -> _Assessment:
    """The interval and resolution of T = max_j v_j from its gaps' bootstrap (module docstring)."""
    half_width = float(np.quantile(draws.deviation, 1.0 - _TAIL))
    low = min(value, max(0.0, value - half_width))
    high = min(top, max(value, draws.upper))
    smallest = float(np.clip(np.median(draws.null_upper), 0.0, top))
    return _Assessment(
        Estimate(value, low, high, method),
        Resolution(smallest, tuple(int(r) for r in rows)),
    )


def _interval_of(spec: ConstraintSpec) -> tuple[float, float]:
    """I = [α, β) of a spec, the whole [0, 1] when it has none (as its bound constraint reads it)."""
    return spec.interval if spec.interval is not None else (0.0, 1.0)


def _clipped(ranks: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    # paper 003, eq. 62: Pr(h > θ | group k, F̄_k(h) ∈ I) = (clip(F̄_k(θ), α, β) − α)/(β − α)
    return np.clip((ranks - alpha) / (beta - alpha), 0.0, 1.0)


# ---- pSP: the bootstrap of the gap process ----------------------------------------------------
def _psp_assessment(
    spec: ConstraintSpec, h: np.ndarray, groups: np.ndarray, rng: np.random.Generator, draws: int
) -> _Assessment:
    alpha, beta = _interval_of(spec)
    sizes = np.bincount(groups)
    if sizes.min() < 2:
        raise UserError("a group of one row does not vary under resampling")
    value = psp(h, groups, alpha, beta)
    process = _psp_draws(h, groups, sizes, alpha, beta, rng, draws)
    method = f"bootstrap band within groups, {draws:,} draws"
    return _band(value, process, 1.0, method, sizes)


def _psp_draws(
    h: np.ndarray,
    groups: np.ndarray,
    sizes: np.ndarray,
    alpha: float,
    beta: float,
    rng: np.random.Generator,
    draws: int,
) -> _GapDraws:
    """The bootstrap of pSP's gap process D_kk'(θ) = c_k(θ) − c_k'(θ), rows resampled within
    groups; its signed gaps are ±D, so the deviations are |D* − D̂| and b enters as |D̂ − b|.
    The draws are float32: deviations of shares of at most 2²⁴ rows, summed in float64."""
    n_groups = sizes.size
    values, inverse = np.unique(h, return_inverse=True)
    counts = np.bincount(groups * values.size + inverse, minlength=n_groups * values.size)
    ranks = 1.0 - np.cumsum(counts.reshape(n_groups, -1), axis=1) / sizes[:, None]
    margin = _MARGIN_SE * 0.5 / np.sqrt(sizes)[:, None]  # 0.5/√n: a share's largest SE
    kept = np.flatnonzero(((ranks >= alpha - margin) & (ranks <= beta + margin)).any(axis=0))
    if kept.size == 0:  # every rank clipped in every draw: the gaps do not vary
        return _GapDraws(0.0, np.zeros(draws), np.zeros(1))
    # a row counts below every kept threshold at or above its score (rows above all: in none)
    bins = [np.searchsorted(kept, inverse[groups == k]) for k in range(n_groups)]
    first, second = np.triu_indices(n_groups, 1)
    observed = ranks[:, kept]
    clipped = _clipped(observed, alpha, beta)
    gaps = clipped[first] - clipped[second]  # (P, K)
    # a rank is clipped to I, except within 2 SEs of I, where its deviation is taken unclipped
    # (module docstring: the clip's bootstrap fails at the ends of I)
    ends = _EDGE_SE * np.sqrt(np.outer(1.0 / sizes, [alpha * (1 - alpha), beta * (1 - beta)]))
    linear = (observed >= alpha - ends[:, :1]) & (observed <= beta + ends[:, 1:])
    floor = np.where(linear, -np.inf, alpha).astype(np.float32)
    ceiling = np.where(linear, np.inf, beta).astype(np.float32)
    anchor = np.clip(observed.astype(np.float32), floor, ceiling)
    # bytes a draw holds: a group's drawn rows (int64), its counts, ranks and deviations
    per_draw = 16 * int(sizes.max()) + 4 * (n_groups + 3 * first.size + 3) * (kept.size + 1)
    chunk = max(1, min(draws, _CHUNK_BYTES // per_draw))
    total, squares = np.zeros_like(gaps), np.zeros_like(gaps)
    deviation, kept_deviations = [], None
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        shifts = np.empty((size, n_groups, kept.size), dtype=np.float32)
        for k in range(n_groups):
            shifts[:, k] = _resampled_ranks(bins[k], kept.size, size, rng)
        np.clip(shifts, floor, ceiling, out=shifts)
        shifts -= anchor
        deviations = shifts[:, first]
        deviations -= shifts[:, second]
        deviations /= beta - alpha  # (size, P, K): D* − D̂
        total += deviations.sum(axis=0, dtype=np.float64)
        squares += np.einsum("bpk,bpk->pk", deviations, deviations, dtype=np.float64)
        deviation.append(np.maximum(deviations.max(axis=(1, 2)), -deviations.min(axis=(1, 2))))
        if kept_deviations is None:
            kept_deviations = deviations
    bias = total / draws
    margin_of = _Z * np.sqrt(np.maximum(squares / draws - bias**2, 0.0))
    upper = float((np.abs(gaps - bias) + margin_of).max())
    null_upper = (np.abs(kept_deviations - bias) + margin_of).max(axis=(1, 2))
    return _GapDraws(upper, np.concatenate(deviation), null_upper)


def _resampled_ranks(
    bins: np.ndarray, n_kept: int, size: int, rng: np.random.Generator
) -> np.ndarray:
    """(size, K) a group's share of rows above each kept threshold in `size` bootstrap draws of
    its rows (`bins`: each row's first kept threshold at or above its score)."""
    drawn = bins[rng.integers(0, bins.size, size=(size, bins.size))]
    drawn += (np.arange(size) * (n_kept + 1))[:, None]  # one block of bins per draw
    counts = np.bincount(drawn.ravel(), minlength=size * (n_kept + 1)).reshape(size, -1)
    ranks = counts[:, :n_kept].astype(np.float32)  # exact: counts below 2²⁴
    np.cumsum(ranks, axis=1, out=ranks)
    ranks *= -1.0 / bins.size
    ranks += 1.0
    return ranks


# ---- rate gaps: Newcombe's limits --------------------------------------------------------------
def _rate_assessment(
    spec: ConstraintSpec,
    h: np.ndarray,
    groups: np.ndarray,
    y: np.ndarray | None,
    rng: np.random.Generator,
) -> _Assessment:
    family, threshold = spec.family, float(spec.threshold)
    labels = _RATE_LABELS[family]
    scale: Callable[[np.ndarray], np.ndarray] = np.asarray  # how the gap reads each share
    if family == "pDP":
        alpha, beta = _interval_of(spec)
        value = pdp(h, groups, alpha, beta, threshold)
        scale = partial(_clipped, alpha=alpha, beta=beta)  # paper 003, eq. 62 at θ̂
    elif family == "DP":
        value = demographic_parity_gap(h, groups, threshold)
    elif y is None:
        raise UserError(f"{family} needs the labels y")
    else:
        gap = equal_opportunity_gap if family == "EOpp" else equalized_odds_gap
        value = gap(h, groups, y, threshold)  # raises for a group without a needed label
    n_groups = int(groups.max()) + 1
    cells = [np.ones(h.size, bool)] if labels is None else [y == label for label in labels]
    above = np.array([np.bincount(groups[c & (h > threshold)], minlength=n_groups) for c in cells])
    sizes = np.array([np.bincount(groups[c], minlength=n_groups) for c in cells])  # (L, G)
    signed = sizes.shape[0] * n_groups * (n_groups - 1)  # gaps, each pair both ways
    simultaneous = NormalDist().inv_cdf(1.0 - _TAIL / signed)  # Bonferroni over them
    high = max(_newcombe_uppers(x, n, _Z, scale).max() for x, n in zip(above, sizes, strict=True))
    low = max(
        -_newcombe_uppers(x, n, simultaneous, scale).min()
        for x, n in zip(above, sizes, strict=True)
    )
    # Resolution: every cell drawn at its label's pooled share, the groups not differing
    null_upper = np.full(NULL_DRAWS, -np.inf)
    for x, n in zip(above, sizes, strict=True):
        pooled = rng.binomial(n, x.sum() / n.sum(), size=(NULL_DRAWS, n_groups))
        null_upper = np.maximum(null_upper, _newcombe_uppers(pooled, n, _Z, scale).max(axis=-1))
    estimate = Estimate(
        value,
        min(value, max(0.0, float(low))),
        min(1.0, max(value, float(high))),
        "Newcombe (Wilson) per gap, max over pairs",
    )
    smallest = float(np.clip(np.median(null_upper), 0.0, 1.0))
    return _Assessment(estimate, Resolution(smallest, tuple(int(r) for r in sizes.ravel())))


def _wilson(successes: np.ndarray, trials: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval for a share (Wilson 1927), elementwise; trials > 0."""
    z2 = z * z
    centre = (successes + z2 / 2.0) / (trials + z2)
    half = z / (trials + z2) * np.sqrt(successes * (trials - successes) / trials + z2 / 4.0)
    return np.maximum(centre - half, 0.0), np.minimum(centre + half, 1.0)


def _newcombe_uppers(
    above: np.ndarray, sizes: np.ndarray, z: float, scale: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """(…, G(G − 1)) Newcombe's upper limit of scale(p_a) − scale(p_b) for every ordered pair
    a ≠ b of shares p = above/sizes (`above` (…, G)): the MOVER from Wilson limits (Zou & Donner
    2008) carried through the monotone `scale`. The lower limit of a − b is minus the
    upper limit of b − a."""
    low, high = _wilson(above, sizes, z)
    share, down, up = scale(above / sizes), scale(low), scale(high)
    room = np.sqrt(((up - share) ** 2)[..., :, None] + ((share - down) ** 2)[..., None, :])
    limits = share[..., :, None] - share[..., None, :] + room
    return limits[..., ~np.eye(sizes.size, dtype=bool)]


# ---- other families: the bootstrap of their exact rows -----------------------------------------
def _family_assessment(
    spec: ConstraintSpec,
    h: np.ndarray,
    groups: np.ndarray,
    y: np.ndarray | None,
    rng: np.random.Generator,
    draws: int,
) -> _Assessment:
    from engine.fairness.constraints import bind_ids, family  # torch: only these families need it

    measured = spec
    if family_entry(spec.family).kappa_scale:  # κ bounds a surrogate; its exact value is an AUC gap
        measured = ConstraintSpec("auc_gap", 1.0, options={"variant": family(spec.family).variant})
    names = [str(k) for k in range(int(groups.max()) + 1)]
    bound = bind_ids(measured, ids=groups, names=names, y=y)
    value = float(bound.exact(h))
    gaps = bound.exact_rows(h) + measured.kappa  # the signed gaps; their maximum is the value
    # paper 004's group AUC gap compares whole groups (Ex. 1), whatever its batches need
    within_labels = y is not None and bound.label_cells and getattr(bound, "variant", "") != "group"
    strata = 2 * groups + y if within_labels else groups
    members = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    rows = np.array([m.size for m in members])
    if rows.min() < 2:
        raise UserError("a cell of one row does not vary under resampling")
    # a draw's rows come stratum by stratum, so every draw has the same group at each place, and
    # the same label too where the strata are (group, label) cells or the labels are not read:
    # one binding then serves every draw
    every_draw = None
    if y is None or within_labels or not bound.needs_labels:
        in_strata = np.concatenate(members)
        every_draw = bound.with_ids(groups[in_strata], None if y is None else y[in_strata])
    resampled = np.empty((draws, gaps.size))
    for b in range(draws):
        picked = np.concatenate([m[rng.integers(0, m.size, m.size)] for m in members])
        on_draw = every_draw
        if on_draw is None:
            on_draw = bound.with_ids(groups[picked], y[picked])
        resampled[b] = on_draw.exact_rows(h[picked]) + measured.kappa
    deviations = resampled - gaps
    bias = deviations.mean(axis=0)
    margin_of = _Z * deviations.std(axis=0)
    process = _GapDraws(
        float((gaps - bias + margin_of).max()),
        deviations.max(axis=1),
        (deviations - bias + margin_of).max(axis=1),
    )
    cells = "(group, label) cells" if within_labels else "groups"
    top = 1.0 if measured.family == "auc_gap" else math.inf
    return _band(value, process, top, f"bootstrap band within {cells}, {draws:,} draws", rows)
