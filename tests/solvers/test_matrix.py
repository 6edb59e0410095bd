"""The matrix walk: every solver of the catalogue × every constraint family × every model, on tiny
data, started as the page starts it (its default option widgets, κ held where the page holds it
by default → run specs → a worker) and as the command line does (`python -m engine run`). Each
combination either ends with a model (converged, budget or diverged) and finite exact metrics, or
is refused before it starts with a sentence that says why; nothing crashes and nothing fails on
the way. Where the command line builds the very run the page starts (the same run id), the
page's run stands for both, and the command line runs in full once per solver and once per
family and model; it runs every other combination in full."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from solver_data import two_groups_flags, two_groups_frame

from engine.cli import build_parser, main
from engine.cli.run_commands import run_spec_from_args
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
from engine.solvers.honour_rules import run_honour
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


def runnable(case: tuple[str, str | None, str]) -> bool:
    solver, family, model = case
    return solver_card(solver).refusal(MODELS[model][0], family) is None


def covering(cases: list[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    """The first runnable case of each solver and of each family and model: what the command
    line runs in full even where it builds the page's own run."""
    firsts: dict[tuple, tuple[str, str, str]] = {}
    for case in filter(runnable, cases):
        solver, family, model = case
        firsts.setdefault((solver,), case)
        firsts.setdefault((family, model), case)
    return set(firsts.values())


COMMAND_LINE_RUNS = covering(CASES)


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("matrix") / "two_groups.csv"
    two_groups_frame().to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def prepared_once(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def isolated_cache(prepared_once, monkeypatch) -> Path:
    """One cache for the module: every case prepares the same table, so it is read once."""
    monkeypatch.setenv("FAIRFRONT_CACHE", str(prepared_once))
    return prepared_once


def page_specs(table: Path, solver: str, family: str, model: str) -> list[RunSpec]:
    """The runs the page starts for `solver` alone under `family` and `model`, its widgets at
    their defaults (κ held on train where the solver can hold it); the page's refusal raised."""
    spec_model, _ = MODELS[model]
    config = picker.solver_config(solver, picker.option_values(solver))
    problem = page.Problem(
        INTERVAL,
        KAPPA,
        family,
        (solver,),
        {solver: config},
        spec_model,
        Budget(max_iterations=ITERATIONS),
        honour=run_honour(None, (solver,), family),
    )
    data = CSVSpec(str(table), "y", ("sex",))
    prepare = PrepareOptions(grouping=(GroupingSpec("sex"),), min_group_size=10)
    return page.run_specs(data, prepare, problem)


def command_line(table: Path, solver: str, family: str | None, model: str) -> list[str]:
    return [
        "run",
        *two_groups_flags(table),
        "--constraint",
        (family or "none").lower(),
        "--interval",
        *map(str, INTERVAL),
        "--kappa",
        str(KAPPA),
        "--solver",
        solver,
        *MODELS[model][1],
        "--iterations",
        str(ITERATIONS),
    ]


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
    if reason is not None:
        assert_refusal_sentence(reason, solver)
        with pytest.raises(UserError) as refused:  # the same words, before any run is queued
            page_specs(table, solver, family, model)
        assert str(refused.value) == reason
        return
    (spec,) = page_specs(table, solver, family, model)
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


def the_pages_run(table: Path, solver: str, family: str | None, model: str) -> str | None:
    """The id of the run the page starts for this combination, if it starts one."""
    if family is None or not runnable((solver, family, model)):
        return None
    try:
        (spec,) = page_specs(table, solver, family, model)
    except UserError:  # e.g. the page's objective is not the one the solver needs
        return None
    return spec.run_id


@pytest.mark.parametrize(("solver", "family", "model"), CASES + UNCONSTRAINED)
def test_the_command_line_runs_or_refuses_each_combination(
    table, tmp_path, capsys, solver, family, model
):
    """Where the command line builds the page's own run, the page's test runs it; the command
    line runs it in full where it builds another, and once per solver and per family and
    model (`COMMAND_LINE_RUNS`)."""
    argv = command_line(table, solver, family, model)
    pages_run = the_pages_run(table, solver, family, model)
    if pages_run is not None and (solver, family, model) not in COMMAND_LINE_RUNS:
        spec = run_spec_from_args(build_parser().parse_args(argv))
        if spec.run_id == pages_run:
            return
    out = tmp_path / "run.json"
    code = main([*argv, "--quiet", "--out", str(out)])
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err + printed.out
    reason = solver_card(solver).refusal(MODELS[model][0], family)
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
    # the command line runs each solver, and each family under each model, in full
    assert {s for s, _, _ in COMMAND_LINE_RUNS} == set(solver_names())
    runnable_pairs = {(f, m) for (_, f, m), r in refusals.items() if r is None}
    assert {(f, m) for _, f, m in COMMAND_LINE_RUNS} == runnable_pairs
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
