"""The bench scripts in their quick modes (tiny budgets on the bundled Adult data): each still
runs from the command line and prints the tables its docstring promises."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from engine.solvers.catalogue import solver_card

PROJECT = Path(__file__).resolve().parents[1]


def bench(script: str, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, str(PROJECT / "bench" / script), *argv],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_paper001_traces_tunes_the_baselines_and_ranks_the_problem_before_and_after():
    """Paper 001 tunes its baselines, not PLADA: the tuned table has ssg_hl's chosen trial
    (starred) and PLADA's run at its constants, the choice names a setting of the card's grid,
    and the problem's ranking is printed at defaults and tuned."""
    out = bench("paper001_traces.py", "--seconds", "0.3", "--data", "adult", "--constraints",
                "DP", "--solvers", "plada", "ssg_hl", "--tune")  # fmt: skip
    assert "PLADA at Table 2's η_w = 0.001" in out  # the paper's comparison, as it ran it
    defaults, tuned = out.split("tuned (*")
    assert re.search(r"^adult\s+DP\s+ssg_hl\s", defaults, re.M)
    assert re.search(r"^adult\s+DP\s+ssg_hl\*\s", tuned, re.M)
    assert re.search(r"^adult\s+DP\s+plada\s", tuned, re.M)  # no grid: its defaults
    steps = solver_card("ssg_hl").tuning.grid["objective_step"]
    (chosen,) = re.findall(r"adult DP ssg_hl: objective_step = ([\d.]+)", tuned)
    assert float(chosen) in steps
    ranking = tuned[tuned.index("ranking by final training loss") :].splitlines()[1:3]
    assert ranking[0].strip().startswith("adult DP:") and ranking[1].strip().startswith("→")
    assert all("plada" in line and "ssg_hl" in line for line in ranking)
    assert "ssg_hl*" in ranking[1]


def test_plada_defaults_sets_table_2s_step_beside_the_derived_one():
    out = bench("plada_defaults.py", "--seconds", "0.3", "--cases", "adult")
    rows = [line.split() for line in out.splitlines() if line.startswith("adult ")]
    assert [row[1] for row in rows] == ["Table", "derived"]
    for row in rows:  # train loss, train gap, test gap and test accuracy, each a number
        assert all(0 <= float(value) <= 1 for value in row[-4:])


def test_paper004_frontier_compares_the_tuned_table_with_the_defaults_one():
    out = bench("paper004_frontier.py", "--data", "adult", "--examples", "group", "--methods",
                "sfls", "--kappas", "0.05", "--seeds", "1", "--seconds", "0.3", "--jobs", "1",
                "--tune")  # fmt: skip
    runs = int(re.search(r"^(\d+) runs of", out, re.M)[1])
    # the reference, sfls at its defaults and one trial per setting of its grid
    assert runs == 2 + len(solver_card("sfls").tuning.settings())
    assert "at the cards' defaults" in out and "tuned by App. E.3's grids" in out
    assert re.search(r"tuning changes the winner in [01] of 1 cells", out)


def test_defaults_quality_counts_its_runs_against_the_targets(tmp_path):
    out = bench("defaults_quality.py", "--seconds", "0.3", "--data", "adult", "--solvers",
                "idca", "unconstrained", "--home", str(tmp_path / "runs"))  # fmt: skip
    lines = {line.split()[1]: line for line in out.splitlines() if line.startswith("adult ")}
    assert set(lines) == {"idca", "unconstrained"}
    fine = sum("degenerate" not in line for line in lines.values())
    assert re.search(rf"not degenerate: {fine} of 2 ", out)
    assert re.search(r"constrained runs within κ \+ 2σ on test: [01] of 1 ", out)  # idca only
