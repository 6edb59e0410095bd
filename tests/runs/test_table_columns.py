"""One quantity per column, named in its header, in every table of runs: one tiny run of every
solver of the catalogue, each shown as Explore shows it (beside the unconstrained reference, in
the view of its constraint), then all together as the Runs page, the report and the command
line list them. A column's header names a stored metric (a score, or a quantity by its name in
`QUANTITY_NAMES`); each cell is the run's stored metric of exactly that name ("constraint" for
the run held to that quantity), or empty when the run has none, and no cell reads "None" or
"nan"."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from run_fixtures import INTERVAL, make_spec
from toy_tables import write_toy_csv

from engine.cli import main
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import reported_metric
from engine.objectives import objective_type
from engine.report import store_report
from engine.runs import Store
from engine.runs.comparison import SCORE_COLUMNS, ComparisonTable, comparison_table
from engine.runs.frontier import frontier
from engine.runs.fronts import run_front
from engine.runs.quantities import QUANTITY_NAMES, quantity_of
from engine.runs.results import front_frontier, measure_view, run_results, run_verdict
from engine.runs.worker import execute_run
from engine.solvers.catalogue import solver_card, solver_names

# the family each constrained solver is run under: the first of these it solves, else its first
PREFERRED = ("pSP", "DP", "group_loss_gap", "auc_gap")
SCORES = {
    header: metric for columns in SCORE_COLUMNS.values() for header, metric in columns.items()
}
NAMED = {name: metric for metric, name in QUANTITY_NAMES.items()}
MISSING_WORDS = re.compile(r"\b(None|nan|NaN)\b")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # tiny rank bands, few rows


def solver_spec(data, name: str):
    """A tiny run of solver `name`: five iterations on the toy table, under the family it
    solves (`PREFERRED`), with the objective its card defaults to."""
    card = solver_card(name)
    spec = dataclasses.replace(
        make_spec(data, solver=name, kappa=0.2, iterations=5), constraint=None
    )
    if card.constrained:
        family = next((f for f in PREFERRED if f in card.families()), card.families()[0])
        interval = INTERVAL if family in ("pSP", "pDP") else None
        spec = dataclasses.replace(spec, constraint=ConstraintSpec(family, 0.2, interval))
    return dataclasses.replace(spec, objective=objective_type(card.default_objective)())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Store, dict[str, str]]:
    """A store holding one finished run of every solver, by solver name."""
    folder = tmp_path_factory.mktemp("columns")
    data = write_toy_csv(folder, n=400)
    store = Store(folder / "home")
    ids = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRFRONT_CACHE", str(folder / "cache"))
        for name in solver_names():
            spec = solver_spec(data, name)
            store.enqueue(spec.run_id, spec.to_dict())
            assert execute_run(str(store.home), spec.run_id) != "failed", name
            ids[name] = spec.run_id
    return store, ids


def metric_of(header: str) -> tuple[str, str, bool]:
    """What a measured column's header names: (split, stored metric, whether it is the metric's
    95 % interval); the metric is "constraint" for a quantity only a run held to it reports."""
    interval = header.endswith(" 95 %")
    words = header.removesuffix(" 95 %")
    if words in SCORES:
        return "test", SCORES[words], interval
    split, _, name = words.partition(" ")
    assert split in ("test", "train"), header
    return split, NAMED.get(name, f"constraint:{name}"), interval


def expected_cell(store: Store, run_id: str, header: str) -> float | str | None:
    """The cell of `header` for a run, from its stored metrics: the metric the header names,
    or "constraint" where the run's own constraint holds that quantity (the same value as the
    metric, where every run reports it)."""
    split, metric, interval = metric_of(header)
    values = store.metrics(run_id).get(split, {})
    own = store.run(run_id).spec.constraint
    held = own is not None and (
        reported_metric(own) == metric
        or (reported_metric(own) is None and metric == f"constraint:{quantity_of(own).name}")
    )
    source = "constraint" if held else metric
    if held and metric in values and values[metric] is not None and not interval:
        assert values["constraint"] == pytest.approx(values[metric], abs=1e-9), (run_id, metric)
    if interval:
        low, high = values.get(f"{source}_low"), values.get(f"{source}_high")
        if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
            return ""
        return f"{low:.3f}–{high:.3f}"
    value = values.get(source)
    return None if value is None or not math.isfinite(value) else value


def check_table(store: Store, table: ComparisonTable) -> None:
    headers = [c.header for c in table.columns]
    assert len(headers) == len(set(headers)), headers
    for row in table.rows:
        assert list(row) == headers
        for column in table.columns:
            cell = row[column.header]
            assert not (isinstance(cell, str) and MISSING_WORDS.search(cell)), (column, cell)
            if isinstance(cell, float):
                assert math.isfinite(cell), (column.header, cell)
            if column.measured:
                assert cell == expected_cell(store, row["run"], column.header), (
                    row["solver"],
                    column.header,
                )


def explore_view(store: Store, run_id: str) -> ConstraintSpec | None:
    """The view Explore shows a run in: its constraint, as the first constrained spec's."""
    return store.run(run_id).spec.constraint


