"""`python -m engine run` on a real-valued label: ridge regression by default, regression
metrics in the table and the result file, and the sentences that refuse what a regression cannot
have (a constraint family, a classifier's objective)."""

from __future__ import annotations

import json

import pytest

from engine.cli import main
from engine.data import classic
from engine.runs import Store
from engine.runs.comparison import comparison_table
from engine.runs.worker import execute_run

CRIME_RATE = ["--data", "crime", "--label", "violent_crime_rate"]  # bundled in data/classic


def test_a_real_valued_label_trains_ridge_regression_and_reports_rmse_and_r2(tmp_path, capsys):
    out = tmp_path / "run.json"
    assert (
        main(
            [
                "run",
                *CRIME_RATE,
                "--solver",
                "unconstrained",
                "--option",
                "l2=0.01",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("split"))
    assert header.split()[1:5] == ["rmse", "r2", "mean", "gap"]
    document = json.loads(out.read_text())
    assert document["spec"]["objective"] == {"name": "squared"}
    assert document["spec"]["constraint"] is None
    assert document["data"]["task"] == "regression"
    test = document["result"]["metrics"]["test"]
    assert 0.5 < test["r2"] < 1 and test["rmse"] < test["baseline_rmse"]
    assert "accuracy" not in test and "psp" not in test
    assert document["verdict"]["quantity"] == "mean gap"
    assert document["verdict"]["findings"][0].startswith("No fairness constraint; mean gap on")


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (
            ["--constraint", "psp", "--solver", "unconstrained"],
            "error: the pSP constraint (paper 003, model (15)) is defined for a binary label; the "
            "data's label is real-valued: no constraint family is defined for one",
        ),
        (["--constraint", "eo", "--solver", "ssg"], "error: the EO constraint"),
        (
            ["--objective", "logistic", "--solver", "unconstrained"],
            "error: the logistic objective, the logistic loss, is for a binary label; the data's "
            "label is real-valued: choose the objective squared",
        ),
        (["--solver", "sgd_fairret"], "error: sgd_fairret trains classifiers only"),
    ],
)
def test_what_a_regression_cannot_have_is_refused_before_data_is_read(flags, words, capsys):
    assert main(["run", *CRIME_RATE, *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith(words) and len(err.splitlines()) == 1


def test_a_binary_label_with_the_squared_loss_is_refused(capsys):
    assert (
        main(["run", "--data", "crime", "--objective", "squared", "--solver", "unconstrained"]) == 2
    )
    assert (
        "the squared objective, the squared loss (ridge regression, paper 002), is for a "
        "real-valued label; the data's label is binary" in capsys.readouterr().err
    )


def test_a_stored_regression_run_is_tabled_with_its_regression_scores(quiet_store, capsys):
    assert main(["run", *CRIME_RATE, "--solver", "sgd", "--iterations", "200", "--background"]) == 0
    run_id = capsys.readouterr().out.strip()
    assert execute_run(str(quiet_store), run_id) == "budget"
    (row,) = comparison_table(Store(quiet_store), [run_id]).rows
    assert row["test mean gap"] is not None and row["train mean gap"] is not None
    assert {"test RMSE", "baseline RMSE", "test R²"} <= set(row)
    assert "test accuracy" not in row


def test_law_school_gpa_through_the_unconstrained_solver(shared_data, monkeypatch, capsys):
    root = shared_data / "classic"
    if not (root / "law.csv").is_file():
        pytest.skip(f"needs {root}/law.csv, which is absent")
    monkeypatch.setattr(classic, "classic_roots", lambda: (root,))
    assert (
        main(
            [
                "run",
                "--data",
                "law",
                "--label",
                "ugpa",
                "--solver",
                "unconstrained",
                "--seconds",
                "10",
                "--quiet",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    test = next(line for line in lines if line.startswith("test ")).split()
    assert 0 < float(test[2]) < 1  # R²: LSAT, race and sex predict some of the GPA
