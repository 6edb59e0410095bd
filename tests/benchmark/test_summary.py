"""Table 4 of paper 000: mean ± std per solver and the best solver of each column."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from engine.benchmark.summary import is_accuracy, summarise
from engine.errors import UserError

RESULTS = {
    "SGD": [
        {"loss": 0.40, "Ind": 0.10, "accuracy": 0.81},
        {"loss": 0.42, "Ind": 0.08, "accuracy": 0.79},
        {"loss": 0.44, "Ind": 0.12, "accuracy": 0.80},
    ],
    "SSL-ALM": [
        {"loss": 0.50, "Ind": 0.05, "accuracy": 0.77},
        {"loss": 0.52, "Ind": 0.07, "accuracy": 0.78},
    ],
    "SSw": [
        {"loss": 0.60, "Ind": 0.07, "accuracy": 0.81},
        {"loss": 0.60, "Ind": 0.05, "accuracy": 0.79},
    ],
}


def test_mean_and_sample_std_per_solver():
    summary = summarise(RESULTS)
    for solver, runs in RESULTS.items():
        for metric in ("loss", "Ind", "accuracy"):
            values = np.array([run[metric] for run in runs])
            assert summary.mean.loc[solver, metric] == pytest.approx(values.mean())
            assert summary.std.loc[solver, metric] == pytest.approx(values.std(ddof=1))
            assert summary.runs.loc[solver, metric] == len(runs)
    assert list(summary.mean.index) == ["SGD", "SSL-ALM", "SSw"]
    assert list(summary.mean.columns) == ["loss", "Ind", "accuracy"]


def test_best_is_smallest_except_accuracy_and_ties_are_all_marked():
    summary = summarise(RESULTS)
    best = summary.best
    assert best["loss"].tolist() == [True, False, False]
    assert best["Ind"].tolist() == [False, True, True]  # both means 0.06
    assert best["accuracy"].tolist() == [True, False, True]  # both means 0.80, the largest
    assert summary.larger_is_better == {"loss": False, "Ind": False, "accuracy": True}


def test_larger_is_better_can_be_named():
    summary = summarise(RESULTS, larger_is_better={"loss"})
    assert summary.best["loss"].tolist() == [False, False, True]
    assert summary.best["accuracy"].tolist() == [False, True, False]


def test_missing_values_are_left_out_and_counted():
    results = {
        "A": [{"Sf": None, "loss": 1.0}, {"Sf": 0.2, "loss": 3.0}, {"Sf": float("nan")}],
        "B": [{"loss": 0.5}],
    }
    summary = summarise(results)
    assert summary.mean.loc["A", "Sf"] == pytest.approx(0.2)
    assert summary.runs.loc["A", "Sf"] == 1 and summary.runs.loc["A", "loss"] == 2
    assert math.isnan(summary.std.loc["A", "Sf"])  # one value: no spread
    assert math.isnan(summary.mean.loc["B", "Sf"])
    assert summary.best["Sf"].tolist() == [True, False]
    table = summary.table(digits=2)
    assert table.loc["A", "loss"] == "2.00 ± 1.41"
    assert table.loc["A", "Sf"] == "0.20"
    assert table.loc["B", "Sf"] == "—"


def test_plain_frame_is_numeric_and_survives_csv():
    summary = summarise(RESULTS)
    plain = summary.plain()
    assert list(plain.columns[:4]) == ["loss mean", "loss std", "loss runs", "loss best"]
    back = pd.read_csv(io.StringIO(plain.to_csv()), index_col="solver")
    np.testing.assert_allclose(back["Ind mean"], summary.mean["Ind"])
    assert back["Ind best"].tolist() == summary.best["Ind"].tolist()


@pytest.mark.parametrize(
    ("metric", "larger"),
    [
        ("accuracy", True),
        ("test accuracy", True),
        ("train.accuracy", True),
        ("Acc", True),
        ("DifAcc", False),
        ("Ina", False),
        ("loss", False),
        ("max violation", False),
    ],
)
def test_accuracy_names_are_larger_is_better(metric, larger):
    assert is_accuracy(metric) is larger


def test_no_solver_is_refused():
    with pytest.raises(UserError):
        summarise({})
