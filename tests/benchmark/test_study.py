"""A benchmark study read back from the store (engine.benchmark.study), on a real tiny study
executed in this process: sgd and ssl_alm, an MLP under the group-loss gap, 2 seeds each."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from engine.benchmark.bands import BIN_SECONDS
from engine.benchmark.study import (
    SPIDER,
    TABLE_METRICS,
    band_bounds,
    band_rows,
    grid_heatmap,
    load_study,
    spider_values,
    study_bands,
    study_grid,
    study_points,
    study_table,
    study_variants,
    variant_label,
)
from engine.benchmark.summary import is_accuracy
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.runs import RunSpec, Store, parse_grid
from engine.runs.submit import submit
from engine.runs.worker import execute_run
from engine.solvers import Budget

DELTA = 0.02  # δ of the group-loss gap
GAP = "loss[a,b]"  # the group-loss gap of groups a and b; its rows are GAP:upper and GAP:lower


def base_spec(data, iterations: int, save_every: int | None) -> RunSpec:
    """An MLP with one hidden layer of 4 under the group-loss gap ≤ δ (paper 000, Exp. 1)."""
    return RunSpec(
        data=data,
        prepare=PrepareOptions(grouping=(GroupingSpec("g"),)),
        model=ModelSpec("mlp", hidden=(4,)),
        constraint=ConstraintSpec("group_loss_gap", DELTA),
        interval=(0.0, 1.0),
        solver="ssl_alm",
        config={},
        budget=Budget(max_iterations=iterations, save_every=save_every),
        seed=0,
    )


@dataclass(frozen=True)
class Study:
    store: Store
    points: list[tuple[dict[str, Any], RunSpec]]
    grid: dict[str, list[Any]]
    executed: list[str]  # the run ids executed; the others stay queued


def execute_study(folder, data, grid, iterations: int, save_every: int | None, skip=None) -> Study:
    """The study's runs queued in a store in `folder` and executed in this process, except
    the points for which `skip(point)` is true."""
    with pytest.MonkeyPatch.context() as patch:  # prepared data into `folder`, not data/cache
        patch.setenv("FAIRFRONT_CACHE", str(folder / "cache"))
        points = study_points(base_spec(data, iterations, save_every), grid)
        store = Store(folder / "home")
        submit([spec for _, spec in points], store, start_runner=False)
        executed = []
        for point, spec in points:
            if skip is None or not skip(point):
                assert execute_run(str(store.home), spec.run_id) == "budget"
                executed.append(spec.run_id)
    return Study(store, points, grid, executed)


@pytest.fixture(scope="module")
def study(tmp_path_factory, toy_csv):
    grid = study_grid(["sgd", "ssl_alm"], 2, {})
    return execute_study(
        tmp_path_factory.mktemp("study"), toy_csv, grid, iterations=200, save_every=50
    )


@pytest.fixture(scope="module")
def runs(study):
    return load_study(study.store, study_variants(study.points, study.grid))


def saved(study, run_id: str, key: str) -> list[tuple[float, float]]:
    """A run's saved iterates' (seconds, value of `key`), straight from the store's records."""
    return [
        (r["seconds"], r["values"][key])
        for r in study.store.records(run_id)
        if r["kind"] == "iterate" and r["values"].get(key) is not None
    ]


def run_bins(points, width: float) -> dict[int, float]:
    """bin → a run's value: the mean of its points rounded to the bin (halves up), carried
    forward over the bins of its span without a point."""
    by_bin: dict[int, list[float]] = {}
    for seconds, value in points:
        by_bin.setdefault(math.floor(seconds / width + 0.5), []).append(value)
    values, last = {}, None
    for k in range(min(by_bin), max(by_bin) + 1):
        last = float(np.mean(by_bin[k])) if k in by_bin else last
        values[k] = last
    return values


def ids_of(runs, variant: str) -> list[str]:
    return [run.run_id for run in runs if run.variant == variant]


def test_the_study_has_two_variants_of_two_seeds_each(study, runs):
    assert sorted((run.variant, run.seed, run.status) for run in runs) == [
        ("sgd", 0, "budget"),
        ("sgd", 1, "budget"),
        ("ssl_alm", 0, "budget"),
        ("ssl_alm", 1, "budget"),
    ]
    assert all(len(run.iterates) == 4 for run in runs)  # saved at 50, 100, 150 and 200
    # every solver of a study is judged against its constraint, SGD too (it ignores it)
    assert {run.variant: run.kappa for run in runs} == {"sgd": DELTA, "ssl_alm": DELTA}


