"""Narasimhan et al.'s Lagrange-multiplier model (paper 001's intersectional baseline) on the
intersectional hinge over overlapping subgroups; a surrogate record's bounded rows; subgroups in
run specs and on the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from subgroup_data import subgroup_prepared

from engine.cli import main
from engine.data.classic import find_file
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.runs.spec import RunSpec
from engine.solvers import Budget, solve
from engine.solvers.driver import RECORD_SHARE, RECORDED_ROWS
from engine.solvers.paper001.cards_multiplier import MultiplierModelConfig
from engine.solvers.paper001.multiplier_model import MultiplierModel

KAPPA = 0.02


@pytest.fixture(scope="module")
def problem() -> Problem:
    return Problem(subgroup_prepared(), ModelSpec(), ConstraintSpec("intersectional_hinge", KAPPA))


def test_the_multipliers_come_from_the_model_of_the_rows_features(problem):
    solver = MultiplierModel(problem, MultiplierModelConfig(), np.random.default_rng(0))
    lam = solver.multipliers()
    assert lam.shape == (problem.bound.m,) and np.all(lam > 0)  # softplus: λ ≥ 0
    assert problem.bound.row_features().shape == (problem.bound.m, 2)  # each subgroup's levels
    # rows with close thresholds get close multipliers: the model shares across constraints
    assert np.ptp(lam) > 0


def test_psi_ascends_on_violated_rows_and_theta_moves(problem):
    solver = MultiplierModel(
        problem,
        MultiplierModelConfig(eta_psi=0.1, constraint_batch=10**3),
        np.random.default_rng(0),
    )
    rows = problem.batch_rows()
    before_lam = solver.multipliers()
    before_x = solver.x.copy()
    values = rows.values(problem.scores(solver.current()))
    solver.iterate()
    after_lam = solver.multipliers()
    # with every row sampled, ψ's step increases Σ_j λ_j g_j to first order
    assert np.dot(after_lam - before_lam, values) > 0
    assert not np.array_equal(
        before_x[solver.oracles.layout["weights"]], solver.x[solver.oracles.layout["weights"]]
    )


def test_it_lowers_the_worst_subgroup_excess_below_the_unconstrained_one(problem):
    budget = Budget(max_iterations=1500)
    plain = solve(problem, "sgd", budget=budget, seed=0)
    fair = solve(
        problem,
        "multiplier_model",
        budget=budget,
        seed=0,
        config=MultiplierModelConfig(eta_theta=0.05, eta_psi=0.05),
    )
    unconstrained = problem.bound.exact(problem.scores(plain.params))
    constrained = problem.bound.exact(problem.scores(fair.params))
    assert constrained < unconstrained - 0.01
    assert fair.metrics["train"]["accuracy"] > 0.6


def test_same_seed_same_run(problem):
    runs = [
        solve(problem, "multiplier_model", budget=Budget(max_iterations=60), seed=3)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].params["w"], runs[1].params["w"])


def last_surrogate(solution):
    """The last surrogate record: at the reported (last) iterate, where the run ended."""
    record = [r for r in solution.trajectory if r.kind == "surrogate"][-1]
    assert record.iteration == solution.iterations
    return record


def test_a_surrogate_record_keeps_the_largest_rows_and_their_state(monkeypatch, problem):
    assert problem.bound.m <= RECORDED_ROWS  # all rows, as for every family's usual sizes
    solution = solve(problem, "multiplier_model", budget=Budget(max_iterations=30), seed=0)
    record = last_surrogate(solution)
    assert len(record.values) == problem.bound.m
    monkeypatch.setattr("engine.solvers.driver.RECORDED_ROWS", 3)
    solution = solve(problem, "multiplier_model", budget=Budget(max_iterations=30), seed=0)
    record = last_surrogate(solution)
    rows = problem.batch_rows().values(problem.scores(solution.params))
    largest = {problem.bound.rows[r] for r in np.argsort(-rows)[:3]}
    assert set(record.values) == largest
    assert record.max_violation == pytest.approx(rows.max())
    duals = {k.removeprefix("dual.") for k in record.state if k.startswith("dual.")}
    assert duals == largest and "batch_loss" in record.state


def test_bad_options_are_refused():
    for bad in ({"eta_psi": 0.0}, {"multiplier_layers": 0}, {"constraint_batch": 0}):
        with pytest.raises(UserError):
            MultiplierModelConfig(**bad)


def test_subgroups_round_trip_in_a_run_spec_and_leave_other_run_ids_alone():
    from engine.data.adult import AdultSpec
    from engine.data.grouping import GroupingSpec
    from engine.data.prepare import PrepareOptions
    from engine.data.subgroups import SubgroupSpec

    plain = RunSpec(
        data=AdultSpec(),
        prepare=PrepareOptions(grouping=(GroupingSpec("sex"),)),
        model=ModelSpec(),
        constraint=ConstraintSpec("intersectional_hinge", 0.05),
        interval=(0.0, 1.0),
        solver="multiplier_model",
    )
    assert "subgroups" not in plain.to_dict()["prepare"]
    cut = SubgroupSpec(("age", "hours-per-week"), 5, 0.02)
    with_subgroups = RunSpec(
        **{
            **plain.__dict__,
            "prepare": PrepareOptions(grouping=(GroupingSpec("sex"),), subgroups=cut),
        }
    )
    again = RunSpec.from_dict(json.loads(json.dumps(with_subgroups.to_dict())))
    assert again.prepare.subgroups == cut
    assert again.run_id == with_subgroups.run_id != plain.run_id


def test_communities_and_crime_subgroups_on_the_command_line(tmp_path, capsys):
    try:
        find_file("crime")
    except UserError as missing:
        pytest.skip(str(missing))
    out = tmp_path / "run.json"
    code = main(
        [
            "run",
            "--data",
            "crime",
            "--subgroups",
            "racepctblack",
            "racePctHisp",
            "racePctAsian",
            "--constraint",
            "intersectional_hinge",
            "--kappa",
            "0.05",
            "--solver",
            "multiplier_model",
            "--model",
            "mlp",
            "--hidden",
            "8",
            "--iterations",
            "40",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    document = json.loads(out.read_text())
    rows = [r for r in document["result"]["trajectory"] if r["kind"] == "surrogate"]
    assert len(rows[-1]["values"]) == RECORDED_ROWS  # of hundreds of subgroup rows
    assert rows[-1]["max_violation"] == max(rows[-1]["values"].values())
    assert document["result"]["metrics"]["test"]["constraint"] is not None
    assert (
        main(
            [
                "run",
                "--data",
                "crime",
                "--subgroups",
                "racePctMars",
                "--constraint",
                "intersectional_hinge",
                "--solver",
                "multiplier_model",
                "--iterations",
                "5",
                "--quiet",
            ]
        )
        == 2
    )
    assert "column 'racePctMars' is not" in capsys.readouterr().err


def test_exact_records_hold_each_row_with_the_indicator_in_place_of_the_surrogate(
    data, monkeypatch
):
    """Spec 001 §5: log both the surrogate rows and the true indicator gap of each row."""
    monkeypatch.setattr("engine.solvers.driver.EXACT_EVERY_SECONDS", 0.0)
    monkeypatch.setitem(RECORD_SHARE, "exact", 0.0)
    problem = Problem(data, ModelSpec(), ConstraintSpec("DP", KAPPA, surrogate="sigmoid"))
    solution = solve(problem, "plada", budget=Budget(max_iterations=200), seed=0)
    exact = [r for r in solution.trajectory if r.kind == "exact"][-1]
    assert exact.iteration == solution.iterations  # at the reported (last) iterate
    h = problem.scores(solution.params)
    groups = data.train.groups
    rates = [np.mean(h[groups == g] > 0) for g in range(2)]
    upper, lower = (f"train.row.{row}" for row in problem.bound.rows)
    assert exact.values[upper] == pytest.approx(rates[0] - rates[1] - KAPPA)
    assert exact.values[lower] == pytest.approx(rates[1] - rates[0] - KAPPA)
    surrogate = last_surrogate(solution)
    assert surrogate.values[problem.bound.rows[0]] != pytest.approx(exact.values[upper])


def test_a_solver_without_auxiliary_variables_gets_exact_rows_at_the_familys_start(
    data, monkeypatch
):
    """The unconstrained solver keeps no pSP θ: its exact rows use the family's starting θ."""
    monkeypatch.setattr("engine.solvers.driver.EXACT_EVERY_SECONDS", 0.0)
    monkeypatch.setitem(RECORD_SHARE, "exact", 0.0)
    problem = Problem(
        data, ModelSpec(), ConstraintSpec("pSP", 0.1, (0.05, 0.3)), interval=(0.05, 0.3)
    )
    solution = solve(problem, "unconstrained", budget=Budget(max_iterations=20), seed=0)
    exact = [r for r in solution.trajectory if r.kind == "exact"][-1]
    rows = {k for k in exact.values if k.startswith("train.row.")}
    assert rows == {f"train.row.{row}" for row in problem.bound.rows}
