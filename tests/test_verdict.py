"""The verdict on a run: meets or misses κ, surrogate-only feasibility, degenerate models, and
how the run ended."""

from __future__ import annotations

import numpy as np
import pytest

from engine.status import RunStatus
from engine.verdict import Label, Level, judge


def split(constraint=0.04, accuracy=0.83, majority=0.76, auc=0.88, std=1.3, positive=0.2):
    return {
        "constraint": constraint,
        "accuracy": accuracy,
        "majority": majority,
        "auc": auc,
        "score_std": std,
        "positive_rate": positive,
    }


def metrics(train=None, val=None, test=None):
    return {
        name: values
        for name, values in (("train", train), ("val", val), ("test", test))
        if values is not None
    }


def test_a_run_within_kappa_on_every_split_meets_it():
    verdict = judge("converged", metrics(split(0.03), split(0.04), split(0.045)), "pSP", 0.05)
    assert verdict.label is Label.MEETS and verdict.level is Level.OK
    assert all(check.meets for check in verdict.splits.values())
    assert "Meets κ on the test set" in verdict.headline and "0.0450" in verdict.headline
    assert verdict.check("test").cell() == "0.0450 ≤ 0.05 ✓"


def test_a_miss_says_by_how_much_on_the_reported_split():
    verdict = judge("converged", metrics(split(0.073), split(0.084), split(0.069)), "pSP", 0.05)
    assert verdict.label is Label.MISSES and verdict.level is Level.WARNING
    assert verdict.check("test").excess == pytest.approx(0.019)
    assert "by 0.0190" in verdict.headline
    assert verdict.check("train").cell() == "0.0730 > 0.05 ✗ (+0.0230)"
    assert "Misses κ on the training data: pSP = 0.0730 > κ = 0.05." in verdict.findings


def test_surrogate_feasible_but_exact_infeasible_is_named_and_explained():
    verdict = judge(
        "converged",
        metrics(split(0.073), test=split(0.069)),
        "pSP",
        0.05,
        surrogate_violation=0.0009,
        tolerance=0.001,
    )
    assert verdict.label is Label.MISSES  # the test set misses κ: that comes first
    text = " ".join(verdict.findings)
    assert "+0.0009 ≤ ε = 0.001" in text and "approximates" in text
    assert "holding κ on the training data refines it" in text
    within = judge(
        "converged",
        metrics(split(0.073), test=split(0.049)),
        "pSP",
        0.05,
        surrogate_violation=0.0009,
        tolerance=0.001,
    )
    assert within.label is Label.SURROGATE_ONLY


def test_a_test_set_within_kappa_does_not_outweigh_a_training_value_above_it():
    verdict = judge(
        "converged",
        metrics(split(0.0727), test=split(0.0383)),
        "pSP",
        0.05,
        surrogate_violation=0.0009,
        tolerance=0.001,
    )
    assert verdict.label is Label.SURROGATE_ONLY and verdict.level is Level.WARNING
    assert verdict.headline.startswith("Surrogate feasible but exact infeasible")
    assert "Meets κ on the test set: pSP = 0.0383" in verdict.findings[1]
    # read at a glance: the training verdict and what the test set says of κ, both short
    assert verdict.at_a_glance == verdict.findings[:2]
    assert all(len(text.split()) <= 22 for text in verdict.at_a_glance)


def test_a_surrogate_above_its_tolerance_is_a_plain_miss():
    verdict = judge(
        "converged",
        metrics(split(0.073), test=split(0.069)),
        "pSP",
        0.05,
        surrogate_violation=0.01,
        tolerance=0.001,
    )
    assert verdict.label is Label.MISSES


def test_meeting_kappa_on_train_but_not_on_test_says_both():
    verdict = judge("converged", metrics(split(0.04), test=split(0.06)), "EO gap", 0.05)
    assert verdict.label is Label.MISSES
    assert "Holds κ on the training data: EO gap = 0.0400 ≤ κ." in verdict.findings


