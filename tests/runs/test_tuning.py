"""Tuning by a paper's protocol: the grid's trials are runs of the store, and the rule picks
the trial a hand computation picks, on validation."""

from __future__ import annotations

import dataclasses

import pytest
from run_fixtures import make_spec

from engine.errors import UserError
from engine.runs.tuning import trial_specs, tuned_run, tuning_plan
from engine.runs.worker import execute_run
from engine.solvers.catalogue import solver_card, solver_names
from engine.solvers.tuning import Score, Trial, TuningPlan, pick, trial_outcome
from engine.status import StopCode, StopReason

PLAN = TuningPlan({"a": (1, 2), "b": (0.1, 0.2, 0.3)}, Score.ACCURACY, "a paper")


def test_a_grid_lists_every_setting_in_the_papers_order():
    assert PLAN.settings() == [
        {"a": 1, "b": 0.1},
        {"a": 1, "b": 0.2},
        {"a": 1, "b": 0.3},
        {"a": 2, "b": 0.1},
        {"a": 2, "b": 0.2},
        {"a": 2, "b": 0.3},
    ]
    with pytest.raises(UserError, match="does not have"):
        PLAN.check({"a": 1})


def test_every_declared_plan_names_options_its_solver_has():
    planned = [name for name in solver_names() if solver_card(name).tuning is not None]
    assert {"idca", "ssg", "ssl_alm", "alm", "ssw"} <= set(planned)
    for name in planned:
        card = solver_card(name)
        card.tuning.check({f.name: f.default for f in dataclasses.fields(card.Config)})
        for setting in card.tuning.settings():  # every setting is a valid configuration
            card.Config(**{**card.tuning.fixed, **setting})


def trials(outcomes, kappa=0.05, plan=PLAN):
    """Trials of the plan's settings from (status, accuracy, constraint) in the grid's order."""
    return [
        trial_outcome(plan, setting, status, {"accuracy": score, "constraint": value}, kappa)
        for setting, (status, score, value) in zip(plan.settings(), outcomes, strict=True)
    ]


def hand_pick(outcomes, kappa):
    """The rule written out: the best accuracy of the finished trials within κ, the first on a
    tie; if none is within κ, the smallest value."""
    finished = [(i, s, v) for i, (st, s, v) in enumerate(outcomes) if st in ("converged", "budget")]
    within = [(i, s) for i, s, v in finished if v <= kappa]
    if within:
        best = max(s for _, s in within)
        return next(i for i, s in within if s == best), True
    return min(finished, key=lambda t: (t[2], t[0]))[0], False


@pytest.mark.parametrize(
    "outcomes",
    [
        [
            ("converged", 0.80, 0.04),
            ("budget", 0.83, 0.06),
            ("converged", 0.82, 0.05),
            ("converged", 0.82, 0.01),
            ("failed", 0.99, 0.0),
            ("budget", 0.79, 0.02),
        ],
        [
            ("converged", 0.80, 0.09),
            ("budget", 0.83, 0.06),
            ("diverged", 0.85, 0.01),
            ("converged", 0.82, 0.07),
            ("converged", 0.81, 0.06),
            ("budget", 0.79, 0.12),
        ],
    ],
    ids=["some within κ", "none within κ"],
)
def test_the_rule_picks_what_a_hand_computation_picks(outcomes):
    choice = pick(PLAN, trials(outcomes), constrained=True)
    chosen, meets = hand_pick(outcomes, 0.05)
    assert (choice.chosen, choice.meets) == (chosen, meets)
    assert ("nearest to κ" in choice.words()) == (not meets)


def test_a_loss_is_lowest_best_and_without_a_constraint_every_trial_counts():
    plan = TuningPlan({"a": (1, 2, 3)}, Score.LOSS, "paper 000")
    made = [
        trial_outcome(plan, {"a": a}, "budget", {"loss": loss, "constraint": value}, None)
        for a, loss, value in ((1, 0.5, 0.3), (2, 0.4, 0.9), (3, 0.45, 0.0))
    ]
    assert pick(plan, made, constrained=False).chosen == 1
    by_auc = TuningPlan({"a": (1, 2, 3)}, Score.AUC, "paper 004")
    ranked = [
        trial_outcome(by_auc, {"a": a}, "converged", {"auc": auc, "constraint": value}, 0.1)
        for a, auc, value in ((1, 0.9, 0.05), (2, 0.95, 0.2), (3, 0.92, 0.1))
    ]
    assert pick(by_auc, ranked, constrained=True).chosen == 2  # the best AUC within κ
    assert pick(plan, [Trial({"a": 1}, "failed", None, None, None)], True).chosen is None


