"""95 % intervals of held-out values (`engine.fairness.intervals`), checked by simulation where the
population value is known: group scores drawn from normal distributions whose pSP on I, DP, EOpp
and EO gaps, accuracy and AUC follow in closed form (pSP on a fine grid of thresholds). Each
calibration test draws a split many times and counts how often the interval holds the population
value, how often its upper end falls below it (a "meets κ" verdict for a κ just under the truth)
and, at a population value of 0, how often its lower end exceeds 0 (a "misses" verdict). The
counts are held to the nominal rates with a one-sided binomial tolerance (the 99.9 % quantile of
the count at the nominal rate). The bootstrap of pSP runs with 300 draws here instead of 1,000,
to keep the file fast; the method is the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, norm

from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.errors import UserError
from engine.fairness import demographic_parity_gap, psp, roc_auc
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.intervals import (
    LEVEL,
    Estimate,
    Resolution,
    accuracy_estimate,
    auc_estimate,
    interval_metrics,
    value_estimate,
    value_resolution,
)
from engine.models import ModelSpec
from engine.problem import Problem

INTERVAL = (0.05, 0.30)
DRAWS = 300  # pSP's bootstrap draws in these tests (1,000 in use)
PREVALENCE = 0.3  # share of positive labels
SEPARATION = 1.2  # positives score this much higher
THRESHOLD = 0.5


# ---- population values --------------------------------------------------------------------------
def population_psp(shifts, scales, alpha: float, beta: float) -> float:
    """pSP on I of normal groups N(shift, scale²), on a grid of 400,001 thresholds."""
    theta = np.linspace(-12.0, 12.0, 400_001)
    clipped = [
        np.clip((norm.sf(theta, m, s) - alpha) / (beta - alpha), 0, 1)
        for m, s in zip(shifts, scales, strict=True)
    ]
    return max(np.abs(a - b).max() for a in clipped for b in clipped)


def population_rate(shift: float, label: int | None) -> float:
    """Pr(h > THRESHOLD | group, label) for h = SEPARATION·y + shift + N(0, 1)."""
    if label is None:
        return PREVALENCE * population_rate(shift, 1) + (1 - PREVALENCE) * population_rate(shift, 0)
    return float(norm.sf(THRESHOLD, SEPARATION * label + shift))


def population_gap(shifts, labels: tuple[int | None, ...]) -> float:
    return max(
        abs(population_rate(a, lab) - population_rate(b, lab))
        for lab in labels
        for a in shifts
        for b in shifts
    )


# ---- simulation ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Calibration:
    """Shares of the replications: the interval holds the truth, its upper end is below the
    truth, its lower end is above 0."""

    replications: int
    covered: float
    below_truth: float
    above_zero: float

    def at_most(self, share: float, rate: float) -> bool:
        """`share` of the replications is within the binomial tolerance of a nominal `rate`."""
        return share * self.replications <= binom.ppf(0.999, self.replications, rate)


def calibrate(estimate: Callable[[int], Estimate], truth: float, replications: int) -> Calibration:
    drawn = [estimate(r) for r in range(replications)]
    low = np.array([e.low for e in drawn])
    high = np.array([e.high for e in drawn])
    assert all(e.low <= e.value <= e.high for e in drawn)
    return Calibration(
        replications,
        float(np.mean((low <= truth) & (truth <= high))),
        float(np.mean(high < truth)),
        float(np.mean(low > 0)),
    )


def labelled_split(rng, sizes, shifts):
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = (rng.random(groups.size) < PREVALENCE).astype(np.int64)
    h = SEPARATION * y + np.asarray(shifts)[groups] + rng.normal(size=groups.size)
    return h, groups, y


def psp_calibration(sizes, shifts, scales, replications: int = 200) -> tuple[Calibration, float]:
    groups = np.repeat(np.arange(len(sizes)), sizes)
    loc, scale = np.asarray(shifts)[groups], np.asarray(scales)[groups]

    def estimate(r: int) -> Estimate:
        h = loc + scale * np.random.default_rng(1000 + r).normal(size=groups.size)
        return value_estimate(None, INTERVAL, 0.0, h, groups, None, seed=r, draws=DRAWS)

    truth = population_psp(shifts, scales, *INTERVAL)
    return calibrate(estimate, truth, replications), truth


# ---- calibration: pSP ---------------------------------------------------------------------------
def test_psp_at_zero_covers_and_seldom_says_misses():
    calibration, truth = psp_calibration((400, 800), (0.0, 0.0), (1.0, 1.0))
    assert truth == 0.0
    assert calibration.at_most(1 - calibration.covered, 1 - LEVEL)
    assert calibration.at_most(calibration.above_zero, (1 - LEVEL) / 2)


def test_psp_at_a_clear_gap_covers_and_its_upper_end_holds():
    calibration, truth = psp_calibration((400, 800), (0.0, 0.4), (1.0, 1.0))
    assert truth > 0.4
    assert calibration.at_most(1 - calibration.covered, 1 - LEVEL)
    assert calibration.at_most(calibration.below_truth, (1 - LEVEL) / 2)
    assert calibration.above_zero > 0.8  # the split tells this gap from 0 most of the time


def test_psp_with_three_groups_at_zero_seldom_says_misses():
    """The largest of three pairs' gaps is larger still; the band covers every pair."""
    calibration, _ = psp_calibration((300, 300, 600), (0.0,) * 3, (1.0,) * 3, replications=150)
    assert calibration.at_most(calibration.above_zero, (1 - LEVEL) / 2)


