import json

from engine.cli import main
from engine.solvers import solver_names


def test_run_writes_config_trajectory_and_exact_metrics(tmp_path, capsys):
    out = tmp_path / "run.json"
    code = main(["run", "--data", "adult", "--attribute", "sex", "--constraint", "psp",
                 "--interval", "0.05", "0.30", "--kappa", "0.05", "--solver", "idca", "--seed", "0",
                 "--cross-terms", "--option", "outer_iterations=2", "--option", "inner_iterations=20",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr()
    assert "idca: converged" in printed.out and "test" in printed.out
    document = json.loads(out.read_text())
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
    assert main(["run", "--constraint", "none", "--solver", "unconstrained", "--quiet"]) == 0
    assert "unconstrained: converged" in capsys.readouterr().out
    assert main(["run", "--solver", "idca", "--option", "outer=3"]) == 2
    assert "unknown option(s) outer" in capsys.readouterr().err
    assert main(["run", "--solver", "idca", "--kappa", "0"]) == 2
    assert "κ = 0" in capsys.readouterr().err


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
