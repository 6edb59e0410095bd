"""Accuracy–fairness frontiers from stored run results (paper 003, Fig. 1)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from engine.runs.frontier import RunResult, frontier, frontier_points, is_gap, pareto_mask
from engine.runs.frontier_text import format_frontier, frontier_table, point_marks
from engine.verdict import KappaState

INTERVAL = (0.05, 0.3)


def run(
    run_id: str,
    solver: str = "idca",
    kappa: float | None = 0.1,
    interval: tuple[float, float] = INTERVAL,
    seed: int = 0,
    split: str = "test",
    **metrics: float | None,
) -> RunResult:
    return RunResult(run_id, solver, kappa, interval, seed, {split: dict(metrics)})


def brute_force_front(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    n = len(xs)
    dominated = [
        any(
            xs[j] >= xs[i] and ys[j] >= ys[i] and (xs[j] > xs[i] or ys[j] > ys[i]) for j in range(n)
        )
        for i in range(n)
    ]
    return ~np.array(dominated, dtype=bool)


def half_width(values: list[float], confidence: float) -> float | None:
    n = len(values)
    if n == 1:
        return None  # one seed gives no interval
    low, high = stats.t.interval(confidence, df=n - 1, loc=np.mean(values), scale=stats.sem(values))
    return (high - low) / 2


# ---- Pareto mask ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_pareto_mask_matches_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    xs = rng.integers(0, 6, size=n).astype(float)  # few values: many ties and exact duplicates
    ys = rng.integers(0, 6, size=n).astype(float)
    np.testing.assert_array_equal(pareto_mask(xs, ys), brute_force_front(xs, ys))


def test_pareto_mask_on_continuous_points():
    rng = np.random.default_rng(7)
    xs, ys = rng.random(300), rng.random(300)
    np.testing.assert_array_equal(pareto_mask(xs, ys), brute_force_front(xs, ys))


def test_pareto_mask_handcrafted_ties():
    xs = [1.0, 1.0, 1.0, 2.0, 0.0, 2.0]
    ys = [3.0, 3.0, 2.0, 1.0, 3.0, 1.0]
    # (1,3) twice: equal points do not dominate each other; (1,2) is beaten by (1,3);
    # (2,1) twice stays; (0,3) is beaten by (1,3).
    expected = [True, True, False, True, False, True]
    assert pareto_mask(xs, ys).tolist() == expected


def test_pareto_mask_edge_cases():
    assert pareto_mask([], []).tolist() == []
    assert pareto_mask([0.5], [0.2]).tolist() == [True]
    with pytest.raises(ValueError):
        pareto_mask([1.0, 2.0], [1.0])


# ---- Means and confidence intervals ----------------------------------------------------------


@pytest.mark.parametrize("n_seeds", [1, 2, 5])
@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_means_and_intervals_match_student_t(n_seeds, confidence):
    rng = np.random.default_rng(n_seeds)
    accuracy = rng.uniform(0.7, 0.9, size=n_seeds).tolist()
    psp = rng.uniform(0.0, 0.4, size=n_seeds).tolist()
    results = [
        run(f"r{s}", seed=s, accuracy=a, psp=p)
        for s, (a, p) in enumerate(zip(accuracy, psp, strict=True))
    ]
    (point,) = frontier_points(results, confidence=confidence)
    fairness = [1.0 - p for p in psp]
    assert point.n == n_seeds
    assert point.score == pytest.approx(np.mean(accuracy))
    assert point.fairness == pytest.approx(np.mean(fairness))
    if n_seeds == 1:
        assert point.score_spread is None and point.fairness_spread is None
    else:
        assert point.score_spread == pytest.approx(half_width(accuracy, confidence))
        assert point.fairness_spread == pytest.approx(half_width(fairness, confidence))
        assert point.score_spread > 0 and point.fairness_spread > 0


def test_confidence_outside_the_unit_interval_is_refused():
    with pytest.raises(ValueError):
        frontier([run("a", accuracy=0.8, psp=0.1)], confidence=1.0)


def test_standard_errors_are_the_sample_deviation_over_root_n():
    """Paper 004, Sec. 6 draws standard errors: s/√n with s on n − 1 degrees of freedom."""
    auc, psp = [0.80, 0.82, 0.87], [0.10, 0.30, 0.20]
    results = [
        run(f"r{s}", seed=s, accuracy=0.5, auc=a, psp=p)
        for s, (a, p) in enumerate(zip(auc, psp, strict=True))
    ]
    (point,) = frontier_points(results, score="auc", spread="se")
    # mean 0.83; squared deviations 0.0009 + 0.0001 + 0.0016 = 0.0026; s² = 0.0013
    assert point.score == pytest.approx(0.83)
    assert point.score_spread == pytest.approx(np.sqrt(0.0013 / 3))
    assert point.score_spread == pytest.approx(np.std(auc, ddof=1) / np.sqrt(3))
    assert point.fairness == pytest.approx(0.8)
    assert point.fairness_spread == pytest.approx(np.sqrt(0.01 / 3))  # s² = 0.02 / 2
    (ci,) = frontier_points(results, score="auc", spread="ci")
    assert ci.score_spread / point.score_spread == pytest.approx(stats.t.ppf(0.975, df=2))


def test_one_seed_has_no_standard_error():
    (point,) = frontier_points([run("a", auc=0.9, psp=0.1)], score="auc", spread="se")
    assert point.score_spread is None and point.fairness_spread is None


def test_the_score_axis_reads_auc_when_asked_and_skips_runs_without_it():
    results = [
        run("a", seed=0, accuracy=0.61, auc=0.90, psp=0.1),
        run("b", seed=1, accuracy=0.63, auc=0.88, psp=0.1),
        run("no-auc", seed=2, accuracy=0.62, psp=0.1),
    ]
    result = frontier(results, score="auc")
    (point,) = result.points
    assert result.score == "auc" and point.score == pytest.approx(0.89)
    assert result.skipped == ("no-auc",)
    (accuracy,) = frontier_points(results)  # accuracy by default
    assert accuracy.score == pytest.approx(0.62)


def test_dominance_is_judged_on_the_chosen_score():
    results = [
        run("high-accuracy", kappa=0.1, accuracy=0.9, auc=0.7, psp=0.2),
        run("high-auc", kappa=0.2, accuracy=0.8, auc=0.8, psp=0.2),
    ]
    by_accuracy = {p.run_ids[0]: p.dominated for p in frontier_points(results)}
    by_auc = {p.run_ids[0]: p.dominated for p in frontier_points(results, score="auc")}
    assert by_accuracy == {"high-accuracy": False, "high-auc": True}
    assert by_auc == {"high-accuracy": True, "high-auc": False}


@pytest.mark.parametrize(("name", "value"), [("score", "loss"), ("spread", "sd")])
def test_an_unknown_score_or_spread_is_refused(name, value):
    with pytest.raises(ValueError, match=f"unknown {name} '{value}'"):
        frontier([run("a", accuracy=0.8, psp=0.1)], **{name: value})


# ---- Metric direction ------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["psp", "pdp", "sp", "dp", "group_auc_gap"])
def test_gap_metrics_become_one_minus_the_value(metric):
    (point,) = frontier_points([run("a", accuracy=0.8, **{metric: 0.3})], metric=metric)
    assert is_gap(metric)
    assert point.fairness == pytest.approx(0.7)


def test_score_metrics_are_taken_as_they_are():
    (point,) = frontier_points([run("a", accuracy=0.8, auc=0.9)], metric="auc")
    assert not is_gap("auc")
    assert point.fairness == pytest.approx(0.9)


def test_unknown_metric_is_refused():
    with pytest.raises(ValueError, match="unknown metric"):
        frontier([run("a", accuracy=0.8, pSP=0.1)], metric="pSP")


def test_split_selects_the_metrics():
    result = RunResult(
        "a",
        "idca",
        0.1,
        INTERVAL,
        0,
        {"train": {"accuracy": 0.9, "psp": 0.05}, "test": {"accuracy": 0.8, "psp": 0.2}},
    )
    (train,) = frontier_points([result], split="train")
    (test,) = frontier_points([result], split="test")
    assert (train.score, train.fairness) == pytest.approx((0.9, 0.95))
    assert (test.score, test.fairness) == pytest.approx((0.8, 0.8))


# ---- Grouping --------------------------------------------------------------------------------


def test_runs_differing_only_in_seed_make_one_point():
    results = [run(f"r{s}", seed=s, accuracy=0.8 + s / 100, psp=0.1) for s in range(4)]
    points = frontier_points(results)
    assert len(points) == 1
    assert sorted(points[0].run_ids) == ["r0", "r1", "r2", "r3"]


@pytest.mark.parametrize(
    "change",
    [{"kappa": 0.2}, {"interval": (0.0, 0.25)}, {"solver": "ssg"}],
    ids=["kappa", "interval", "solver"],
)
def test_runs_differing_in_kappa_interval_or_solver_make_separate_points(change):
    base = run("a", seed=0, accuracy=0.8, psp=0.1)
    other = run("b", **{"seed": 1, "accuracy": 0.7, "psp": 0.2} | change)
    points = frontier_points([base, other])
    assert len(points) == 2
    assert sorted(p.run_ids for p in points) == [("a",), ("b",)]


def test_full_grid_gives_one_point_per_configuration():
    solvers, kappas, intervals, seeds = (
        ["idca", "ssg"],
        [0.01, 0.1],
        [INTERVAL, (0.0, 0.25)],
        range(3),
    )
    rng = np.random.default_rng(3)
    results = [
        run(
            f"{so}-{k}-{i}-{se}",
            solver=so,
            kappa=k,
            interval=i,
            seed=se,
            accuracy=rng.random(),
            psp=rng.random(),
        )
        for so, k, i, se in itertools.product(solvers, kappas, intervals, seeds)
    ]
    points = frontier_points(results)
    assert len(points) == len(solvers) * len(kappas) * len(intervals)
    assert all(p.n == len(seeds) for p in points)
    assert sorted(r for p in points for r in p.run_ids) == sorted(r.run_id for r in results)


# ---- Missing metrics and the unconstrained model -----------------------------------------------


def test_runs_with_missing_metrics_are_skipped_and_counted():
    results = [
        run("ok0", seed=0, accuracy=0.8, psp=0.1),
        run("ok1", seed=1, accuracy=0.9, psp=0.3),
        run("no-psp", seed=2, accuracy=0.85, psp=None),
        run("no-accuracy", seed=3, accuracy=None, psp=0.2),
        run("nan-psp", seed=4, accuracy=0.85, psp=float("nan")),
        run("other-split", seed=5, split="train", accuracy=0.85, psp=0.2),
    ]
    result = frontier(results)
    assert sorted(result.skipped) == ["nan-psp", "no-accuracy", "no-psp", "other-split"]
    (point,) = result.points
    assert point.run_ids == ("ok0", "ok1")
    assert point.score == pytest.approx(np.mean([0.8, 0.9]))
    assert "skipped 4 run(s)" in format_frontier(result)


def test_missing_metric_on_another_split_does_not_skip():
    result = RunResult(
        "a",
        "idca",
        0.1,
        INTERVAL,
        0,
        {"val": {"accuracy": None, "psp": None}, "test": {"accuracy": 0.8, "psp": 0.2}},
    )
    assert frontier([result]).skipped == ()


def test_unconstrained_point_is_flagged():
    results = [
        run("u0", solver="unconstrained", kappa=None, seed=0, accuracy=0.85, psp=0.8),
        run("u1", solver="unconstrained", kappa=None, seed=1, accuracy=0.86, psp=0.7),
        run("c0", solver="idca", kappa=0.1, seed=0, accuracy=0.83, psp=0.1),
    ]
    flags = {p.solver: p.unconstrained for p in frontier_points(results)}
    assert flags == {"unconstrained": True, "idca": False}


# ---- Dominated points --------------------------------------------------------------------------


def test_dominated_flags_follow_the_pareto_definition_on_the_means():
    rng = np.random.default_rng(11)
    results = [
        run(f"{k}-{s}", kappa=k, seed=s, accuracy=rng.random(), psp=rng.random())
        for k in np.linspace(0.01, 0.3, 12)
        for s in range(3)
    ]
    points = frontier_points(results)
    xs = np.array([p.fairness for p in points])
    ys = np.array([p.score for p in points])
    assert [not p.dominated for p in points] == brute_force_front(xs, ys).tolist()
    assert any(p.dominated for p in points) and not all(p.dominated for p in points)


def test_tied_points_are_not_dominated():
    results = [
        run("a", solver="idca", accuracy=0.8, psp=0.2),
        run("b", solver="ssg", accuracy=0.8, psp=0.2),
    ]
    assert [p.dominated for p in frontier_points(results)] == [False, False]


def test_points_on_different_intervals_are_not_compared():
    results = [
        run("better", interval=INTERVAL, accuracy=0.9, psp=0.1),
        run("worse-same", interval=INTERVAL, kappa=0.2, accuracy=0.8, psp=0.2),
        run("worse-other", interval=(0.0, 0.25), accuracy=0.8, psp=0.2),
    ]
    dominated = {p.run_ids[0]: p.dominated for p in frontier_points(results)}
    assert dominated == {"better": False, "worse-same": True, "worse-other": False}


# ---- Table and text ------------------------------------------------------------------------------


def sweep() -> list[RunResult]:
    rng = np.random.default_rng(5)
    results = [
        run(
            f"u{s}",
            solver="unconstrained",
            kappa=None,
            seed=s,
            accuracy=0.86 + rng.normal(0, 0.003),
            psp=0.8 + rng.normal(0, 0.01),
        )
        for s in range(3)
    ]
    for solver, kappas in [("ssg", [0.05, 0.2]), ("idca", [0.01, 0.2, 0.1])]:
        for k in kappas:
            results += [
                run(
                    f"{solver}-{k}-{s}",
                    solver=solver,
                    kappa=k,
                    seed=s,
                    accuracy=0.84 + rng.normal(0, 0.003),
                    psp=k + rng.normal(0, 0.01),
                )
                for s in range(3)
            ]
    return results


def test_table_rows_carry_every_point_field():
    points = frontier_points(sweep())
    rows = frontier_table(points)
    assert len(rows) == len(points)
    for row, p in zip(rows, points, strict=True):
        assert row == {
            "solver": p.solver,
            "kappa": p.kappa,
            "alpha": p.interval[0],
            "beta": p.interval[1],
            "n": p.n,
            "score": p.score,
            "score_spread": p.score_spread,
            "fairness": p.fairness,
            "fairness_spread": p.fairness_spread,
            "score_low": p.score_band and p.score_band[0],
            "score_high": p.score_band and p.score_band[1],
            "fairness_low": p.fairness_band and p.fairness_band[0],
            "fairness_high": p.fairness_band and p.fairness_band[1],
            "constraint": p.constraint,
            "state": p.state and str(p.state),
            "meets_kappa": p.meets_kappa,
            "dominated": p.dominated,
            "unconstrained": p.unconstrained,
            "degenerate": p.degenerate and str(p.degenerate[0]),
            "unconverged": p.unconverged,
            "marks": point_marks(p),
        }


def test_a_points_state_is_its_runs_interval_or_its_seeds_confidence_interval_against_kappa():
    results = [
        run("a", kappa=0.1, seed=0, accuracy=0.8, psp=0.1, constraint=0.08),
        run("b", kappa=0.1, seed=1, accuracy=0.8, psp=0.1, constraint=0.13),
        *(
            run(
                f"m{seed}",
                kappa=0.15,
                seed=seed,
                accuracy=0.8,
                psp=0.2,
                constraint=0.2 + 0.001 * seed,
            )
            for seed in range(3)
        ),
        run("c", kappa=0.2, seed=0, accuracy=0.8, psp=0.1, constraint=0.19),
        run(
            "t",
            kappa=0.3,
            seed=0,
            accuracy=0.8,
            psp=0.25,
            constraint=0.25,
            constraint_low=0.21,
            constraint_high=0.32,
            accuracy_low=0.79,
            accuracy_high=0.81,
        ),
        run("d", kappa=None, solver="unconstrained", accuracy=0.9, psp=0.3, constraint=0.3),
        run("e", kappa=0.05, accuracy=0.8, psp=0.1),
    ]
    points = {(p.solver, p.kappa): p for p in frontier_points(results)}
    assert points[("idca", 0.1)].constraint == pytest.approx(0.105)
    assert points[("idca", 0.1)].state is KappaState.CANNOT_TELL  # two seeds either side of κ
    assert points[("idca", 0.15)].meets_kappa is False  # three seeds, all well above κ
    assert points[("idca", 0.2)].meets_kappa is True  # one seed without an interval: its value
    one = points[("idca", 0.3)]  # one seed with its held-out interval: κ lies inside it
    assert one.state is KappaState.CANNOT_TELL and one.meets_kappa is None
    assert one.fairness_band == pytest.approx((1 - 0.32, 1 - 0.21))
    assert one.score_band == (0.79, 0.81)
    assert points[("unconstrained", None)].meets_kappa is None  # no κ to meet
    assert points[("idca", 0.05)].meets_kappa is None  # no constrained value recorded


def test_the_text_marks_points_that_miss_kappa_and_gives_no_interval_for_one_seed():
    text = format_frontier(frontier([run("a", kappa=0.1, accuracy=0.8, psp=0.2, constraint=0.2)]))
    row = text.splitlines()[2]
    assert row.startswith("!") and row.endswith("0.8000    0.8000")  # no band without one


def test_points_are_sorted_by_solver_then_kappa_descending():
    points = frontier_points(sweep())
    assert [p.solver for p in points] == sorted(p.solver for p in points)
    for solver in {p.solver for p in points}:
        kappas = [p.kappa for p in points if p.solver == solver and p.kappa is not None]
        assert kappas == sorted(kappas, reverse=True)


def test_text_is_aligned_and_marks_points():
    result = frontier(sweep())
    lines = format_frontier(result).splitlines()
    rows = lines[2 : 2 + len(result.points)]
    for row, point in zip(rows, result.points, strict=True):
        mark = row.split(point.solver)[0]
        assert ("*" in mark) == point.unconstrained
        assert ("·" in mark) == point.dominated
        assert f"{point.score:.4f}" in row and f"{point.fairness:.4f}" in row
    assert len({row.index("[", row.index("]")) for row in rows}) == 1  # the bands line up
    assert len({row.rindex("]") for row in rows}) == 1
    assert len({row.index(p.solver) for row, p in zip(rows, result.points, strict=True)}) == 1
    assert lines[0] == (
        "accuracy vs fairness = 1 − psp on the test split, with 95 % bands: one "
        "seed's held-out interval, or over seeds the mean ± 95 % CI"
    )
    assert lines[1].split()[-3:] == ["n", "accuracy", "fairness"]


def test_text_names_the_auc_axis_and_standard_errors_and_keeps_the_marks():
    results = [*sweep(), run("missed", kappa=0.3, accuracy=0.8, auc=0.5, psp=0.5, constraint=0.4)]
    results = [replace(r, metrics={"test": {"auc": 0.8, **r.metrics["test"]}}) for r in results]
    result = frontier(results, score="auc", spread="se")
    lines = format_frontier(result).splitlines()
    assert lines[0] == (
        "AUC vs fairness = 1 − psp on the test split, with 95 % bands: one "
        "seed's held-out interval, or over seeds the mean ± s.e."
    )
    assert lines[1].split()[-3:] == ["n", "AUC", "fairness"]
    rows = dict(zip((p.run_ids[0] for p in result.points), lines[2:], strict=False))
    assert rows["missed"].startswith("·!")  # dominated, and misses κ = 0.3
    assert rows["u0"].startswith("*")


def test_text_for_an_empty_frontier_says_so():
    result = frontier([run("a", accuracy=None, psp=0.1)])
    text = format_frontier(result)
    assert "no run" in text and "skipped 1 run(s)" in text