@pytest.mark.slow
def test_psp_where_the_groups_differ_in_spread_covers():
    """Scales differ: the gap peaks where one group's rank leaves I, the clip's kink."""
    calibration, truth = psp_calibration((300, 600), (0.0, 0.0), (1.0, 1.4), replications=400)
    assert truth > 0.2
    assert calibration.at_most(1 - calibration.covered, 1 - LEVEL)
    assert calibration.at_most(calibration.below_truth, (1 - LEVEL) / 2)


# ---- calibration: rate gaps ---------------------------------------------------------------------
RATE_CASES = [  # family, the labels its gap is over, threshold's spec, I
    ("DP", (None,)),
    ("EOpp", (1,)),
    ("EO", (1, 0)),
]


@pytest.mark.parametrize(("family", "labels"), RATE_CASES)
@pytest.mark.parametrize("shift", [0.0, 0.35])
def test_rate_gaps_cover_their_population_value(family, labels, shift):
    sizes, shifts = (300, 700), (0.0, shift)
    spec = ConstraintSpec(family, 0.1, threshold=THRESHOLD)

    def estimate(r: int) -> Estimate:
        h, groups, y = labelled_split(np.random.default_rng(r), sizes, shifts)
        return value_estimate(spec, INTERVAL, THRESHOLD, h, groups, y)

    truth = population_gap(shifts, labels)
    calibration = calibrate(estimate, truth, 600)
    assert calibration.at_most(1 - calibration.covered, 1 - LEVEL)
    assert calibration.at_most(calibration.below_truth, (1 - LEVEL) / 2)
    if shift == 0.0:
        assert calibration.at_most(calibration.above_zero, (1 - LEVEL) / 2)
    else:
        assert truth > 0.07 and calibration.above_zero > 0.3


def test_pdp_clips_the_rates_to_i_and_covers():
    """At θ̂ = 1.5 the rates (≈ 0.09 and 0.17) lie in I, where pDP is their scaled gap."""
    sizes, shifts, threshold = (400, 800), (0.0, 0.4), 1.5
    spec = ConstraintSpec("pDP", 0.1, INTERVAL, threshold=threshold)

    def estimate(r: int) -> Estimate:
        h, groups, y = labelled_split(np.random.default_rng(r), sizes, shifts)
        return value_estimate(spec, INTERVAL, threshold, h, groups, y)

    rates = [
        PREVALENCE * norm.sf(threshold, SEPARATION + s) + (1 - PREVALENCE) * norm.sf(threshold, s)
        for s in shifts
    ]
    truth = abs(np.diff(np.clip((np.array(rates) - 0.05) / 0.25, 0, 1)))[0]
    calibration = calibrate(estimate, truth, 600)
    assert truth > 0.2
    assert calibration.at_most(1 - calibration.covered, 1 - LEVEL)
    assert calibration.at_most(calibration.below_truth, (1 - LEVEL) / 2)