def test_bands_have_one_entry_per_variant_and_split_counting_the_runs(study, runs):
    bands = study_bands(runs)
    assert list(bands) == ["loss", GAP]
    assert {v: sorted(per) for v, per in bands["loss"].items()} == {
        "sgd": ["test", "train"],
        "ssl_alm": ["test", "train"],
    }
    # sgd ignores the constraint while training, yet its gap is drawn beside the others'
    assert sorted(bands[GAP]["sgd"]) == sorted(bands[GAP]["ssl_alm"]) == ["test", "train"]
    for variant in ("sgd", "ssl_alm"):
        for split in ("train", "test"):
            band = bands["loss"][variant][split]
            spans = [
                run_bins(saved(study, i, f"{split}.loss"), BIN_SECONDS)
                for i in ids_of(runs, variant)
            ]
            bins = np.rint(band.seconds / BIN_SECONDS).astype(int)
            assert bins.tolist() == sorted(set().union(*spans))
            assert band.runs.tolist() == [sum(k in span for span in spans) for k in bins]
            both = [i for i, k in enumerate(bins) if all(k in span for span in spans)]
            assert all(band.runs[i] == 2 for i in both)


@pytest.mark.parametrize("width", [BIN_SECONDS, 0.004])
def test_a_bands_mean_is_the_mean_of_the_runs_saved_values(study, runs, width):
    bands = study_bands(runs, width)
    for variant in ("sgd", "ssl_alm"):
        for split in ("train", "test"):
            band = bands["loss"][variant][split]
            per_run = [
                run_bins(saved(study, i, f"{split}.loss"), width) for i in ids_of(runs, variant)
            ]
            for k, mean, q1, q3 in zip(
                np.rint(band.seconds / width).astype(int), band.mean, band.q1, band.q3, strict=True
            ):
                values = [run[k] for run in per_run if k in run]
                assert mean == pytest.approx(np.mean(values), abs=1e-12)
                assert (q1, q3) == pytest.approx(tuple(np.quantile(values, [0.25, 0.75])))


def test_one_bin_holding_every_point_has_the_mean_over_runs_of_each_runs_mean(study, runs):
    band = study_bands(runs, 1000.0)["loss"]["ssl_alm"]["train"]
    assert band.runs.tolist() == [2]
    (mean,) = band.mean
    direct = [
        np.mean([v for _, v in saved(study, i, "train.loss")]) for i in ids_of(runs, "ssl_alm")
    ]
    assert mean == pytest.approx(np.mean(direct), abs=1e-12)


def test_the_gaps_two_rows_are_one_band_of_the_gap_with_plus_minus_delta_bounds(study, runs):
    assert band_rows(runs) == [f"{GAP}:upper"]
    assert band_bounds(runs) == {GAP: DELTA}
    for run_id in ids_of(runs, "ssl_alm"):  # the rows are gap − δ and −gap − δ
        upper = saved(study, run_id, f"train.row.{GAP}:upper")
        lower = saved(study, run_id, f"train.row.{GAP}:lower")
        gap = saved(study, run_id, "train.constraint")  # the family's quantity: |the gap|
        for (_, u), (_, lo), (_, g) in zip(upper, lower, gap, strict=True):
            assert u + lo == pytest.approx(-2 * DELTA) and abs(u + DELTA) == pytest.approx(g)
    # the band is of the signed gap, row + δ
    band = study_bands(runs, 1000.0)[GAP]["ssl_alm"]["test"]
    direct = [
        np.mean([u + DELTA for _, u in saved(study, i, f"test.row.{GAP}:upper")])
        for i in ids_of(runs, "ssl_alm")
    ]
    assert band.mean.tolist() == pytest.approx([np.mean(direct)])
    # a run without a constraint has neither gap rows nor bounds
    unconstrained = [
        dataclasses.replace(
            run,
            kappa=None,
            iterates=[
                {**r, "values": {k: v for k, v in r["values"].items() if ".row." not in k}}
                for r in run.iterates
            ],
        )
        for run in runs
        if run.variant == "sgd"
    ]
    assert band_rows(unconstrained) == [] and band_bounds(unconstrained) == {}
    assert list(study_bands(unconstrained)) == ["loss"]


