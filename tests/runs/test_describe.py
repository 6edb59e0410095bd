"""A run spec in words: each fact once, and nothing that does not decide the run."""

from __future__ import annotations

import dataclasses

import pytest

from engine.data.acs import ACSSpec, SyntheticACSSpec
from engine.data.adult import AdultSpec
from engine.data.csv_source import CSVSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.fairness.constraint_spec import ConstraintSpec
from engine.models import ModelSpec
from engine.runs import RunSpec
from engine.runs.describe import describe_spec, run_label, split_settings, sweep_progress
from engine.runs.results import surrogate_epsilon
from engine.solvers import Budget
from engine.solvers.budget import BudgetClock

CSV = CSVSpec(path="/somewhere/private/toy.csv", label="y", protected=("g",))


def spec(**changes) -> RunSpec:
    base = RunSpec(
        data=CSV,
        prepare=PrepareOptions(grouping=(GroupingSpec("g"),), seed=3),
        model=ModelSpec(cross_terms=True),
        constraint=ConstraintSpec("pSP", 0.05, (0.05, 0.3)),
        interval=(0.05, 0.3),
        solver="idca",
        seed=3,
    )
    return dataclasses.replace(base, **changes)


def described(run: RunSpec) -> dict[str, str]:
    return dict(describe_spec(run))


def test_every_setting_is_a_sentence_without_missing_numbers():
    for run in (
        spec(),
        spec(model=ModelSpec(kind="mlp", hidden=(64, 32)), constraint=None, solver="unconstrained"),
    ):
        for name, value in describe_spec(run):
            assert isinstance(value, str) and value
            assert "None" not in value and "nan" not in value and "{" not in value, (name, value)


def test_a_linear_model_shows_no_hidden_layers_and_its_cross_terms_once():
    settings = describe_spec(spec())
    assert described(spec())["model"] == "linear with group cross-terms"
    text = " ".join(value for _, value in settings)
    assert "hidden" not in text and "64" not in text
    assert text.count("cross-terms") == 1
    assert described(spec(model=ModelSpec()))["model"] == "linear"


def test_an_mlp_shows_its_layers():
    run = spec(model=ModelSpec(kind="mlp", hidden=(64, 32)))
    assert described(run)["model"] == "MLP 64-32, ReLU"
    sigmoid = spec(model=ModelSpec(kind="mlp", hidden=(8,), activation="sigmoid"))
    assert described(sigmoid)["model"] == "MLP 8, sigmoid"


def test_the_constraint_names_the_familys_quantity_and_kappa():
    assert described(spec())["constraint"] == "pSP ≤ κ = 0.05 on I = each group's top 5 % to 30 %"
    eo = described(spec(constraint=ConstraintSpec("EO", 0.05)))["constraint"]
    assert eo == "EO gap ≤ κ = 0.05"  # no interval: EO is not defined on one
    free = spec(constraint=None, solver="unconstrained")
    assert described(free)["constraint"] == "none (unconstrained)"


def test_solver_options_only_where_they_differ_from_the_card():
    assert described(spec())["solver options"] == "defaults"
    assert described(spec(config={"epsilon": 0.005}))["solver options"] == "defaults"
    changed = described(spec(config={"outer_iterations": 50, "epsilon": 0.001}))
    assert changed["solver options"] == (
        "outer_iterations = 50 (default 200), epsilon = 0.001 (default 0.005)"
    )
    assert changed["solver"].startswith("idca: IDCA")


@pytest.mark.parametrize(
    ("budget", "words"),
    [
        (Budget(), "none: the solver runs until its own stopping rule"),
        (Budget(max_iterations=30_000), "at most 30,000 iterations"),
        (Budget(max_seconds=45), "at most 45 s of wall time"),
        (Budget(max_seconds=45, clock=BudgetClock.SOLVER), "at most 45 s of solver time"),
        (
            Budget(max_iterations=500, max_seconds=600),
            "at most 500 iterations or 10 min of wall time, whichever comes first",
        ),
        (Budget(max_seconds=9000), "at most 2.5 h of wall time"),
    ],
)
def test_budget_in_words(budget, words):
    assert described(spec(budget=budget))["budget"] == words