def test_the_group_auc_gap_bootstrap_covers_its_population_value():
    """Paper 004's group AUC gap |AUC(group 0, group 1) − ½| through the family's exact rows."""
    sizes, shifts = (300, 600), (0.0, 0.3)
    spec = ConstraintSpec("auc_gap", 0.05)

    def estimate(r: int) -> Estimate:
        h, groups, y = labelled_split(np.random.default_rng(r), sizes, shifts)
        return value_estimate(spec, INTERVAL, 0.0, h, groups, y, seed=r, draws=100)

    # each group a mixture of N(shift + 1.2 y, 1): AUC = Σ weights · Φ(mean difference / √2)
    means = [
        (s + SEPARATION * label, PREVALENCE if label else 1 - PREVALENCE)
        for s in shifts
        for label in (0, 1)
    ]
    first, second = means[:2], means[2:]
    auc = sum(wa * wb * norm.cdf((ma - mb) / np.sqrt(2)) for ma, wa in first for mb, wb in second)
    calibration = calibrate(estimate, abs(auc - 0.5), 150)
    assert abs(auc - 0.5) > 0.05
    assert calibration.at_most(1 - calibration.covered, 1 - LEVEL)
    assert calibration.at_most(calibration.below_truth, (1 - LEVEL) / 2)


# ---- calibration: accuracy and AUC --------------------------------------------------------------
def test_accuracy_and_auc_intervals_hold_their_population_values_at_the_nominal_rate():
    accuracy = PREVALENCE * norm.sf(THRESHOLD, SEPARATION) + (1 - PREVALENCE) * norm.cdf(THRESHOLD)
    auc = norm.cdf(SEPARATION / np.sqrt(2.0))  # Pr(N(1.2, 1) > N(0, 1))
    accuracies, aucs = [], []
    for r in range(800):
        h, _, y = labelled_split(np.random.default_rng(r), (500,), (0.0,))
        accuracies.append(accuracy_estimate(h, y, THRESHOLD))
        aucs.append(auc_estimate(h, y))
    for truth, estimates in ((accuracy, accuracies), (auc, aucs)):
        covered = np.mean([e.low <= truth <= e.high for e in estimates])
        tolerance = 3.3 * np.sqrt(LEVEL * (1 - LEVEL) / len(estimates))
        assert abs(covered - LEVEL) <= tolerance  # nominal, neither too narrow nor too wide


def test_auc_estimate_is_the_engine_auc_with_ties():
    rng = np.random.default_rng(3)
    h = rng.integers(0, 5, 300).astype(float)
    y = (rng.random(300) < 0.4).astype(int)
    estimate = auc_estimate(h, y)
    assert estimate.value == roc_auc(h, y)
    assert 0.0 <= estimate.low < estimate.value < estimate.high <= 1.0


# ---- the value is the one a run reports ---------------------------------------------------------
def toy_problem(spec: ConstraintSpec) -> Problem:
    rng = np.random.default_rng(0)
    n = 3000
    group = rng.integers(0, 3, n)
    x = rng.normal(size=n) + 0.6 * group
    label = (x + rng.normal(size=n) > 0.5).astype(np.int8)
    frame = pd.DataFrame({"x": x, "g": np.array(["a", "b", "c"])[group]})
    dataset = Dataset(
        name="toy",
        frame=frame,
        label=label,
        numeric=("x",),
        categorical=(),
        protected=("g",),
        label_name="y",
    )
    prepared = prepare(dataset, PrepareOptions(grouping=(GroupingSpec("g"),), seed=0))
    return Problem(prepared, ModelSpec(), spec, interval=INTERVAL)


@pytest.mark.parametrize(
    "spec",
    [
        ConstraintSpec("pSP", 0.1, INTERVAL),
        ConstraintSpec("pSP", 0.1),  # no interval: the whole [0, 1], as its constraint reads it
        ConstraintSpec("pDP", 0.1, (0.2, 0.6), threshold=0.3),
        ConstraintSpec("DP", 0.05, threshold=-0.2),
        ConstraintSpec("EO", 0.05),
        ConstraintSpec("EOpp", 0.05),
        ConstraintSpec("auc_gap", 0.05),
        ConstraintSpec("quad_group_auc", 0.05),
        ConstraintSpec("group_loss_gap", 0.05),
        ConstraintSpec("group_loss_gap", 0.05, pairs="all", options={"condition": "odds"}),
    ],
    ids=lambda spec: f"{spec.family}{dict(spec.options) or ''}",
)
def test_the_value_is_what_the_run_reports_as_its_constraint(spec):
    problem = toy_problem(spec)
    part = problem.data.split("val")
    h = np.random.default_rng(1).normal(size=len(part)) + 0.5 * part.groups
    reported = problem.report_scores(h, "val", ("constraint",))["constraint"]
    estimate = value_estimate(
        spec, problem.interval, problem.threshold, h, part.groups, part.y, draws=50
    )
    assert estimate.value == reported
    assert estimate.low <= estimate.value <= estimate.high