@pytest.mark.parametrize(
    ("test_values", "words"),
    [
        (
            split(accuracy=0.764, majority=0.764, positive=0.0),
            "not above always predicting the majority class (0.7640) (it predicts everyone negative)",
        ),
        (split(accuracy=0.70, majority=0.76, positive=0.4), "accuracy 0.7000 is not above"),
        (split(auc=0.215, accuracy=0.80, majority=0.76), "AUC 0.2150 ≤ 0.5"),
        (split(std=0.0), "every sample gets the same score"),
    ],
)
def test_degenerate_models_are_flagged_whatever_their_fairness(test_values, words):
    verdict = judge("converged", metrics(split(), test=test_values), "AUC gap", 0.05)
    assert verdict.label is Label.DEGENERATE and verdict.level is Level.ERROR
    assert words in verdict.headline


def test_a_budget_end_adds_not_converged_and_a_divergence_is_an_error():
    budget = judge("budget", metrics(test=split(0.03)), "pSP", 0.05, reason="time budget of 6 s")
    assert budget.label is Label.MEETS and budget.flags == (Label.NOT_CONVERGED,)
    assert budget.level is Level.WARNING and budget.summary == "meets κ · not converged"
    assert "Not converged (time budget of 6 s)" in budget.findings[-1]
    diverged = judge("diverged", metrics(test=split(0.03)), "pSP", 0.05)
    assert diverged.flags == (Label.DIVERGED,) and diverged.level is Level.ERROR
    degenerate = judge("budget", metrics(test=split(std=0.0)), "pSP", 0.05)
    assert degenerate.label is Label.DEGENERATE and degenerate.flags == (Label.NOT_CONVERGED,)


@pytest.mark.parametrize("status", ["failed", "cancelled", "interrupted", "queued", "running"])
def test_runs_without_a_model_say_how_they_stand(status):
    verdict = judge(status, {}, "pSP", 0.05, reason="the worker process died")
    assert verdict.label == status
    assert verdict.splits == {}


def test_a_run_without_constraint_reports_the_quantity_and_no_kappa():
    verdict = judge(RunStatus.CONVERGED, metrics(test=split(0.3)), "pSP", None)
    assert verdict.label is Label.UNCONSTRAINED and verdict.level is Level.INFO
    assert verdict.check("test").meets is None and verdict.check("test").cell() == "0.3000"


def test_a_missing_constrained_value_cannot_be_said_to_meet_kappa():
    verdict = judge("converged", metrics(test=split(None)), "EO gap", 0.05)
    assert verdict.label is Label.MISSES and "could not be computed" in verdict.headline


def test_the_verdict_of_a_real_all_negative_model_is_degenerate(tiny_problem):
    """On metrics computed by Problem.report: a model that scores everyone below the threshold
    predicts the majority (negative) class and is degenerate."""
    problem = tiny_problem
    dim = problem.design().shape[1]
    all_negative = {"w": np.r_[-5.0, np.zeros(dim - 1)]}
    report = problem.report(all_negative)
    verdict = judge("converged", report, "pSP", 0.05)
    assert report["test"]["positive_rate"] == 0.0
    assert verdict.label is Label.DEGENERATE


@pytest.fixture
def tiny_problem():
    import pandas as pd

    from engine.data.dataset import Dataset
    from engine.data.grouping import GroupingSpec
    from engine.data.prepare import PrepareOptions, prepare
    from engine.fairness.constraint_spec import ConstraintSpec
    from engine.models import ModelSpec
    from engine.problem import Problem

    rng = np.random.default_rng(0)
    group = rng.integers(0, 2, 600)
    x = rng.normal(size=600) + 0.8 * group
    label = (x + rng.normal(scale=0.8, size=600) > 0.4).astype(np.int8)
    frame = pd.DataFrame({"x": x, "g": np.array(["a", "b"])[group]})
    dataset = Dataset(
        name="toy",
        frame=frame,
        label=label,
        numeric=("x",),
        categorical=(),
        protected=("g",),
        label_name="y",
    )
    prepared = prepare(dataset, PrepareOptions(grouping=(GroupingSpec("g"),)))
    return Problem(
        prepared, ModelSpec(), ConstraintSpec("pSP", 0.05, (0.1, 0.5)), interval=(0.1, 0.5)
    )