def test_trials_are_runs_of_the_store_and_the_choice_is_made_from_their_validation_metrics(
    store, csv_spec
):
    spec = make_spec(csv_spec, solver="ssg", kappa=0.2, iterations=30)
    specs = trial_specs(spec)
    plan = tuning_plan(spec)
    assert [s.config for s in specs] == plan.settings()  # ssg's trials hold nothing fixed
    assert {s.honour for s in specs} == {spec.honour}  # so each is a run it could report
    assert len({s.run_id for s in specs}) == len(specs) == len(plan.settings())
    assert [s.run_id for s in trial_specs(spec)] == [s.run_id for s in specs]  # reproducible
    assert tuned_run(store, spec) is None  # nothing queued yet
    for trial in specs:
        store.enqueue(trial.run_id, trial.to_dict())
    assert tuned_run(store, spec) is None  # queued, not run
    for trial in specs:
        assert execute_run(str(store.home), trial.run_id) in ("converged", "budget")
    tuned = tuned_run(store, spec)
    expected = pick(
        plan,
        [
            trial_outcome(
                plan, setting, store.run(s.run_id).status, store.metrics(s.run_id)["val"], 0.2
            )
            for setting, s in zip(plan.settings(), specs, strict=True)
        ],
        constrained=True,
    )
    assert tuned.choice.chosen == expected.chosen and tuned.choice.chosen is not None
    # without fixed options the run to report is the chosen trial itself
    assert tuned.final.run_id == specs[tuned.choice.chosen].run_id


def test_an_interrupted_trial_is_queued_again_and_the_choice_waits_for_it(store, csv_spec):
    spec = make_spec(csv_spec, solver="ssg", kappa=0.2, iterations=30)
    specs = trial_specs(spec)
    for trial in specs:
        store.enqueue(trial.run_id, trial.to_dict())
    for trial in specs[1:]:
        execute_run(str(store.home), trial.run_id)
    store.claim(specs[0].run_id, pid=1)
    store.finish(
        specs[0].run_id,
        StopReason(StopCode.INTERRUPTED, "its process ended"),
        iterations=0,
        seconds=0.0,
        metrics={},
    )
    tuned = tuned_run(store, spec)
    assert tuned.choice.trials[0].score is None  # an interrupted trial has no model to choose
    store.enqueue(specs[0].run_id, specs[0].to_dict(), force=True)  # what a re-run does
    assert tuned_run(store, spec) is None
    execute_run(str(store.home), specs[0].run_id)
    assert tuned_run(store, spec).choice.trials[0].score is not None


def test_a_plan_with_shorter_trials_reports_the_chosen_setting_at_full_length(store, csv_spec):
    spec = dataclasses.replace(
        make_spec(csv_spec, solver="idca", kappa=0.2, config={"patience": 0}), honour="train"
    )
    plan = tuning_plan(spec)
    assert plan.fixed == {"outer_iterations": 50}
    specs = trial_specs(spec)
    assert all(s.config["outer_iterations"] == 50 and s.config["patience"] == 0 for s in specs)
    assert all(s.honour is None for s in specs)  # the paper's trials solve at κ alone
    for trial in specs:
        store.enqueue(trial.run_id, trial.to_dict())
        store.claim(trial.run_id, pid=1)
        val = {"accuracy": 0.8 + 0.01 * len(store.runs()), "constraint": 0.1}
        store.finish(
            trial.run_id,
            StopReason(StopCode.CONVERGED, "done"),
            iterations=50,
            seconds=1.0,
            metrics={"val": val},
        )
    tuned = tuned_run(store, spec)
    assert tuned.choice.chosen == len(specs) - 1  # the highest validation accuracy
    assert tuned.final.config == {"patience": 0, **plan.settings()[-1]}
    assert "outer_iterations" not in tuned.final.config
    assert tuned.final.honour == "train"  # the final run holds κ as asked


def test_a_solver_without_a_plan_or_a_constraint_is_refused_with_why(csv_spec):
    with pytest.raises(UserError, match="declares no tuning"):
        tuning_plan(make_spec(csv_spec, solver="unconstrained"))
    no_constraint = dataclasses.replace(make_spec(csv_spec, solver="ssg"), constraint=None)
    with pytest.raises(UserError, match="give a constraint"):
        tuning_plan(no_constraint)


def test_a_trial_that_ran_its_own_iterations_says_so_in_the_trial_table(store, csv_spec):
    """A trial ended by the plan's fixed K (IDCA's 50 outer iterations) ran its paper's
    algorithm in full: the table says "all iterations", where a trial the time budget cut
    short says "budget" (both are runs with a model whose status is "budget")."""
    spec = make_spec(csv_spec, solver="idca", kappa=0.2)
    specs = trial_specs(spec)
    for index, trial in enumerate(specs):
        store.enqueue(trial.run_id, trial.to_dict())
        store.claim(trial.run_id, pid=1)
        code = StopCode.TIME_BUDGET if index == 0 else StopCode.ITERATION_CAP
        store.finish(
            trial.run_id,
            StopReason(code, "ended"),
            iterations=50,
            seconds=1.0,
            metrics={"val": {"accuracy": 0.8, "constraint": 0.1}},
        )
    choice = tuned_run(store, spec).choice
    assert {t.status for t in choice.trials} == {"budget"}
    ended = [row["status"] for row in choice.rows()]
    assert ended == ["budget"] + ["all iterations"] * (len(specs) - 1)