def test_without_a_constraint_the_metrics_bound_psp_on_the_interval():
    problem = toy_problem(None)
    part = problem.data.split("val")
    h = np.random.default_rng(2).normal(size=len(part)) + 0.3 * part.groups
    report = problem.report_scores(h, "val", ("psp", "accuracy", "auc"))
    metrics = interval_metrics(None, INTERVAL, 0.0, h, part.groups, part.y)
    rates = {f"{m}_{end}" for m in ("pdp", "dp", "eopp", "eo") for end in ("low", "high")}
    assert (
        set(metrics)
        == {
            "psp_low",
            "psp_high",
            "psp_resolves",
            "psp_rows",
            "accuracy_low",
            "accuracy_high",
            "auc_low",
            "auc_high",
        }
        | rates
    )
    for name in ("psp", "accuracy", "auc"):
        assert metrics[f"{name}_low"] <= report[name] <= metrics[f"{name}_high"]
    assert metrics["psp_rows"] == np.bincount(part.groups).min()
    assert 0 < metrics["psp_resolves"] < 1


@pytest.mark.parametrize("spec", [None, ConstraintSpec("pSP", 0.1, INTERVAL)], ids=["none", "pSP"])
def test_every_run_bounds_the_rate_gaps_it_reports_whatever_it_is_held_to(spec):
    """The pDP, DP, EOpp and EO gaps every run reports carry their intervals, the same as a run
    held to each of them gets for its constraint."""
    problem = toy_problem(spec)
    part = problem.data.split("val")
    h = np.random.default_rng(3).normal(size=len(part)) + 0.4 * part.groups
    report = problem.report_scores(h, "val")
    metrics = interval_metrics(spec, INTERVAL, 0.0, h, part.groups, part.y)
    for family, metric in (("pDP", "pdp"), ("DP", "dp"), ("EOpp", "eopp"), ("EO", "eo")):
        held = ConstraintSpec(family, 0.05, INTERVAL if family == "pDP" else None)
        estimate = value_estimate(held, INTERVAL, 0.0, h, part.groups, part.y)
        assert estimate.value == pytest.approx(report[metric])
        assert (metrics[f"{metric}_low"], metrics[f"{metric}_high"]) == (
            estimate.low,
            estimate.high,
        )
        assert metrics[f"{metric}_low"] <= report[metric] <= metrics[f"{metric}_high"]


# ---- resolution ---------------------------------------------------------------------------------
def test_rows_for_scales_the_smallest_cell_by_the_squared_ratio():
    resolution = Resolution(smallest=0.1, group_rows=(400, 100))
    assert resolution.rows_for(0.1) == 100
    assert resolution.rows_for(0.05) == 400
    assert resolution.rows_for(0.2) == 25
    assert resolution.rows_for(0.3) == 12  # 100 / 9 = 11.1, rounded up
    with pytest.raises(UserError):
        resolution.rows_for(0.0)


@pytest.mark.parametrize(
    "spec",
    [None, ConstraintSpec("DP", 0.1), ConstraintSpec("auc_gap", 0.1)],
    ids=lambda spec: "pSP" if spec is None else spec.family,
)
def test_a_four_times_larger_split_resolves_half_the_gap(spec):
    def resolution(scale: int) -> Resolution:
        h, groups, y = labelled_split(
            np.random.default_rng(5), (250 * scale, 500 * scale), (0.0, 0.0)
        )
        return value_resolution(spec, INTERVAL, 0.0, h, groups, y, draws=DRAWS)

    small, large = resolution(1), resolution(4)
    assert large.smallest / small.smallest == pytest.approx(0.5, abs=0.08)
    assert min(large.group_rows) == 4 * min(small.group_rows)
    # the rows the small split needs for the large split's κ are about the large split's
    assert small.rows_for(large.smallest) == pytest.approx(min(large.group_rows), rel=0.35)