@pytest.mark.parametrize("solver", solver_names())
def test_every_solver_shown_beside_the_reference_has_one_quantity_per_column(runs, solver):
    store, ids = runs
    run_ids = list(dict.fromkeys([ids[solver], ids["unconstrained"]]))
    view = explore_view(store, ids[solver])
    table = comparison_table(store, run_ids, view, compact=True)  # as Explore shows it
    check_table(store, table)
    for row in table.rows:  # the value a verdict judges is in its run's row, under its name
        check = run_verdict(store, store.run(row["run"]), view).check("test")
        if check is not None and check.value is not None:
            tested = [
                row[c.header]
                for c in table.columns
                if c.quantity is not None and c.split == "test" and not c.interval
            ]
            assert check.value in tested, (solver, row["run"])
    html = store_report(store, run_ids, solver)
    assert not re.search(r"<td>(None|nan|NaN)</td>", html)
    assert not re.search(r"<td>[^<]*\b(None|nan)\b", html)


@pytest.mark.parametrize("solver", solver_names())
def test_a_frontier_of_a_solver_and_its_reference_shows_one_quantity(runs, solver):
    """The frontier of the run and the reference, on the quantity of its constraint (or of its
    measure): every point's constrained value is that quantity of its run."""
    store, ids = runs
    row = store.run(ids[solver])
    view = explore_view(store, row.id) or measure_view(row.spec)
    if view is None:
        return  # no quantity to set beside: a frontier on "constraint" has no point
    metric = reported_metric(view)
    results = [
        r
        for run_id in dict.fromkeys([row.id, ids["unconstrained"]])
        for r in run_results(store.run(run_id), store, view)
    ]
    for point in frontier(results, metric="constraint").points:
        (run_id,) = point.run_ids
        values = store.metrics(run_id)["test"]
        held = store.run(run_id).spec.constraint is not None
        expected = values["constraint"] if held else values.get(metric)
        if point.front_of is not None and not point.chosen:
            continue  # a front's models are checked below
        assert point.constraint == pytest.approx(expected), (solver, run_id)