def test_the_table_has_a_row_per_variant_with_the_best_marked_by_its_means(study, runs):
    summary = study_table(runs)
    assert summary.mean.index.tolist() == ["sgd", "ssl_alm"]
    assert summary.mean.columns.tolist() == list(TABLE_METRICS.values())
    metrics = {run.run_id: study.store.metrics(run.run_id) for run in runs}
    for variant in ("sgd", "ssl_alm"):
        for split, name in (
            ("test", "loss"),
            ("test", "accuracy"),
            ("train", "loss"),
            ("test", "independence"),
            ("test", "accuracy_gap"),
        ):
            column = TABLE_METRICS[f"{split}.{name}"]
            direct = [metrics[i][split][name] for i in ids_of(runs, variant)]
            assert summary.mean.loc[variant, column] == pytest.approx(np.mean(direct))
            assert summary.std.loc[variant, column] == pytest.approx(np.std(direct, ddof=1))
            assert summary.runs.loc[variant, column] == 2
    # violation: max(constraint − δ, 0), for sgd too: it is judged against the same δ
    for variant in ("sgd", "ssl_alm"):
        direct = [max(metrics[i]["test"]["constraint"] - DELTA, 0.0) for i in ids_of(runs, variant)]
        assert summary.mean.loc[variant, "test violation"] == pytest.approx(np.mean(direct))
    for column in summary.mean.columns:
        means = summary.mean[column].dropna()
        if means.empty:
            assert not summary.best[column].any()
            continue
        best = means.max() if is_accuracy(column) else means.min()
        expected = {v for v, m in means.items() if m == pytest.approx(best, rel=1e-9)}
        assert set(summary.best.index[summary.best[column]]) == expected, column
    assert study_table([run for run in runs if not run.metrics]) is None


def test_spider_values_are_the_criteria_means_per_split_and_variant(study, runs):
    values = spider_values(runs)
    assert list(values) == ["train", "test"]
    for split in ("train", "test"):
        assert sorted(values[split]) == ["sgd", "ssl_alm"]
        for variant in ("sgd", "ssl_alm"):
            assert list(values[split][variant]) == list(SPIDER)
            for axis, metric in SPIDER.items():
                direct = [study.store.metrics(i)[split][metric] for i in ids_of(runs, variant)]
                direct = [v for v in direct if v is not None]
                got = values[split][variant][axis]
                assert got == (pytest.approx(np.mean(direct)) if direct else None)


def test_a_two_axis_grid_of_one_solver_is_a_heatmap_with_nan_where_no_run_ended(tmp_path, toy_csv):
    grid = study_grid(["ssl_alm"], 1, parse_grid(["option.rho=0.5,1", "option.mu=0,2"]))

    def missing(point) -> bool:  # the point left queued
        return (point["option.rho"], point["option.mu"]) == ("1", "2")

    study = execute_study(tmp_path, toy_csv, grid, iterations=100, save_every=None, skip=missing)
    assert len(study.points) == 4 and len(study.executed) == 3
    runs = load_study(study.store, study_variants(study.points, grid))
    assert sorted(run.status for run in runs) == ["budget", "budget", "budget", "queued"]
    x, xs, y, ys, loss, violation = grid_heatmap(runs, study.points, grid)
    assert (x, xs, y, ys) == ("option.rho", ["0.5", "1"], "option.mu", ["0", "2"])
    assert loss.shape == violation.shape == (2, 2)
    for point, spec in study.points:
        i, j = ys.index(point[y]), xs.index(point[x])
        if missing(point):
            assert np.isnan(loss[i, j]) and np.isnan(violation[i, j])
            continue
        val = study.store.metrics(spec.run_id)["val"]
        assert spec.config["rho"] == float(point[x]) and spec.config["mu"] == float(point[y])
        assert loss[i, j] == pytest.approx(val["loss"])
        assert violation[i, j] == pytest.approx(max(val["constraint"] - DELTA, 0.0))
    # the runs of several solvers, or of one axis, are no heat map
    assert grid_heatmap(runs, study.points, {**grid, "option.mu": ["0"]}) is None


def test_a_solvers_study_is_no_heatmap(study, runs):
    assert grid_heatmap(runs, study.points, study.grid) is None


