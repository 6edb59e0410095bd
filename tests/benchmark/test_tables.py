"""The Benchmark page's final-models tables (engine.benchmark.tables) and the layout of its
spider chart (engine.benchmark.figures.spider_figure): narrow enough for a laptop's main column,
every number of the study's table kept, each header one quantity with its unit."""

from __future__ import annotations

import dataclasses

import pytest

from engine.benchmark.figures import SPIDER_AXES, SPIDER_RADIAL_TICKS, spider_figure
from engine.benchmark.study import StudyRun, study_table
from engine.benchmark.tables import (
    FRACTION,
    constraint_unit,
    final_summary,
    final_tables,
    loss_unit,
)

KAPPA = 0.02
CRITERIA = {
    "independence": 0.09,
    "separation": 0.06,
    "sufficiency": 0.04,
    "inaccuracy": 0.15,
    "accuracy_gap": 0.11,
    "probability_wasserstein": 0.19,
}


def run(variant: str, seed: int, shift: float, constraint: float | None = 0.05) -> StudyRun:
    """A finished run whose metrics are those of `CRITERIA` and a loss, moved by `shift`."""

    def split(offset: float) -> dict[str, float | None]:
        values = {
            "loss": 0.32 + shift + offset,
            "accuracy": 0.85 - shift - offset,
            **{k: v + shift + offset for k, v in CRITERIA.items()},
        }
        if constraint is not None:
            values["constraint"] = constraint + shift + offset
        return values

    return StudyRun(
        f"{variant}-{seed}",
        variant,
        seed,
        "budget",
        "misses κ",
        KAPPA,
        [],
        {"train": split(0.001), "test": split(0.0)},
    )


@pytest.fixture
def runs() -> list[StudyRun]:
    return [
        run("sgd", 0, 0.0),
        run("sgd", 1, 0.002),
        run("ssl_alm", 0, -0.03),
        run("ssl_alm", 1, 0.01),
    ]


def test_the_outcomes_come_one_row_per_solver_and_split_under_headers_with_units(runs):
    first, *criteria = final_tables(final_summary(runs), "group_loss_gap", "logistic")
    assert first.text.columns.tolist() == [
        "loss (nats)",
        "group-loss gap (nats)",
        "violation (nats)",
        "accuracy (fraction)",
    ]
    assert first.text.index.tolist() == [
        ("sgd", "test"),
        ("sgd", "train"),
        ("ssl_alm", "test"),
        ("ssl_alm", "train"),
    ]
    assert list(first.notes) == ["loss", "group-loss gap", "violation", "accuracy"]
    assert [list(table.notes) for table in criteria] == [
        ["Ind", "Sp", "Sf"],
        ["Ina", "DifAcc", "Wd"],
    ]
    assert [table.text.columns.tolist() for table in criteria] == [
        [f"{c} ({FRACTION})" for c in ("Ind", "Sp", "Sf")],
        [f"{c} ({FRACTION})" for c in ("Ina", "DifAcc", "Wd")],
    ]
    assert all(table.text.index.tolist() == ["sgd", "ssl_alm"] for table in criteria)
    # at most four quantities a table: a "mean ± std" cell is ~106 px of a ~700 px column
    assert all(len(table.text.columns) <= 4 for table in (first, *criteria))


def test_every_number_of_the_study_table_is_shown_where_its_quantity_and_split_are(runs):
    tables = final_tables(final_summary(runs), "group_loss_gap", "logistic")
    shown = {}
    for table in tables:
        for row, cells in table.text.iterrows():
            solver, split = row if isinstance(row, tuple) else (row, "test")
            for header, cell in cells.items():
                shown[solver, f"{split} {header.split(' (')[0]}"] = cell
    old = study_table(runs).table()
    for solver, cells in old.iterrows():
        for column, cell in cells.items():
            split, quantity = column.split(" ", 1)
            quantity = {"constraint": "group-loss gap"}.get(quantity, quantity)
            assert shown[solver, f"{split} {quantity}"] == cell, (solver, column)
    # and the train split's constraint and accuracy besides: sgd's runs are 0.051 and 0.053
    assert shown["sgd", "train group-loss gap"] == "0.0520 ± 0.0014"
    assert shown["sgd", "train accuracy"] == "0.8480 ± 0.0014"


def test_the_best_is_marked_within_each_split(runs):
    first, *criteria = final_tables(final_summary(runs), "group_loss_gap")
    # ssl_alm's runs are shifted by −0.01 on average, sgd's by +0.001: smaller loss, gap,
    # violation (0.02 against 0.031) and criteria, larger accuracy, on both splits
    for split in ("test", "train"):
        assert first.best.loc[("ssl_alm", split)].all()
        assert not first.best.loc[("sgd", split)].any()
    assert all(
        table.best.loc["ssl_alm"].all() and not table.best.loc["sgd"].any() for table in criteria
    )


def test_units_follow_the_objective_and_the_constraint_family():
    assert loss_unit("logistic") == "nats"
    assert constraint_unit("group_loss_gap", "squared_hinge") == "score²"
    assert constraint_unit("pSP", "logistic") == FRACTION
    assert constraint_unit("auc_gap", "pairwise_auc") == FRACTION
    assert constraint_unit("intersectional_hinge", "logistic") == "score"


def test_a_study_without_a_constraint_leaves_its_empty_columns_out():
    runs = [run("sgd", 0, 0.0, constraint=None), run("sgd", 1, 0.01, constraint=None)]
    runs = [dataclasses.replace(r, kappa=None) for r in runs]
    first, *_ = final_tables(final_summary(runs), None)
    assert first.text.columns.tolist() == ["loss (nats)", "accuracy (fraction)"]
    assert final_summary([]) is None


def test_the_spider_has_few_horizontal_radial_labels_between_two_criteria():
    values = {
        split: {"A": dict.fromkeys(SPIDER_AXES, 0.1), "B": dict.fromkeys(SPIDER_AXES, 0.3)}
        for split in ("train", "test")
    }
    fig = spider_figure(values)
    for polar in (fig.layout.polar, fig.layout.polar2):
        radial, angular = polar.radialaxis, polar.angularaxis
        assert radial.nticks == SPIDER_RADIAL_TICKS <= 4
        # halfway between the first two spokes (Ind on top, then clockwise), labels horizontal
        assert radial.angle == pytest.approx(90 - 180 / len(SPIDER_AXES))
        assert radial.tickangle == radial.angle
        assert (angular.rotation, angular.direction) == (90, "clockwise")
        assert radial.range == pytest.approx((0.0, 0.3 * 1.05))
    assert fig.layout.legend.orientation == "h"
    assert all(a.yshift > 0 for a in fig.layout.annotations)  # the titles above "Ind"