def test_runs_beside_another_quantity_show_that_quantity(runs):
    """A run shown beside a sweep of another quantity (a measure's front, or an IDCA run held
    to pSP, beside a DP sweep) carries the sweep's quantity of each of its models as its
    constrained value, never its own, and no κ: its κ bounds a quantity not shown."""
    store, ids = runs
    dp = ConstraintSpec("DP", 0.2)
    fronts = [name for name in solver_names() if run_front(store, ids[name])]
    assert fronts  # paper 002's weighted-sum fronts
    for name in fronts:
        row = store.run(ids[name])
        members = run_front(store, row.id)
        points = frontier(run_results(row, store, dp), metric="constraint").fronts[row.id]
        models = [p for p in points if not p.chosen]
        for point, member in zip(models, members, strict=True):
            assert point.constraint == pytest.approx(member.metrics["test"]["dp"]), name
        own = front_frontier(row.id, row.spec, members, store.metrics(row.id))
        assert len(own.fronts[row.id]) == len(members) + 1
    (held,) = run_results(store.run(ids["idca"]), store, dp)
    stored = store.metrics(ids["idca"])["test"]
    assert held.kappa is None and held.metrics["test"]["constraint"] == stored["dp"]
    assert not any(name.startswith("constraint_") for name in held.metrics["test"])
    (point,) = frontier([held], metric="constraint").points
    assert point.constraint == stored["dp"] and point.state is None


@pytest.mark.slow
def test_all_runs_side_by_side_and_listed(runs, capsys):
    """Every solver's run in one table (the Runs page compares any runs it is given), and in
    the command line's list: one column per quantity, each run's value of it or nothing."""
    store, ids = runs
    table = comparison_table(store, list(ids.values()))
    check_table(store, table)
    quantities = [
        c.header
        for c in table.columns
        if c.quantity is not None and c.split == "test" and not c.interval
    ]
    assert {"test pSP", "test DP gap", "test group-AUC gap"} <= set(quantities)
    html = store_report(store, list(ids.values()), "every solver")
    assert not re.search(r"<td>[^<]*\b(None|nan)\b", html)

    assert main(["runs", "list", "--home", str(store.home)]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert not any(MISSING_WORDS.search(line) for line in lines)
    # the same quantities as the table, each a column of its own beside the test accuracy
    listed = [q for q in quantities if f"  {q}" in header]
    assert listed == quantities and header.count(" test ") == len(quantities) + 1
    for line in lines:
        run_id = line.split()[0]
        for column in listed:
            cell = line[: header.index(column) + len(column)].split()[-1]
            expected = expected_cell(store, run_id, column)
            assert cell == ("—" if expected is None else f"{expected:.4f}"), (run_id, column)


def test_the_badr_view_shows_the_references_dp_gap_under_dp_gap(runs):
    """Paper 002's badr_gd measures the DP gap; beside it the unconstrained reference's DP gap
    stands in the DP gap column, and its pSP in a column of its own."""
    store, ids = runs
    table = comparison_table(store, [ids["badr_gd"], ids["unconstrained"]])
    badr, reference = table.rows
    stored = store.metrics(ids["unconstrained"])["test"]
    assert reference["test DP gap"] == stored["dp"] and reference["test pSP"] == stored["psp"]
    assert badr["test DP gap"] == store.metrics(ids["badr_gd"])["test"]["dp"]
    assert stored["dp"] != stored["psp"]


def test_explores_compact_table_shows_train_values_only_of_a_held_quantity(runs):
    """Explore's table must fit a laptop: a quantity appears on train only where a run holds κ
    on it, and κ only where a run has one; the full table keeps both."""
    store, ids = runs
    unheld = [ids["badr_gd"], ids["unconstrained"]]
    compact = comparison_table(store, unheld, compact=True)
    headers = [c.header for c in compact.columns]
    assert "κ" not in headers and not any(h.startswith("train ") for h in headers)
    assert {"test DP gap", "test pSP"} <= set(headers)
    full = [c.header for c in comparison_table(store, unheld).columns]
    assert {"κ", "train DP gap", "train pSP"} <= set(full)

    held = comparison_table(store, [ids["idca"], ids["badr_gd"]], compact=True)
    headers = [c.header for c in held.columns]
    quantity = quantity_of(explore_view(store, ids["idca"])).name
    assert {"κ", f"train {quantity}", f"test {quantity}", "test DP gap"} <= set(headers)
    assert "train DP gap" not in headers
    check_table(store, held)
