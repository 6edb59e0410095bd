"""fairlearn's mitigators go through the run store like any solver: their models are stored and
score again as stored, their verdicts and frontier points are computed from the stored exact
metrics, a randomised classifier's few distinct scores are said beside its point, and
GridSearch's grid is drawn as its run's front."""

from __future__ import annotations

import numpy as np
import pytest

from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.fairness.constraints import ConstraintSpec
from engine.model_forms import MIXTURE_Q, MIXTURE_W
from engine.model_quality import FEW_DISTINCT_SCORES
from engine.models import ModelSpec
from engine.plots.frontier import frontier_figure
from engine.runs import RunSpec
from engine.runs.frontier import FEW_SCORES_MARK, frontier
from engine.runs.frontier_text import format_frontier
from engine.runs.fronts import REPORTED
from engine.runs.results import run_results, run_verdict
from engine.runs.submit import submit
from engine.runs.worker import build_problem, execute_run
from engine.solvers.fairlearn.cards import GridSearchConfig
from engine.verdict import judge

pytestmark = pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")
INTERVAL = (0.1, 0.5)


def fairlearn_spec(data, solver: str, kappa: float = 0.02) -> RunSpec:
    return RunSpec(
        data=data,
        prepare=PrepareOptions(grouping=(GroupingSpec("g"),)),
        model=ModelSpec(),
        constraint=ConstraintSpec("DP", kappa),
        interval=INTERVAL,
        solver=solver,
        config={"max_iter": 10} if solver == "exponentiated_gradient" else {},
    )


def test_fairlearn_runs_are_stored_judged_and_drawn_with_their_few_scores(store, csv_spec):
    specs = [fairlearn_spec(csv_spec, s) for s in ("exponentiated_gradient", "grid_search")]
    eg_id, grid_id = submit(specs, store, start_runner=False)
    assert [execute_run(str(store.home), r) for r in (eg_id, grid_id)] == ["converged"] * 2

    params = store.load_params(eg_id)
    assert {MIXTURE_W, MIXTURE_Q} <= set(params)
    scores, _ = store.load_scores(eg_id)
    np.testing.assert_array_equal(build_problem(specs[0]).scores(params, "test"), scores)
    distinct = store.metrics(eg_id)["test"]["distinct_scores"]
    assert 1 < distinct == np.unique(scores).size <= FEW_DISTINCT_SCORES

    eg_verdict, grid_verdict = (run_verdict(store, store.run(r)) for r in (eg_id, grid_id))
    assert any(f"only {distinct:.0f} distinct values" in f for f in eg_verdict.findings)
    assert not any("distinct values" in f for f in grid_verdict.findings)

    results = [x for r in (eg_id, grid_id) for x in run_results(store.run(r), store)]
    result = frontier(results, metric="psp", split="test")
    eg = next(p for p in result.ordinary if p.solver == "exponentiated_gradient")
    assert eg.few_scores and eg.distinct_scores == distinct
    grid = result.fronts[grid_id]  # the grid's models, then the model the run reports
    assert len(grid) == GridSearchConfig().grid_size + 1 and not any(p.few_scores for p in grid)
    assert [p.chosen for p in grid] == [False] * (len(grid) - 1) + [True]
    assert grid[-1].label in {f"{REPORTED} = {p.label}" for p in grid[:-1]}
    text = format_frontier(result)
    assert f"{FEW_SCORES_MARK} few distinct scores" in text
    eg_row = next(line for line in text.splitlines() if "  exponentiated_gradient  " in line)
    assert FEW_SCORES_MARK in eg_row.split()[0]
    front_text = text[text.index(f"front of run {grid_id} (grid_search): {len(grid) - 1} models") :]
    assert FEW_SCORES_MARK not in front_text
    figure = frontier_figure(result, "DP gap")
    drawn = {
        runs[0]: (label, hover)
        for trace in figure.data
        if trace.mode == "markers+text"
        for runs, label, hover in zip(trace.customdata, trace.text, trace.hovertext, strict=True)
    }
    assert drawn[eg_id][0].startswith("κ 0.02") and drawn[eg_id][0].endswith(
        f" · {distinct:.0f} scores"
    )
    assert f"only {distinct:.0f} distinct scores" in drawn[eg_id][1]
    front_line = next(t for t in figure.data if t.mode == "lines+markers")
    assert [label for _, label in front_line.customdata] == [p.label for p in grid[:-1]]
    assert "distinct scores" in figure.layout.title.subtitle.text


@pytest.mark.parametrize(
    ("distinct", "noted"), [(1, False), (3, True), (20, True), (21, False), (None, False)]
)
def test_the_verdict_notes_few_distinct_scores_on_the_reported_split(distinct, noted):
    row = {"accuracy": 0.8, "majority": 0.7, "auc": 0.75, "score_std": 0.3, "constraint": 0.01}
    metrics = {"test": row | {"distinct_scores": distinct}, "train": row | {"distinct_scores": 2}}
    findings = judge("converged", metrics, "DP gap", 0.05).findings
    assert any("distinct values" in f for f in findings) == noted
