"""`benchmark`: the Benchmark page's study from the command line: it queues the runs, waits for
them, writes the table, criteria, bands, grid and figures to a folder and prints the table."""

from __future__ import annotations

import pandas as pd
import pytest
from cli_table import TABLE_FLAGS

from engine.benchmark.study import SPIDER, TABLE_METRICS
from engine.cli import build_parser, main
from engine.cli.benchmark_commands import study_setup
from engine.runs import Store
from engine.runs.runner import stop_runners

PROBLEM = (
    "--constraint",
    "group_loss_gap",
    "--kappa",
    "0.05",
    "--model",
    "mlp",
    "--hidden",
    "4",
    "--iterations",
    "60",
    "--save-every",
    "20",
    "--seconds",
    "5",
)
BAND_COLUMNS = ["quantity", "variant", "split", "seconds", "mean", "q1", "median", "q3", "runs"]


def table_columns(metrics) -> list[str]:
    return [f"{name} {part}" for name in metrics for part in ("mean", "std", "runs", "best")]


@pytest.fixture
def home(tmp_path):
    folder = tmp_path / "home"
    yield folder
    stop_runners(folder)  # the detached runner and its workers


@pytest.mark.slow
def test_a_study_of_two_solvers_writes_its_files_and_prints_the_table(
    tiny_csv, home, tmp_path, capsys
):
    out = tmp_path / "study"
    code = main(
        [
            "benchmark",
            *TABLE_FLAGS,
            "--csv",
            str(tiny_csv),
            *PROBLEM,
            "--solvers",
            "sgd",
            "ssl_alm",
            "--runs",
            "2",
            "--home",
            str(home),
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "4 runs (2 variants × 2 seeds) in sweep" in printed.err
    assert "benchmark: 4 of 4 runs ended, 0 running, 0 queued" in printed.err
    assert sorted(p.name for p in out.iterdir()) == [
        "bands.csv",
        "bands.html",
        "criteria.csv",
        "criteria.html",
        "probabilities.html",
        "table.csv",
    ]
    assert {r.status for r in Store(home).runs()} == {"budget"}

    table = pd.read_csv(out / "table.csv", index_col=0)
    assert table.index.tolist() == ["sgd", "ssl_alm"]
    assert table.columns.tolist() == table_columns(TABLE_METRICS.values())
    assert (table["test loss runs"] == 2).all() and table["test violation runs"].tolist() == [2, 2]
    criteria = pd.read_csv(out / "criteria.csv")
    assert criteria.columns.tolist() == ["split", "variant", *SPIDER]
    assert list(zip(criteria.split, criteria.variant, strict=True)) == [
        ("train", "sgd"),
        ("train", "ssl_alm"),
        ("test", "sgd"),
        ("test", "ssl_alm"),
    ]
    bands = pd.read_csv(out / "bands.csv")
    assert bands.columns.tolist() == BAND_COLUMNS
    keys = set(zip(bands.quantity, bands.variant, bands.split, strict=True))
    assert keys == {
        (q, v, s)
        for q in ("loss", "loss[F,M]")
        for v in ("sgd", "ssl_alm")
        for s in ("train", "test")
    }
    assert set(bands.runs) <= {1, 2} and (bands.q1 <= bands.q3).all()
    for name in ("bands.html", "criteria.html", "probabilities.html"):
        page = (out / name).read_text()  # plotly.js inside: it opens offline
        assert "cdn.plot.ly" not in page.split("<body>", 1)[0] and len(page) > 1_000_000

    lines = printed.out.splitlines()
    assert lines[0].startswith("mean ± std over 2 runs per variant; * the best of each row")
    assert lines[1].split() == ["sgd", "ssl_alm"]
    metric_lines, verdicts = lines[2 : 2 + len(TABLE_METRICS)], lines[2 + len(TABLE_METRICS) :]
    assert verdicts[0] == "verdicts on the test set:" and len(verdicts) == 3
    assert verdicts[1].startswith("  sgd: ") and verdicts[2].startswith("  ssl_alm: ")
    rows = {}  # metric → its cells
    for name, line in zip(TABLE_METRICS.values(), metric_lines, strict=True):
        assert line.startswith(f"{name} ")
        rows[name] = line.removeprefix(name)
    assert " ± " in rows["test loss"] and " ± " in rows["test violation"]
    best = table[[f"{name} best" for name in TABLE_METRICS.values()]].astype(bool)
    for name, line in rows.items():
        marks = [cell.endswith("*") for cell in line.split("  ") if cell.strip()]
        assert marks == best[f"{name} best"].tolist(), name


def test_a_grid_of_one_solver_writes_the_heatmap_and_leaves_a_failed_run_out(
    tiny_csv, quiet_store, inline_runner, tmp_path, capsys
):
    inline_runner["fail"] = lambda spec: spec.config["rho"] == 1 and spec.config["mu"] == 2
    out = tmp_path / "grid"
    code = main(
        [
            "benchmark",
            *TABLE_FLAGS,
            "--csv",
            str(tiny_csv),
            *PROBLEM,
            "--solvers",
            "ssl_alm",
            "--runs",
            "1",
            "--grid",
            "option.rho=0.5,1",
            "--grid",
            "option.mu=0,2",
            "--option",
            "tau=0.05",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    rows = Store(quiet_store).runs()
    assert all(r.spec.config["tau"] == 0.05 for r in rows)  # --option applies to each point
    failed = [r for r in rows if r.status == "failed"]
    assert len(rows) == 4 and len(failed) == 1
    assert (
        f"run {failed[0].id} (ssl_alm · option.rho=1 · option.mu=2, seed 0) ended failed: "
        "the test broke it; left out"
    ) in printed.err
    assert {"grid.csv", "grid.html"} <= {p.name for p in out.iterdir()}
    grid = pd.read_csv(out / "grid.csv")
    assert grid.columns.tolist() == ["option.rho", "option.mu", "val loss", "val violation"]
    assert list(zip(grid["option.rho"], grid["option.mu"], strict=True)) == [
        (0.5, 0),
        (1, 0),
        (0.5, 2),
        (1, 2),
    ]
    assert grid["val loss"].isna().tolist() == [False, False, False, True]
    table = pd.read_csv(out / "table.csv", index_col=0)
    assert table.index.tolist() == [
        "ssl_alm · option.rho=0.5 · option.mu=0",
        "ssl_alm · option.rho=0.5 · option.mu=2",
        "ssl_alm · option.rho=1 · option.mu=0",
    ]
    assert printed.out.startswith("mean ± std over 1 runs per variant")


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--solvers", "sgd", "--runs", "0"], "error: --runs needs a whole number ≥ 1"),
        (["--solvers", "sgd", "magic"], "error: unknown solver 'magic'"),
        (
            ["--constraint", "psp", "--solvers", "sgd", "sgd_penalty"],
            "error: the grid point solver=sgd_penalty, solver.seed=0: sgd_penalty solves the "
            "constraint families group_loss_gap only",
        ),
        (
            ["--solvers", "idca", "ssl_alm", "--model", "mlp"],
            "error: the grid point solver=idca, solver.seed=0: idca trains linear models only",
        ),
        (
            ["--solvers", "sgd", "--grid", "solver=ssl_alm"],
            "error: --grid solver=... is the study's own axis; give it with --solvers",
        ),
        (
            ["--solvers", "sgd", "--option", "rho=1"],
            "error: no solver of this grid (sgd) has the option rho",
        ),
        (
            ["--solvers", "ssl_alm", "--option", "rho=1", "--grid", "option.rho=1,2"],
            "error: --option rho and --grid option.rho=... both set it",
        ),
        (["--solvers", "sgd", "--seconds", "0"], "error: the time budget must be"),
    ],
)
def test_bad_input_is_one_line_and_queues_nothing(
    tiny_csv, quiet_store, tmp_path, capsys, flags, words
):
    out = tmp_path / "out"
    assert (
        main(
            [
                "benchmark",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--runs",
                "2",
                *flags,
                "--out",
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith(words) and len(err.splitlines()) == 1, err
    assert Store(quiet_store).runs() == [] and not out.exists()


def test_an_out_path_that_is_a_file_is_refused_before_anything_is_queued(
    tiny_csv, quiet_store, tmp_path, capsys
):
    taken = tmp_path / "taken"
    taken.write_text("")
    assert (
        main(
            [
                "benchmark",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--solvers",
                "sgd",
                "--out",
                str(taken),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot make the folder {taken}") and len(err.splitlines()) == 1
    assert Store(quiet_store).runs() == []


@pytest.mark.parametrize(
    ("flags", "save_every", "save_seconds"),
    [
        ([], None, 0.1),
        (["--save-every", "7"], 7, None),
        (["--save-seconds", "0.5"], None, 0.5),
        (["--save-every", "7", "--save-seconds", "0.5"], 7, 0.5),
    ],
)
def test_iterates_are_saved_every_tenth_of_a_solver_second_unless_told_otherwise(
    tiny_csv, flags, save_every, save_seconds
):
    args = build_parser().parse_args(
        [
            "benchmark",
            *TABLE_FLAGS,
            "--csv",
            str(tiny_csv),
            "--solvers",
            "sgd",
            "ssl_alm",
            "--runs",
            "3",
            *flags,
            "--out",
            "unused",
        ]
    )
    base, grid = study_setup(args)
    assert (base.budget.save_every, base.budget.save_seconds) == (save_every, save_seconds)
    assert base.budget.max_seconds == 30.0 and base.budget.max_iterations is None
    assert grid == {"solver": ["sgd", "ssl_alm"], "solver.seed": [0, 1, 2]}