@pytest.mark.parametrize(
    "family", ["pSP", "pDP", "DP", "EO", "EOpp", "quad_group_auc", "group_loss_gap"]
)
def test_a_reference_metric_equals_the_family_constrained_value(tiny_problem, family):
    """A run without constraint is set beside a family's runs through REPORTED_AS: that metric
    must be exactly the value the family's own runs report as "constraint"."""
    import dataclasses

    from engine.fairness.constraint_spec import ConstraintSpec
    from engine.fairness.families import REPORTED_AS

    constraint = ConstraintSpec(family, 0.3, (0.1, 0.5))
    problem = dataclasses.replace(tiny_problem, constraint=constraint)
    w = np.random.default_rng(1).normal(size=problem.design().shape[1])
    for split, values in problem.report({"w": w}).items():
        assert values["constraint"] == pytest.approx(values[REPORTED_AS[family]]), split


@pytest.mark.parametrize(
    "variant", ["group", "inter", "intra", "average_positive", "average_negative", "bpsn"]
)
def test_every_auc_gap_variant_is_reported_as_its_constrained_value(tiny_problem, variant):
    """Every run reports each AUC-gap variant (paper 004, App. A) under AUC_GAP_REPORTED_AS, so
    a run without constraint sits beside runs of any variant: the same value as "constraint"."""
    import dataclasses

    from engine.fairness.constraint_spec import ConstraintSpec
    from engine.fairness.families import AUC_GAP_REPORTED_AS

    constraint = ConstraintSpec("auc_gap", 0.05, options=(("variant", variant),))
    problem = dataclasses.replace(tiny_problem, constraint=constraint)
    w = np.random.default_rng(2).normal(size=problem.design().shape[1])
    for split, values in problem.report({"w": w}).items():
        assert values["constraint"] == pytest.approx(values[AUC_GAP_REPORTED_AS[variant]]), split


def regression(r2: float, std: float = 0.4) -> dict[str, float]:
    """A regression's exact metrics (`Problem.report`): no accuracy, no AUC."""
    return {
        "loss": 0.2,
        "rmse": 0.6,
        "r2": r2,
        "mae": 0.5,
        "mean_gap": 0.1,
        "baseline_rmse": 0.7,
        "score_std": std,
    }


@pytest.mark.parametrize("r2", [0.0, -0.35])
def test_a_regression_no_better_than_the_mean_label_is_degenerate(r2):
    verdict = judge("converged", metrics(regression(0.4), test=regression(r2)), "mean gap", None)
    assert verdict.label is Label.DEGENERATE and verdict.level is Level.ERROR
    assert verdict.headline == (
        f"Degenerate on the test set: R² {r2:.4f} ≤ 0: its predictions "
        "are no better than predicting the mean label."
    )


def test_a_regression_better_than_the_mean_label_reports_its_mean_gap():
    values = regression(0.35)
    verdict = judge("converged", metrics(test=values), "mean gap", None, value_metric="mean_gap")
    assert verdict.label is Label.UNCONSTRAINED
    assert verdict.headline == "No fairness constraint; mean gap on the test set is 0.1000."


# ---- held-out values with their intervals ---------------------------------------------------


def held_out(value, low, high, resolves=0.085, rows=2700, **others):
    """A held-out split's metrics with the constrained value's interval and resolution."""
    return split(value, **others) | {
        "constraint_low": low,
        "constraint_high": high,
        "constraint_resolves": resolves,
        "constraint_rows": rows,
    }


@pytest.mark.parametrize(
    ("low", "high", "label", "state"),
    [
        (0.012, 0.047, Label.MEETS, "meets κ"),
        (0.061, 0.097, Label.MISSES, "misses κ"),
        (0.0, 0.085, Label.CANNOT_TELL, "cannot tell"),
    ],
)
def test_a_held_out_value_is_judged_by_its_interval_in_three_states(low, high, label, state):
    verdict = judge(
        "converged", metrics(split(0.045), test=held_out(0.038, low, high)), "pSP", 0.05
    )
    assert verdict.label is label
    test = verdict.check("test")
    assert str(test.state) == state and test.meets == {"meets κ": True, "misses κ": False}.get(
        state
    )
    assert f"95 % interval {low:.3f}–{high:.3f}" in verdict.headline
    assert test.cell().startswith(f"0.0380 [{low:.3f}, {high:.3f}]")
    assert "Holds κ on the training data: pSP = 0.0450 ≤ κ." in verdict.findings


