"""`run --tune`: the trials of the solver's grid run in the store, their table and the choice
are printed, and the tuned run is the chosen trial (ssg's plan holds nothing fixed)."""

from __future__ import annotations

import json

from cli_table import TABLE_FLAGS

from engine.cli import build_parser, main
from engine.cli.run_commands import run_spec_from_args
from engine.runs import Store
from engine.runs.tuning import tuned_run
from engine.solvers.catalogue import solver_card


def test_a_tuned_run_prints_its_trials_and_reports_the_chosen_one(
    tiny_csv, quiet_store, inline_runner, tmp_path, capsys
):
    out = tmp_path / "tuned.json"
    arguments = [
        "run",
        *TABLE_FLAGS,
        "--csv",
        str(tiny_csv),
        "--constraint",
        "psp",
        "--kappa",
        "0.2",
        "--solver",
        "ssg",
        "--iterations",
        "40",
        "--tune",
        "--out",
        str(out),
    ]
    assert main(arguments) == 0
    printed = capsys.readouterr()
    grid = solver_card("ssg").tuning.settings()
    table = [
        line for line in printed.err.splitlines() if line.strip().startswith(("epsilon", "0."))
    ]
    assert len(table) == 1 + len(grid) and sum("◆" in line for line in table) == 1
    store = Store(quiet_store)
    assert len(store.runs()) == len(grid)  # the tuned run is the chosen trial: no fifth run
    document = json.loads(out.read_text())
    assert f"tuned run {document['id']}" in printed.out
    tuned = tuned_run(store, run_spec_from_args(build_parser().parse_args(arguments)))
    assert tuned.final.run_id == document["id"]  # the chosen trial, by the rule
    chosen = next(line for line in table if "◆" in line)
    assert float(chosen.split()[0]) == tuned.choice.setting["epsilon"]
    assert document["spec"]["config"]["epsilon"] == tuned.choice.setting["epsilon"]

    assert main(arguments) == 0  # again: every trial and the tuned run are reused
    assert len(store.runs()) == len(grid)
    assert "Chosen: epsilon = " in capsys.readouterr().err


def test_tune_refuses_a_solver_without_a_plan_and_a_background_run(tiny_csv, quiet_store, capsys):
    base = ["run", *TABLE_FLAGS, "--csv", str(tiny_csv), "--constraint", "psp", "--tune"]
    assert main([*base, "--solver", "unconstrained"]) == 2
    assert "declares no tuning" in capsys.readouterr().err
    assert main([*base, "--solver", "ssg", "--background"]) == 2
    assert "leave out --background" in capsys.readouterr().err
    assert Store(quiet_store).runs() == []


def test_a_tuned_sweep_queues_the_chosen_run_of_each_point(
    tiny_csv, quiet_store, inline_runner, capsys
):
    assert (
        main(
            [
                "sweep",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--constraint",
                "psp",
                "--kappas",
                "0.1",
                "0.2",
                "--solvers",
                "ssg",
                "unconstrained",
                "--iterations",
                "40",
                "--tune",
                "--wait",
            ]
        )
        == 0
    )
    printed = capsys.readouterr()
    sweep_id = printed.out.split()[0]
    store = Store(quiet_store)
    grid = solver_card("ssg").tuning.settings()
    assert len(store.runs()) == 2 * len(grid) + 1  # the trials and the reference, no more
    swept = store.runs(sweep_id=store.sweep_id(sweep_id))
    assert sorted(r.spec.solver for r in swept) == ["ssg", "ssg", "unconstrained"]
    for row in (r for r in swept if r.spec.solver == "ssg"):
        kappa = row.spec.kappa
        said = f"ssg κ = {kappa:g} I = [0, 1): Chosen: epsilon = {row.spec.config['epsilon']},"
        assert said in printed.err
        assert row.spec.config["epsilon"] in [s["epsilon"] for s in grid]
    assert main(["frontier", sweep_id]) == 0


def test_a_tuned_benchmark_runs_each_solver_with_the_options_its_trials_chose(
    tiny_csv, quiet_store, inline_runner, tmp_path, capsys
):
    out = tmp_path / "study"
    assert (
        main(
            [
                "benchmark",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--constraint",
                "group_loss_gap",
                "--kappa",
                "0.05",
                "--seconds",
                "0.5",
                "--solvers",
                "sgd",
                "ssl_alm",
                "--runs",
                "2",
                "--tune",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().err
    grid = solver_card("ssl_alm").tuning.settings()
    assert f"tuning 1 points: {len(grid)} trials" in printed  # sgd declares no grid
    store = Store(quiet_store)
    line = next(x for x in printed.splitlines() if x.startswith("ssl_alm κ = 0.05"))
    study = [r for r in store.runs() if r.spec.solver == "ssl_alm" and r.spec.seed == 1]
    (second_seed,) = study  # the trials ran on the first seed
    chosen = {name: second_seed.spec.config[name] for name in ("tau", "eta")}
    assert chosen in grid and f"tau = {chosen['tau']}, eta = {chosen['eta']}," in line
