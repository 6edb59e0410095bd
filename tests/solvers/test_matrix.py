"""The matrix walk: every solver of the catalogue × every constraint family × every model, on tiny
data, started as the page starts it (its default option widgets → run specs → a worker) and as the
command line does (`python -m engine run`). Each combination either ends with a model (converged,
budget or diverged) and finite exact metrics, or is refused before it starts with a sentence that
says why; nothing crashes and nothing fails on the way."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from solver_data import two_groups_frame

from engine.cli import main
from engine.data.csv_source import CSVSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.errors import UserError
from engine.fairness.families import family_names, quantity_name
from engine.models import ModelSpec
from engine.runs import RunSpec, Store
from engine.runs.results import measure_view, run_verdict
from engine.runs.worker import execute_run
from engine.solvers import Budget, solver_card, solver_names
from engine.status import WITH_MODEL
from pages.shared import problem_controls as page
from pages.shared import solver_picker as picker

INTERVAL, KAPPA, ITERATIONS = (0.05, 0.3), 0.05, 3
MODELS = {
    "linear": (ModelSpec(), []),
    "cross-terms": (ModelSpec(cross_terms=True), ["--cross-terms"]),
    "mlp": (ModelSpec("mlp"), ["--model", "mlp"]),
}
CASES = [(s, f, m) for s in solver_names() for f in family_names() for m in MODELS]
UNCONSTRAINED = [(s, None, m) for s in solver_names() for m in MODELS]  # `--constraint none`
EXACT = ("accuracy", "auc", "constraint")  # what every split of a run with a model must have


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("matrix") / "two_groups.csv"
    two_groups_frame().to_csv(path, index=False)
    return path


def assert_refusal_sentence(reason: str, solver: str) -> None:
    assert reason.startswith(f"{solver} ") and len(reason.split()) >= 8, reason


def assert_finite_exact_metrics(metrics: dict[str, dict], with_constraint: bool = True) -> None:
    names = EXACT if with_constraint else EXACT[:2]
    for split in ("train", "val", "test"):
        for name in names:
            value = metrics[split][name]
            assert value is not None and math.isfinite(value), (split, name, value)


@pytest.mark.parametrize(("solver", "family", "model"), CASES)
def test_the_page_runs_or_refuses_each_combination(table, tmp_path, solver, family, model):
    spec_model, _ = MODELS[model]
    reason = picker.solver_refusals(family, spec_model)[solver]
    config = picker.solver_config(solver, picker.option_values(solver))
    problem = page.Problem(
        INTERVAL,
        KAPPA,
        family,
        (solver,),
        {solver: config},
        spec_model,
        Budget(max_iterations=ITERATIONS),
    )
    data = CSVSpec(str(table), "y", ("sex",))
    prepare = PrepareOptions(grouping=(GroupingSpec("sex"),), min_group_size=10)
    if reason is not None:
        assert_refusal_sentence(reason, solver)
        with pytest.raises(UserError) as refused:  # the same words, before any run is queued
            page.run_specs(data, prepare, problem)
        assert str(refused.value) == reason
        return
    (spec,) = page.run_specs(data, prepare, problem)
    store = Store(tmp_path / "runs")
    store.enqueue(spec.run_id, spec.to_dict())
    execute_run(str(store.home), spec.run_id)
    row = store.run(spec.run_id)
    assert row.status in WITH_MODEL, (row.status, row.reason, row.error)
    assert_finite_exact_metrics(store.metrics(spec.run_id), spec.constraint is not None)
    verdict = run_verdict(store, row)
    # a run without constraint is judged by pSP, or by the exact counterpart of the measure a
    # solver minimises itself (paper 002: the DP gap of its default measure, dp)
    view = measure_view(spec)
    shown = spec.constraint or view
    expected = quantity_name(shown.family if shown else None)
    assert verdict.quantity == expected and verdict.check("test").value is not None


@pytest.mark.parametrize(("solver", "family", "model"), CASES + UNCONSTRAINED)
def test_the_command_line_runs_or_refuses_each_combination(
    table, tmp_path, capsys, solver, family, model
):
    spec_model, flags = MODELS[model]
    out = tmp_path / "run.json"
    code = main(
        [
            "run",
            "--source",
            "csv",
            "--csv",
            str(table),
            "--label",
            "y",
            "--attribute",
            "sex",
            "--min-group-size",
            "10",
            "--constraint",
            (family or "none").lower(),
            "--interval",
            *map(str, INTERVAL),
            "--kappa",
            str(KAPPA),
            "--solver",
            solver,
            *flags,
            "--iterations",
            str(ITERATIONS),
            "--quiet",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err + printed.out
    reason = solver_card(solver).refusal(spec_model, family)
    if reason is not None:
        assert code == 2 and printed.err.strip() == f"error: {reason}"
        assert not out.exists()
        return
    assert code == 0, printed.err
    document = json.loads(out.read_text())
    assert document["result"]["status"] in WITH_MODEL, document["result"]["reason"]
    assert_finite_exact_metrics(document["result"]["metrics"], family is not None)
    view = measure_view(RunSpec.from_dict(document["spec"]))
    quantity = quantity_name(family or (view.family if view else None))
    assert document["verdict"]["quantity"] == quantity
    assert f"verdict: {document['verdict']['label']}" in printed.out
    assert quantity in printed.out.splitlines()[-4]  # the table's header


def test_the_walk_covers_runs_and_refusals_of_every_kind():
    """Not a vacuous walk: every solver runs somewhere, and both refusals occur."""
    refusals = {(s, f, m): solver_card(s).refusal(MODELS[m][0], f) for s, f, m in CASES}
    assert {s for (s, _, _), r in refusals.items() if r is None} == set(solver_names())
    texts = [r for r in refusals.values() if r is not None]
    assert any("linear models only" in r for r in texts)
    assert any("solves the constraint families" in r for r in texts)


@pytest.mark.parametrize("solver", solver_names())
def test_the_pages_default_option_widgets_give_the_cards_defaults(solver):
    config = picker.solver_config(solver, picker.option_values(solver))
    assert config == dataclasses.asdict(solver_card(solver).Config())


@pytest.mark.parametrize("unset", ["", "None", "auto", " none ", None])
def test_an_optional_option_left_unset_is_none(unset):
    assert picker.solver_config("group_auc", {"step": unset})["step"] is None
    assert picker.solver_config("group_auc", {"step": "0.5"})["step"] == 0.5
    with pytest.raises(UserError, match="option step needs a finite number, or empty text"):
        picker.solver_config("group_auc", {"step": "fast"})


def test_a_refused_solver_stays_wanted_and_comes_back():
    wanted = ["idca", "penalty", "unconstrained"]
    for_eo = picker.solver_refusals("EO", ModelSpec())
    assert picker.chosen_solvers(wanted, for_eo) == ["idca", "unconstrained"]
    assert "penalty solves the constraint families pDP, pSP only" in for_eo["penalty"]
    for_psp = picker.solver_refusals("pSP", ModelSpec())
    assert picker.chosen_solvers(wanted, for_psp) == wanted
    for_mlp = picker.solver_refusals("pSP", ModelSpec("mlp"))
    assert picker.chosen_solvers(wanted, for_mlp) == ["unconstrained"]
