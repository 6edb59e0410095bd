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