def test_variant_labels_name_the_varying_axes_that_apply_to_the_solver(csv_spec):
    base = base_spec(csv_spec, 10, None)
    grid = study_grid(
        ["sgd", "ssl_alm"], 3, parse_grid(["option.rho=0.5,1", "option.mu=2", "model.hidden=4,8"])
    )
    assert grid["solver.seed"] == [0, 1, 2] and list(grid)[0] == "solver"
    points = study_points(base, grid)
    labels = study_variants(points, grid)
    assert len(labels) == len(points) == (2 + 4) * 3  # sgd has no ρ: its points collapse
    assert sorted(set(labels.values())) == [
        "sgd · model.hidden=4",
        "sgd · model.hidden=8",
        "ssl_alm · option.rho=0.5 · model.hidden=4",
        "ssl_alm · option.rho=0.5 · model.hidden=8",
        "ssl_alm · option.rho=1 · model.hidden=4",
        "ssl_alm · option.rho=1 · model.hidden=8",
    ]
    # the seeds and the one-value axes are shared by a variant's runs, never in its label
    point, spec = points[0]
    assert variant_label(point, spec, {"solver": ["sgd"], "solver.seed": [0, 1]}) == "sgd"
    assert variant_label(point, spec, {"seed": [0, 1], "kappa": [0.1]}) == "sgd"


def test_the_study_keeps_its_own_axes_to_itself():
    from engine.benchmark.study import study_grid
    from engine.errors import UserError

    assert study_grid(["sgd"], 2, {"option.step": [0.1]}) == {
        "solver": ["sgd"],
        "option.step": [0.1],
        "solver.seed": [0, 1],
    }
    for own in ("solver", "solver.seed", "seed"):
        with pytest.raises(UserError, match="the study sets"):
            study_grid(["sgd"], 2, {own: [1]})


def test_group_bands_are_each_groups_loss_and_positive_rate_over_time(study, runs):
    from engine.benchmark.study import group_bands

    bands = group_bands(runs, split="test")
    assert list(bands) == ["loss by group (test)", "positive rate by group (test)"]
    losses = bands["loss by group (test)"]
    assert sorted(losses) == ["sgd", "ssl_alm"]
    for variant, per_group in losses.items():
        assert len(per_group) == 2  # the toy data's two groups
        for group, band in per_group.items():
            per_run = [
                run_bins(saved(study, i, f"test.group.{group}.loss"), BIN_SECONDS)
                for i in ids_of(runs, variant)
            ]
            k = int(np.rint(band.seconds[-1] / BIN_SECONDS))
            values = [run[k] for run in per_run if k in run]
            assert band.mean[-1] == pytest.approx(np.mean(values), abs=1e-12)
    rates = bands["positive rate by group (test)"]
    assert all(
        b.mean.min() >= 0 and b.mean.max() <= 1 for per in rates.values() for b in per.values()
    )


def test_a_run_that_did_not_end_is_left_out_of_the_study(study, runs, tmp_path):
    import shutil

    from engine.benchmark.study import load_study, study_table
    from engine.runs import Store
    from engine.status import StopCode, StopReason

    shutil.copytree(study.store.home, tmp_path / "copy")
    store = Store(tmp_path / "copy")  # the module's study stays as it is
    victim = runs[0]
    assert store.finish(
        victim.run_id, StopReason(StopCode.STEP_FAILED, "a step failed"), only_if=("budget",)
    )
    reloaded = load_study(store, {run.run_id: run.variant for run in runs})
    left = {run.run_id: run for run in reloaded}[victim.run_id]
    assert left.iterates == [] and left.metrics == {}
    assert study_table(reloaded).runs.loc[victim.variant].max() == 1


def test_verdicts_are_counted_per_variant_against_the_same_kappa(study, runs):
    from engine.benchmark.study import verdict_counts, verdict_words
    from engine.runs.results import run_verdict

    counts = verdict_counts(runs)
    for variant in ("sgd", "ssl_alm"):
        labels = [run_verdict(study.store, study.store.run(i)).label for i in ids_of(runs, variant)]
        assert counts[variant] == {label: labels.count(label) for label in set(labels)}
    words = verdict_words(runs)
    assert len(words) == 2 and all(" of 2 runs" in line for line in words)