def test_cannot_tell_says_what_the_split_resolves_and_the_rows_that_would_resolve_kappa():
    verdict = judge(
        "converged", metrics(split(0.045), test=held_out(0.038, 0.0, 0.085)), "pSP", 0.05
    )
    needed = int(np.ceil(2700 * (0.085 / 0.05) ** 2))  # the width shrinks as 1/√n
    assert verdict.check("test").rows_for(0.05) == needed
    assert verdict.headline.startswith("Cannot tell at this size: on the test set pSP = 0.0380")
    assert len(verdict.headline.split()) <= 22  # a glance; what would resolve κ comes next
    detail = verdict.findings[1]
    assert detail.startswith("The test set resolves pSP down to about 0.085")
    assert f"about {int(float(f'{needed:.2g}')):,} rows per group would resolve κ = 0.05" in detail
    assert verdict.check("test").cell() == "0.0380 [0.000, 0.085] ? 0.05"
    assert verdict.to_dict()["splits"]["test"]["rows_for_kappa"] == needed


def test_a_training_value_above_kappa_outweighs_a_held_out_split_that_cannot_tell():
    verdict = judge(
        "converged",
        metrics(split(0.0727), test=held_out(0.038, 0.0, 0.085)),
        "pSP",
        0.05,
        surrogate_violation=0.0009,
        tolerance=0.001,
    )
    assert verdict.label is Label.SURROGATE_ONLY
    assert any(f.startswith("Cannot tell at this size") for f in verdict.findings[1:])
    plain_miss = judge(
        "converged", metrics(split(0.0727), test=held_out(0.038, 0.0, 0.085)), "pSP", 0.05
    )
    assert plain_miss.label is Label.MISSES and "training data" in plain_miss.headline


def test_an_accuracy_the_split_cannot_tell_from_the_majority_rate_is_flagged():
    values = held_out(0.02, 0.0, 0.04, accuracy=0.768, majority=0.764) | {
        "accuracy_low": 0.759,
        "accuracy_high": 0.777,
    }
    verdict = judge("converged", metrics(split(0.02), test=values), "pSP", 0.05)
    assert verdict.label is Label.MEETS and verdict.flags == (Label.NEAR_MAJORITY,)
    assert verdict.level is Level.WARNING
    assert (
        "cannot be told from always predicting the majority class (0.7640)"
        in (verdict.findings[-1])
    )
    clear = values | {"accuracy_low": 0.766}
    assert judge("converged", metrics(split(0.02), test=clear), "pSP", 0.05).flags == ()


def test_a_model_perfect_on_held_out_data_is_flagged_as_a_likely_leak():
    perfect = split(0.02, accuracy=1.0, auc=1.0)
    verdict = judge("converged", metrics(split(0.02), split(0.02), perfect), "pSP", None)
    assert verdict.label is Label.UNCONSTRAINED and verdict.flags == (Label.LIKELY_LEAK,)
    assert verdict.level is Level.WARNING and verdict.summary == "no constraint · likely leak"
    assert verdict.findings[-1].startswith(
        "Likely leak: on the test set accuracy 1.000 and AUC 1.000 (≥ 0.995)."
    )
    assert verdict.to_dict()["flags"] == ["likely leak"]


@pytest.mark.parametrize(
    ("test_values", "val_values", "flagged"),
    [
        (split(accuracy=0.996, auc=0.97), split(), True),  # accuracy alone
        (split(accuracy=0.97, auc=0.995), split(), True),  # AUC alone
        (split(), split(auc=0.999), True),  # the validation set shows it
        (split(accuracy=0.9975, majority=0.996, auc=0.9), split(), False),  # a rare outcome
        (split(accuracy=0.994, auc=0.994), split(), False),
    ],
)
def test_a_likely_leak_is_a_held_out_score_of_at_least_0_995(test_values, val_values, flagged):
    verdict = judge("converged", metrics(split(), val_values, test_values), "pSP", 0.05)
    assert (Label.LIKELY_LEAK in verdict.flags) is flagged
    assert verdict.label is Label.MEETS


def test_a_perfect_training_fit_alone_is_no_leak():
    verdict = judge("converged", metrics(split(accuracy=1.0, auc=1.0)), "pSP", 0.05)
    assert verdict.flags == ()
