"""The command line on a run that yields a front: `runs show` adds the front as a table,
`frontier` lists each run's front after the sweep's points, `run --out` writes it."""

from __future__ import annotations

import json

from cli_table import TABLE_FLAGS
from front_solver import NAME, register

from engine.cli import main
from engine.runs import Store
from engine.runs.results import run_front_frontier
from engine.runs.worker import execute_run

LABELS = ("λ = (0, 1)", "λ = (0.5, 0.5)", "λ = (1, 0)")


def test_runs_show_prints_the_front_as_a_table(tiny_csv, quiet_store, capsys, monkeypatch):
    register(monkeypatch)
    assert (
        main(
            [
                "run",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--solver",
                NAME,
                "--kappa",
                "0.1",
                "--background",
            ]
        )
        == 0
    )
    run_id = capsys.readouterr().out.strip()
    assert execute_run(str(quiet_store), run_id) == "converged"
    assert main(["runs", "show", run_id[:8]]) == 0
    printed = capsys.readouterr()
    document = json.loads(printed.out)  # stdout stays one JSON document
    assert [m["label"] for m in document["front"]] == list(LABELS)
    lines = printed.err.splitlines()
    assert lines[0] == f"front of run {run_id} ({NAME}): 3 models, on the test split"
    assert lines[1].split() == ["model", "coordinates", "accuracy", "fairness", "pSP"]
    store = Store(quiet_store)
    points = run_front_frontier(store, store.run(run_id)).fronts[run_id]
    for line, point in zip(lines[2:6], points, strict=True):
        assert point.label in line and "lambda.F = " in line
        assert f"{point.score:.4f}" in line and f"{1 - point.fairness:.4f}" in line
        assert ("·" in line.split(point.label)[0]) == point.dominated
    assert lines[5].startswith("◆") and "reported model = λ = (0.5, 0.5)" in lines[5]


def test_runs_show_of_an_ordinary_run_prints_no_table(tiny_csv, quiet_store, capsys):
    assert (
        main(
            [
                "run",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--solver",
                "unconstrained",
                "--constraint",
                "none",
                "--iterations",
                "5",
                "--background",
            ]
        )
        == 0
    )
    run_id = capsys.readouterr().out.strip()
    execute_run(str(quiet_store), run_id)
    assert main(["runs", "show", run_id]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["front"] == [] and "front of run" not in printed.err


def test_the_frontier_of_a_sweep_lists_each_runs_front(tiny_csv, quiet_store, capsys, monkeypatch):
    register(monkeypatch)
    assert (
        main(
            [
                "sweep",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--solvers",
                NAME,
                "idca",
                "--kappas",
                "0.1",
                "--seeds",
                "0",
                "1",
                "--iterations",
                "20",
            ]
        )
        == 0
    )
    sweep_id = capsys.readouterr().out.strip()
    store = Store(quiet_store)
    for row in store.runs(sweep_id=sweep_id):
        execute_run(str(quiet_store), row.id)
    assert main(["frontier", sweep_id]) == 0
    out = capsys.readouterr().out
    fronts = [r.id for r in store.runs(sweep_id=sweep_id) if r.spec.solver == NAME]
    assert len(fronts) == 2  # one per seed, never averaged
    for run_id in fronts:
        block = out[out.index(f"front of run {run_id}") :].splitlines()
        assert all(label in "\n".join(block[2:6]) for label in LABELS)
    idca = [line for line in out.splitlines() if " idca " in f" {line} "]
    assert len(idca) == 1 and idca[0].split()[5] == "2"  # the two seeds of idca: one point


def test_run_writes_the_front_and_prints_it(tiny_csv, tmp_path, capsys, monkeypatch):
    register(monkeypatch)
    out = tmp_path / "run.json"
    assert (
        main(
            [
                "run",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--solver",
                NAME,
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert f"({NAME}): 3 models, on the test split" in printed
    front = json.loads(out.read_text())["result"]["front"]
    assert [m["label"] for m in front] == list(LABELS)
    assert set(front[0]) == {"label", "coordinates", "metrics"}
    assert {"train", "val", "test"} == set(front[0]["metrics"])