def test_resolution_is_the_typical_upper_end_at_zero():
    sizes = (300, 600)
    groups = np.repeat([0, 1], sizes)
    highs = [
        value_estimate(
            None,
            INTERVAL,
            0.0,
            np.random.default_rng(r).normal(size=900),
            groups,
            None,
            seed=r,
            draws=DRAWS,
        ).high
        for r in range(60)
    ]
    h = np.random.default_rng(99).normal(size=900)
    smallest = value_resolution(None, INTERVAL, 0.0, h, groups, None, draws=DRAWS).smallest
    assert smallest == pytest.approx(np.median(highs), rel=0.2)


def test_eo_resolution_counts_the_label_cells():
    h, groups, y = labelled_split(np.random.default_rng(6), (200, 300), (0.0, 0.0))
    resolution = value_resolution(ConstraintSpec("EO", 0.1), INTERVAL, 0.0, h, groups, y)
    cells = [np.count_nonzero((groups == g) & (y == label)) for label in (1, 0) for g in (0, 1)]
    assert resolution.group_rows == tuple(cells)


# ---- determinism, ties, and what a split cannot support ----------------------------------------
def test_a_seed_fixes_the_interval():
    h, groups, y = labelled_split(np.random.default_rng(7), (200, 400), (0.0, 0.2))
    first = interval_metrics(None, INTERVAL, 0.0, h, groups, y, seed=3)
    assert interval_metrics(None, INTERVAL, 0.0, h, groups, y, seed=3) == first
    other = interval_metrics(None, INTERVAL, 0.0, h, groups, y, seed=4)
    assert other["psp_high"] != first["psp_high"]


def test_tied_scores_give_the_engine_value_inside_its_interval():
    rng = np.random.default_rng(8)
    groups = np.repeat([0, 1, 2], (150, 200, 250))
    h = np.round(rng.normal(size=groups.size) + 0.2 * groups, 1)  # about 60 distinct scores
    estimate = value_estimate(None, INTERVAL, 0.0, h, groups, None, draws=DRAWS)
    assert estimate.value == psp(h, groups, *INTERVAL)
    assert estimate.low <= estimate.value <= estimate.high <= 1.0


def test_a_split_that_cannot_support_a_value_gives_none():
    rng = np.random.default_rng(9)
    groups = np.repeat([0, 1], 50)
    h = rng.normal(size=100)
    y = rng.integers(0, 2, 100)
    y[groups == 1] = 0  # group 1 has no positives: no true-positive rate
    for family in ("EO", "EOpp"):
        assert value_estimate(ConstraintSpec(family, 0.1), INTERVAL, 0.0, h, groups, y) is None
    assert value_estimate(ConstraintSpec("EO", 0.1), INTERVAL, 0.0, h, groups, None) is None
    one_group = np.zeros(100, dtype=int)
    assert value_estimate(None, INTERVAL, 0.0, h, one_group, None) is None
    lone = np.r_[np.zeros(99, dtype=int), 1]  # a group of one row does not vary when resampled
    assert value_estimate(None, INTERVAL, 0.0, h, lone, None) is None
    assert (
        value_resolution(ConstraintSpec("intersectional_hinge", 0.1), INTERVAL, 0.0, h, groups, y)
        is None
    )  # its subgroups are not among the inputs
    assert auc_estimate(h, np.r_[1, np.zeros(99, dtype=int)]) is None
    metrics = interval_metrics(ConstraintSpec("EO", 0.1), INTERVAL, 0.0, h, groups, None)
    needing_labels = {k: v for k, v in metrics.items() if not k.startswith(("dp_", "pdp_"))}
    assert set(needing_labels.values()) == {None}  # the DP gaps need no labels
    assert metrics["dp_low"] <= demographic_parity_gap(h, groups, 0.0) <= metrics["dp_high"]


def test_tiny_groups_still_get_a_valid_rate_interval():
    h = np.array([1.0, -1.0, 0.5, 2.0])
    groups = np.array([0, 0, 1, 1])
    estimate = value_estimate(ConstraintSpec("DP", 0.1), INTERVAL, 0.0, h, groups, None)
    assert estimate.value == demographic_parity_gap(h, groups, 0.0) == 0.5
    assert estimate.low == 0.0 and estimate.high > 0.85  # two rows a group tell almost nothing


def test_a_bad_spec_is_refused_rather_than_hidden():
    h, groups, y = labelled_split(np.random.default_rng(10), (50, 50), (0.0, 0.0))
    with pytest.raises(UserError):
        value_estimate(ConstraintSpec("DP", 0.1, pairs="vs_rest"), INTERVAL, 0.0, h, groups, y)