def test_data_sources_in_words():
    assert described(spec())["data"] == "CSV file toy.csv, label column “y”"  # no folders
    assert described(spec(data=AdultSpec()))["data"] == "UCI Adult (bundled)"
    acs = described(spec(data=ACSSpec(states=("CT", "NY"), year=2018, task="income")))["data"]
    assert acs == "ACS census survey, CT, NY 2018 (1-Year), task “income”"
    synthetic = described(spec(data=SyntheticACSSpec(n_persons=5000)))["data"]
    assert "synthetic" in synthetic and "5,000 persons" in synthetic and "CT 2018" in synthetic


def test_groups_and_split_in_words():
    assert described(spec())["protected groups"] == (
        "g (bins for numbers, every value a group otherwise); groups under 50 rows merged into "
        "“other”"
    )
    grouping = (GroupingSpec("SEX", "all"), GroupingSpec("RAC1P", "binary"))
    prepare = PrepareOptions(grouping=grouping, min_group_size=100, small_groups="refuse")
    assert described(spec(prepare=prepare))["protected groups"] == (
        "SEX (every value a group) × RAC1P (the most frequent value against all others), "
        "intersected; groups under 100 rows refused"
    )
    assert described(spec())["split"] == "60 % train, 20 % validation, 20 % test; seed 3"
    adult = described(spec(data=AdultSpec()))["split"]
    assert adult == (
        "75 % train, 25 % validation of adult.data; test: the published adult.test; seed 3"
    )


def test_dropped_protected_columns_are_said():
    prepare = PrepareOptions(grouping=(GroupingSpec("g"),), drop_protected=True)
    assert "not used as a feature" in described(spec(prepare=prepare))["features"]
    assert "features" not in described(spec())


def test_split_settings_says_shared_settings_once():
    runs = [
        spec(),
        spec(solver="ssg", config={"epsilon": 0.01}),
        spec(constraint=None, solver="unconstrained"),
    ]
    shared, own = split_settings([describe_spec(r) for r in runs])
    names = [name for name, _ in shared]
    assert names == ["data", "protected groups", "split", "model", "objective", "budget"]
    assert [[name for name, _ in settings] for settings in own] == [
        ["constraint", "solver", "solver options"]
    ] * 3
    assert dict(own[1])["solver options"] == "epsilon = 0.01 (default 0.001)"
    assert split_settings([]) == ([], [])


def test_run_label_and_surrogate_epsilon():
    assert run_label(spec()) == "idca (κ = 0.05)"
    assert run_label(spec(constraint=None, solver="unconstrained")) == "unconstrained"
    assert surrogate_epsilon(spec()) == 0.005  # the card's default
    assert surrogate_epsilon(spec(config={"epsilon": 0.004})) == 0.004
    assert surrogate_epsilon(spec(constraint=None, solver="unconstrained")) is None


def test_a_classic_data_set_is_named_with_its_label():
    from engine.data.classic import ClassicSpec

    assert described(spec(data=ClassicSpec("law", "zfya")))["data"].startswith(
        "Law school (LSAC), label “zfya”"
    )
    assert "COMPAS (ProPublica)" in described(spec(data=ClassicSpec("compas")))["data"]


def test_a_sweeps_progress_waits_for_no_deleted_run_and_names_runs_without_a_model():
    ids = ["a", "b", "c", "d"]
    running = sweep_progress({"a": "converged", "b": "running", "c": "failed", "d": "queued"}, ids)
    assert running.share == 0.5
    assert running.text == "2 of 4 runs finished; 1 without a model"
    deleted = sweep_progress({"a": "converged", "b": "budget", "c": "converged"}, ids)
    assert deleted.share == 1.0 and deleted.text.startswith("3 of 3 runs finished; 1 of the ")
    assert "no longer stored (deleted): Run sweep computes them again" in deleted.text
    assert sweep_progress({}, ids).share == 1.0
