"""The command line never shows a traceback: generated argument lists (valid, near-valid and
wrong: unknown solvers and options, bad numbers, intervals out of range, negative κ, huge values)
go through `engine.cli.main` in-process. Each call returns an exit code or ends in argparse's
SystemExit, says what is wrong in one line, and never reports an internal error (a bug).

Runs are tiny (`--iterations` 1 or 2 comes last, and argparse keeps the last), data is never
downloaded (no `--download`; the ACS folder is an empty one), and queued runs never start a
runner process (`quiet_store`); a step may run up to three queued runs in-process, so that the
`runs` and `frontier` commands meet finished runs too.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile

import pytest
from cli_table import TABLE_FLAGS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main
from engine.fairness.families import family_names
from engine.runs import Store
from engine.runs.worker import execute_run
from engine.solvers import config_fields, solver_card, solver_names

EXAMPLES = 500
COMMANDS = ("run", "sweep", "runner", "runs", "frontier", "data", "solvers")
EXECUTE = ("execute queued runs",)  # a step that is not a command: run up to 3 queued runs here
CONSTRAINTS = [f.lower() for f in family_names()] + ["none"]

numbers = st.one_of(
    st.sampled_from(["0", "1", "-1", "0.05", "0.3", "1.5", "nan", "inf", "-inf", "1e308", "2"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10, 10**6).map(str),
    st.sampled_from(["", "x", "1,5", "0x10"]),
)
small_ints = st.one_of(
    st.sampled_from(["0", "1", "2", "-1", "3", "x", "1.5"]), st.integers(-5, 400).map(str)
)
unit = st.floats(-0.5, 1.5).map(lambda v: f"{v:.3g}")
ids = st.one_of(
    st.sampled_from(["", "0", "a", "f", "zz"]), st.text("0123456789abcdef", max_size=16)
)


def joined(parts: st.SearchStrategy) -> st.SearchStrategy:
    """A strategy of lists of words from one of lists (or tuples) of words."""
    return parts.map(lambda lists: [word for words in lists for word in words])


def flag(name: str, values: st.SearchStrategy, count: int = 1) -> st.SearchStrategy:
    return st.lists(values, min_size=count, max_size=count).map(lambda v: [name, *v])


def option_pair() -> st.SearchStrategy:
    known = sorted({o.name for s in solver_names() for o in config_fields(solver_card(s).Config)})
    names = st.one_of(st.sampled_from(known), st.text(max_size=6))
    values = st.one_of(numbers, st.sampled_from(["", "None", "auto", "true", "last", "static"]))
    return st.one_of(
        st.tuples(names, values).map(lambda p: ["--option", f"{p[0]}={p[1]}"]),
        st.text(max_size=6).map(lambda text: ["--option", text]),
    )


def data_flags(table: str, empty: str) -> st.SearchStrategy:
    tiny = [*TABLE_FLAGS, "--csv", table]
    others = [
        ["--source", "csv", "--csv", table, "--label", "x0", "--attribute", "sex"],
        ["--source", "csv", "--csv", empty, "--label", "y", "--attribute", "sex"],
        ["--source", "csv", "--label", "y"],
        ["--source", "adult"],
        ["--source", "acs", "--state", "CT"],
        ["--source", "synthetic", "--n-persons", "300"],
    ]
    extras = st.one_of(
        flag("--attribute", st.sampled_from(["sex", "y", "x0", "SEX", "RAC1P", "nope"])),
        flag("--grouping", st.sampled_from(["auto", "all", "binary", "top_k", "bins", "x"])),
        flag("--top-k", small_ints),
        flag("--bins", numbers, 2),
        flag("--min-group-size", small_ints),
        flag("--small-groups", st.sampled_from(["merge", "refuse"])),
        flag("--split", unit, 3),
        flag("--seed", small_ints),
        flag("--n-persons", st.integers(-3, 300).map(str)),
        flag("--year", st.sampled_from(["2018", "1900", "x"])),
        flag("--task", st.sampled_from(["income", "employment", "nope"])),
        flag("--positive", st.sampled_from(["1", "0", "yes"])),
        st.sampled_from([["--cross-terms"], ["--drop-protected"], ["--no-cache"]]),
    )
    source = st.one_of(st.just(tiny), st.sampled_from(others))
    return joined(st.tuples(source, joined(st.lists(extras, max_size=3))))


def problem_flags() -> st.SearchStrategy:
    solvers = st.sampled_from([*solver_names(), "magic", ""])
    return joined(
        st.lists(
            st.one_of(
                flag("--constraint", st.sampled_from([*CONSTRAINTS, "PSP", "x"])),
                flag("--solver", solvers),
                flag("--interval", st.one_of(unit, numbers), 2),
                flag("--kappa", st.one_of(unit, numbers)),
                flag("--grid-size", small_ints),
                flag("--surrogate", st.sampled_from(["ramp", "sigmoid", "hinge"])),
                flag("--temperature", numbers),
                flag("--model", st.sampled_from(["linear", "mlp", "tree"])),
                flag("--hidden", st.sampled_from(["4", "0", "-2", "300", "x"])),
                flag("--activation", st.sampled_from(["relu", "sigmoid", "tanh"])),
                flag("--seconds", numbers),
                option_pair(),
            ),
            max_size=5,
        )
    )


# last in a run or sweep: a tiny iteration budget, or one that is refused
budget = st.sampled_from(
    [
        ["--iterations", "1"],
        ["--iterations", "2"],
        ["--iterations", "0"],
        ["--iterations", "-4"],
        ["--iterations", "x"],
    ]
)


def near_valid_run(table: str) -> st.SearchStrategy:
    """A run on the tiny table that its solver and family may well accept, so that many start."""
    return joined(
        st.tuples(
            st.just(["run", *TABLE_FLAGS, "--csv", table]),
            flag("--constraint", st.sampled_from(CONSTRAINTS)),
            flag("--solver", st.sampled_from(solver_names())),
            st.sampled_from(
                [
                    [],
                    ["--cross-terms"],
                    ["--model", "mlp", "--hidden", "4"],
                    ["--model", "mlp", "--hidden", "3", "2", "--activation", "sigmoid"],
                ]
            ),
            st.sampled_from([["0.05", "0.3"], ["0", "1"], ["0.5", "0.9"], ["0", "0.2"]]).map(
                lambda interval: ["--interval", *interval]
            ),
            flag("--kappa", st.sampled_from(["0.05", "0.2", "0.5", "1"])),
            joined(st.lists(option_pair(), max_size=1)),
            st.sampled_from([[], ["--background"]]),
            st.sampled_from([["--iterations", "1"], ["--iterations", "2"]]),
        )
    )


def commands(table: str, empty: str, out: str) -> st.SearchStrategy:
    data, problem, folder = data_flags(table, empty), problem_flags(), os.path.dirname(out)
    endings = st.sampled_from(
        [
            [],
            ["--quiet"],
            ["--out", out],
            ["--out", folder],
            ["--background"],
            ["--background", "--workers", "0"],
        ]
    )
    run = joined(st.tuples(st.just(["run"]), data, problem, endings, budget))
    grid = st.one_of(
        flag("--kappas", st.one_of(unit, numbers), 2),
        flag("--intervals", st.sampled_from(["0.05:0.3", "0:1", "0.3:0.1", "a:b", "0.1", "-1:2"])),
        flag("--solvers", st.sampled_from([*solver_names(), "magic"]), 2),
        flag("--seeds", small_ints, 2),
        flag("--name", st.text(max_size=5)),
    )
    sweep = joined(
        st.tuples(st.just(["sweep"]), data, problem, joined(st.lists(grid, max_size=3)), budget)
    )
    runs = st.one_of(
        joined(
            st.tuples(
                st.just(["runs", "list"]),
                st.sampled_from(
                    [
                        [],
                        ["--status", "queued"],
                        ["--status", "x"],
                        ["--sweep", "0"],
                        ["--sweep", ""],
                    ]
                ),
            )
        ),
        st.tuples(st.sampled_from(["show", "cancel", "delete"]), ids).map(lambda t: ["runs", *t]),
        joined(
            st.tuples(
                st.just(["runs", "export"]),
                ids.map(lambda i: [i]),
                flag("--format", st.sampled_from(["json", "csv", "xml"])),
                st.sampled_from([[], ["--out", out], ["--out", folder]]),
            )
        ),
    )
    frontier = joined(
        st.tuples(
            st.just(["frontier"]),
            ids.map(lambda i: [i]),
            st.sampled_from(
                [
                    [],
                    ["--metric", "pdp"],
                    ["--metric", "x"],
                    ["--metric", "auc"],
                    ["--split", "val"],
                ]
            ),
        )
    )
    data_commands = st.one_of(
        st.sampled_from([["data", "list"], ["data", "list", "--json"], ["data"]]),
        joined(st.tuples(st.just(["data", "show"]), data, st.sampled_from([[], ["--json"]]))),
    )
    words = st.text(max_size=8).filter(lambda word: word not in COMMANDS)
    junk = st.lists(st.one_of(words, st.sampled_from(["--help", "-h", "--json"])), max_size=4)
    others = st.sampled_from([["solvers"], ["solvers", "--json"], [EXECUTE], [EXECUTE]])
    return st.one_of(run, near_valid_run(table), sweep, runs, frontier, data_commands, junk, others)


def run_cli(argv: list[str]) -> tuple[int | str, str]:
    """The exit code (or argparse's SystemExit) and everything printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
            assert isinstance(code, int), code
        except SystemExit as stop:  # argparse: --help, or a flag it cannot parse
            code = f"SystemExit({stop.code})"
    return code, out.getvalue() + err.getvalue()


def execute_queued(home: str) -> None:
    store = Store(home)
    for row in store.runs(status="queued")[:3]:
        execute_run(home, row.id)
        ended = store.run(row.id)
        assert "internal error" not in ended.reason, (ended.spec, ended.error)


@pytest.mark.slow
def test_no_argument_list_shows_a_traceback(tiny_csv, quiet_store, tmp_path, monkeypatch):
    acs = tmp_path / "acs"
    acs.mkdir()
    monkeypatch.setenv("FAIRFRONT_ACS_ROOT", str(acs))
    empty_table = tmp_path / "empty.csv"
    empty_table.write_text("")
    out = tmp_path / "outputs" / "result.json"
    out.parent.mkdir()
    command = commands(str(tiny_csv), str(empty_table), str(out))
    first = st.one_of(near_valid_run(str(tiny_csv)), command)  # often a store with a run in it

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.tuples(first, st.lists(command, max_size=3)).map(lambda t: [t[0], *t[1]]))
    def check(steps: list[list[str]]) -> None:
        with tempfile.TemporaryDirectory() as home:
            os.environ["FAIRFRONT_HOME"] = home
            for argv in steps:
                if argv == [EXECUTE]:
                    execute_queued(home)
                    continue
                code, printed = run_cli(argv)
                assert "Traceback" not in printed, (argv, printed)
                assert "internal error" not in printed, (argv, printed)
                if code == 2:
                    assert "error:" in printed, (argv, printed)

    check()
