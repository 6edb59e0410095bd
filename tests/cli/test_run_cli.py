import json

import pytest
from cli_table import TABLE_FLAGS

from engine.cli import main
from engine.runs import Store
from engine.runs.results import run_verdict
from engine.runs.worker import execute_run
from engine.solvers import solver_names


def test_run_writes_config_trajectory_and_exact_metrics(tmp_path, capsys):
    out = tmp_path / "run.json"
    code = main(
        [
            "run",
            "--data",
            "adult",
            "--attribute",
            "sex",
            "--constraint",
            "psp",
            "--interval",
            "0.05",
            "0.30",
            "--kappa",
            "0.05",
            "--solver",
            "idca",
            "--seed",
            "0",
            "--cross-terms",
            "--option",
            "outer_iterations=2",
            "--option",
            "inner_iterations=20",
            "--honour",
            "off",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr()
    assert "idca: budget (all K = 2 outer iterations done)" in printed.out
    assert "verdict: " in printed.out and "\ntest " in printed.out
    document = json.loads(out.read_text())
    assert document["verdict"]["quantity"] == "pSP" and document["verdict"]["kappa"] == 0.05
    assert document["spec"]["solver"] == "idca"
    assert document["spec"]["config"]["outer_iterations"] == 2
    assert document["spec"]["constraint"]["interval"] == [0.05, 0.3]
    assert document["spec"]["model"]["cross_terms"] is True
    result = document["result"]
    assert result["iterations"] == 40
    assert {"accuracy", "auc", "psp", "pdp", "sp", "dp"} <= set(result["metrics"]["test"])
    assert any(r["kind"] == "surrogate" for r in result["trajectory"])
    assert len(result["test_scores"]) == len(result["test_groups"]) == 16_281


def test_unconstrained_run_and_bad_option(capsys):
    assert (
        main(
            [
                "run",
                "--constraint",
                "none",
                "--solver",
                "unconstrained",
                "--quiet",
                "--iterations",
                "30",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "unconstrained: budget (iteration budget of 30 reached) after 30 iterations" in printed
    assert "No fairness constraint; pSP on the test set is 0." in printed
    assert main(["run", "--solver", "idca", "--option", "outer=3"]) == 2
    assert "unknown option(s) outer" in capsys.readouterr().err
    assert main(["run", "--solver", "idca", "--kappa", "0"]) == 2
    assert "κ = 0" in capsys.readouterr().err


def test_the_unconstrained_solver_under_psp_reports_psp_against_kappa(capsys):
    """It keeps no θ: its surrogate rows are shown at the family's starting θ (aux_init)."""
    assert (
        main(
            [
                "run",
                "--data",
                "adult",
                "--attribute",
                "sex",
                "--constraint",
                "psp",
                "--solver",
                "unconstrained",
                "--iterations",
                "30",
                "--quiet",
            ]
        )
        == 0
    )
    printed = capsys.readouterr()
    assert "Misses κ on the test set: pSP = " in printed.out and "Traceback" not in printed.err


def test_a_solver_that_cannot_solve_the_family_is_refused_before_data_is_read(tiny_csv, capsys):
    code = main(
        ["run", *TABLE_FLAGS, "--csv", str(tiny_csv), "--constraint", "eo", "--solver", "penalty"]
    )
    assert code == 2
    err = capsys.readouterr().err  # no "training rows" line: the data was not prepared
    assert err.startswith("error: penalty solves the constraint families pDP, pSP only")
    assert len(err.splitlines()) == 1


def test_the_table_names_the_familys_quantity_beside_kappa(tiny_csv, capsys):
    assert (
        main(
            [
                "run",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--constraint",
                "eo",
                "--kappa",
                "0.1",
                "--solver",
                "ssg",
                "--iterations",
                "5",
                "--quiet",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("verdict: ") and lines[2].startswith("  - ")
    header = next(i for i, line in enumerate(lines) if line.startswith("split"))
    assert lines[header].split()[3:7] == ["EO", "gap", "κ", "verdict"]
    rows = lines[header + 1 :]
    assert [line.split()[0] for line in rows] == ["test", "val", "train"]
    kappa_column = lines[header].index("κ")
    assert all(line[kappa_column - 2 : kappa_column + 1].strip() == "0.1" for line in rows)
    assert all(line.split()[-1] in ("meets", "tell") or "misses" in line for line in rows)


def test_runs_list_is_newest_first_with_verdict_and_one_column_per_quantity(
    tiny_csv, quiet_store, capsys
):
    ids = []
    for flags in (
        ["--constraint", "eo", "--solver", "ssg"],
        ["--constraint", "none", "--solver", "unconstrained"],
    ):
        assert (
            main(
                [
                    "run",
                    *TABLE_FLAGS,
                    "--csv",
                    str(tiny_csv),
                    *flags,
                    "--iterations",
                    "5",
                    "--background",
                ]
            )
            == 0
        )
        ids.append(capsys.readouterr().out.strip())
        assert execute_run(str(quiet_store), ids[-1]) == "budget"
    assert main(["runs", "list"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert "verdict" in header and "constraint" in header
    # the unconstrained run's quantity (pSP) and the EO run's, newest first, a column each
    assert header.index("test pSP") < header.index("test EO gap")
    assert [row.split()[0] for row in rows] == ids[::-1]
    store = Store(quiet_store)
    for run_id, row in zip(ids[::-1], rows, strict=True):
        assert f" {run_verdict(store, store.run(run_id)).label} " in row
    eo_run, free = store.metrics(ids[0])["test"], store.metrics(ids[1])["test"]

    def cell(row: str, column: str) -> str:  # the columns are right-aligned under their header
        return row[: header.index(column) + len(column)].split()[-1]

    assert " EO gap " in rows[1] and " none " in rows[0]
    assert [cell(rows[1], "test EO gap"), cell(rows[1], "test pSP")] == [
        f"{eo_run['constraint']:.4f}",
        f"{eo_run['psp']:.4f}",
    ]
    assert [cell(rows[0], "test EO gap"), cell(rows[0], "test pSP")] == [
        f"{free['eo']:.4f}",
        f"{free['psp']:.4f}",
    ]


def test_solvers_lists_every_registered_solver_with_options(capsys):
    assert main(["solvers", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in listing] == solver_names()
    idca = next(s for s in listing if s["name"] == "idca")
    assert {o["name"] for o in idca["options"]} >= {
        "outer_iterations",
        "inner_iterations",
        "epsilon",
    }


def test_a_negative_seed_is_refused_in_one_line(tiny_csv, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # where an internal error's trace goes
    code = main(
        [
            "run",
            *TABLE_FLAGS,
            "--csv",
            str(tiny_csv),
            "--seed",
            "-1",
            "--iterations",
            "1",
            "--quiet",
        ]
    )
    assert code == 2 and capsys.readouterr().err.startswith("error: ")


def test_an_internal_error_is_one_line_with_its_traceback_in_a_file(capsys, tmp_path, monkeypatch):
    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setattr("engine.cli.run_commands.list_solvers", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.delenv("FAIRFRONT_DEBUG", raising=False)
    assert main(["solvers"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("internal error (RuntimeError: boom); this is a bug in FairFront")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    (trace,) = tmp_path.glob("fairfront-error-*.txt")
    assert err.strip().endswith(str(trace)) and "Traceback" in trace.read_text()
    monkeypatch.setenv("FAIRFRONT_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        main(["solvers"])


def test_a_sigmoid_mlp_run_records_its_network_and_the_oracle_counts(tmp_path, capsys):
    out = tmp_path / "run.json"
    code = main(
        [
            "run",
            "--data",
            "adult",
            "--attribute",
            "sex",
            "--constraint",
            "group_loss_gap",
            "--kappa",
            "0.02",
            "--model",
            "mlp",
            "--hidden",
            "8",
            "4",
            "--activation",
            "sigmoid",
            "--solver",
            "ssl_alm",
            "--iterations",
            "300",
            "--seed",
            "0",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    document = json.loads(out.read_text())
    assert document["spec"]["model"] == {
        "kind": "mlp",
        "cross_terms": False,
        "hidden": [8, 4],
        "activation": "sigmoid",
    }
    last = [r for r in document["result"]["trajectory"] if r["kind"] == "surrogate"][-1]
    assert last["iteration"] == 300
    # SSL-ALM: per step one objective gradient, two constraint evaluations, one constraint vjp
    assert last["state"]["oracle.objective_gradients"] == 300
    assert last["state"]["oracle.constraint_values"] == 600
    assert last["state"]["oracle.constraint_gradients"] == 300
    assert 0 < last["state"]["oracle.data_passes"] < 1


def test_the_pairs_and_condition_of_a_group_loss_gap_reach_the_run(tmp_path, capsys):
    out = tmp_path / "run.json"
    code = main(
        [
            "run",
            "--data",
            "adult",
            "--attribute",
            "sex",
            "--constraint",
            "group_loss_gap",
            "--kappa",
            "0.05",
            "--pairs",
            "vs_mean",
            "--loss-condition",
            "odds",
            "--solver",
            "ssw",
            "--iterations",
            "50",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    constraint = json.loads(out.read_text())["spec"]["constraint"]
    assert constraint["pairs"] == "vs_mean" and constraint["options"] == [["condition", "odds"]]
    assert main(["run", "--data", "adult", "--constraint", "dp", "--pairs", "vs_mean"]) != 0
    assert "group_loss_gap constraint only" in capsys.readouterr().err
