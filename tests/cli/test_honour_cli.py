"""`run --honour` says which κ′ it used and why; `sweep --honour` queues honoured points (the
reference solver's without), and `frontier` says the points are honoured, and on which split."""

from __future__ import annotations

import json

from cli_table import TABLE_FLAGS

from engine.cli import main
from engine.runs import Store
from engine.runs.frontier_text import honour_words
from engine.runs.worker import execute_run
from engine.solvers.records import RecordKind

PROBLEM = ("--interval", "0.05", "0.3")


def test_run_says_which_kappa_prime_it_used_and_why(tiny_csv, tmp_path, capsys):
    out = tmp_path / "run.json"
    argv = [
        "run",
        *TABLE_FLAGS,
        "--csv",
        str(tiny_csv),
        *PROBLEM,
        "--kappa",
        "0.2",
        "--honour",
        "train",
        "--quiet",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    first = capsys.readouterr().out.splitlines()[0]
    search = [
        r
        for r in json.loads(out.read_text())["result"]["trajectory"]
        if r["kind"] == RecordKind.HONOUR
    ]
    (chosen,) = [r for r in search if r["state"]["chosen"] == "yes"]
    assert chosen["state"]["sentence"] in first
    assert "κ held on the training data" in first or "κ not held on the training data" in first
    kappa_prime = chosen["values"]["kappa_prime"]
    assert f"κ′ = {kappa_prime:.4g}" in first or kappa_prime == 0.2


def test_sweep_honours_kappa_where_there_is_one_and_the_frontier_says_so(
    tiny_csv, quiet_store, capsys
):
    argv = [
        "sweep",
        *TABLE_FLAGS,
        "--csv",
        str(tiny_csv),
        *PROBLEM,
        "--honour",
        "val",
        "--solvers",
        "idca",
        "unconstrained",
        "--kappas",
        "0.3",
        "0.2",
    ]
    assert main(argv) == 0
    sweep_id = capsys.readouterr().out.strip()
    store = Store(quiet_store)
    rows = store.runs(sweep_id=sweep_id)
    assert sorted((r.spec.solver, r.spec.honour) for r in rows) == [
        ("idca", "val"),
        ("idca", "val"),
        ("unconstrained", None),
    ]
    for row in rows:
        execute_run(str(quiet_store), row.id)
    assert main(["frontier", sweep_id, "--split", "val"]) == 0
    printed = capsys.readouterr().out
    assert honour_words("val") in printed


def test_a_sweep_where_no_point_can_honour_kappa_is_refused(tiny_csv, quiet_store, capsys):
    argv = [
        "sweep",
        *TABLE_FLAGS,
        "--csv",
        str(tiny_csv),
        "--honour",
        "val",
        "--solvers",
        "unconstrained",
    ]
    assert main(argv) == 2
    assert "error: unconstrained runs without a constraint" in capsys.readouterr().err
    assert Store(quiet_store).runs() == []
