"""The examples in examples/ run on the bundled data and print what they promise."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from solving_env import solving_env

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ROWS = ("--rows", "1500")  # a smaller sample than the examples' default: seconds each
# each fit's budget in iterations, so the models do not depend on the machine's speed; the
# seconds are a cap that a fit of 2,000 iterations on 1,500 rows stays far below
BUDGET = ("--max-iter", "2000", "--seconds", "60")

pytestmark = pytest.mark.slow


def run_example(name: str, *arguments: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *ROWS, *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=EXAMPLES,
        env=solving_env(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def numbers(line: str) -> list[float]:
    return [float(n) for n in re.findall(r"(?<![\w.])\d+\.\d+|(?<![\w.])\d+(?![\w.])", line)]


def test_the_grid_search_tries_every_kappa_and_refits_one():
    out = run_example("pipeline_grid_search.py", *BUDGET)  # 13 fits
    rows = [line for line in out.splitlines() if re.match(r"0\.\d+ ", line)]
    assert [numbers(row)[0] for row in rows] == [0.2, 0.1, 0.05, 0.02]
    for row in rows:
        _, accuracy, fairness = numbers(row)
        assert 0.7 < accuracy < 1 and 0 <= fairness <= 1
    chosen = re.search(r"chosen κ = ([\d.]+): test accuracy ([\d.]+)", out)
    assert chosen and float(chosen[1]) in (0.2, 0.1, 0.05, 0.02) and float(chosen[2]) > 0.7
    assert "verdict of the refitted model:" in out


def test_the_sweep_writes_a_frontier_page(tmp_path):
    page = tmp_path / "frontier.html"
    out = run_example("kappa_sweep_frontier.py", *BUDGET, "--out", str(page))
    lines = [line for line in out.splitlines() if line.startswith("κ = ")]
    assert len(lines) == 6  # the unconstrained model and five values of κ
    fairness = {line.split()[2]: numbers(line)[-1] for line in lines}
    assert fairness["0.02"] > fairness["none"]  # the tightest κ is fairer than no constraint
    html = page.read_text()
    assert "Plotly.newPlot" in html and "1 \\u2212 pSP (test)" in html


def test_idca_and_exponentiated_gradient_are_measured_alike():
    out = run_example("idca_vs_exponentiated_gradient.py", *BUDGET)
    rows = {line[:20].strip(): numbers(line[20:]) for line in out.splitlines()[1:4]}
    assert set(rows) == {"unconstrained", "IDCA, pSP ≤ 0.05", "EG, DP gap ≤ 0.02"}
    _, _, dp_free, _, _ = rows["unconstrained"]
    _, _, dp_eg, _, eg_scores = rows["EG, DP gap ≤ 0.02"]
    _, _, _, fair_idca, idca_scores = rows["IDCA, pSP ≤ 0.05"]
    assert dp_eg < dp_free and fair_idca > rows["unconstrained"][3]
    assert eg_scores <= 20 < idca_scores  # a randomised classifier's few distinct scores
