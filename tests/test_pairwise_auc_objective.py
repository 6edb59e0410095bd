"""Paper 004's pairwise AUC objective (eq. 3) as the Problem's objective: its O(n) moment form
against the pairwise mean it stands for, its gradient, its memory, and its way through the run
spec, the command line and the solver cards."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest
from toy_tables import write_toy_csv

from engine.capabilities import OBJECTIVES, Capability, objective_offers
from engine.cli import main
from engine.data.csv_source import CSVSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.objectives import OBJECTIVE_TYPES, LogisticLoss, PairwiseAUCLoss
from engine.runs import RunSpec
from engine.runs.describe import describe_spec
from engine.solvers import Budget
from engine.solvers.catalogue import solver_card
from engine.verdict import judge

TOY_FLAGS = ("--source", "csv", "--label", "y", "--attribute", "g")
CONSTANTS = [(c1, c2) for c1 in (0.5, 1.0) for c2 in (0.5, 1.0)]


def scores_and_labels(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(np.int8)
    y[:2] = (0, 1)  # both classes
    return rng.normal(size=n) + 0.7 * y, y


def brute_force(h: np.ndarray, y: np.ndarray, c1: float, c2: float) -> tuple[float, np.ndarray]:
    """The mean over every (positive, negative) pair of c1 (h⁺ − h⁻ − c2)² (paper 004, eq. 3),
    and its gradient, from the pair matrix."""
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    t = h[pos][:, None] - h[neg][None, :] - c2
    grad = np.zeros_like(h)
    grad[pos] = 2 * c1 * t.sum(axis=1) / t.size
    grad[neg] = -2 * c1 * t.sum(axis=0) / t.size
    return float(np.mean(c1 * t**2)), grad


@pytest.mark.parametrize(("c1", "c2"), CONSTANTS)
def test_the_moment_form_is_the_pairwise_mean_and_its_gradient(c1, c2):
    h, y = scores_and_labels(37, seed=int(10 * c1 + c2))
    value, grad = PairwiseAUCLoss(c1, c2).value_and_grad(h, y)
    expected, expected_grad = brute_force(h, y, c1, c2)
    assert value == pytest.approx(expected, rel=1e-12)
    assert PairwiseAUCLoss(c1, c2).value(h, y) == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-14)


def test_the_gradient_matches_central_differences_on_a_batch():
    h, y = scores_and_labels(60, seed=3)
    rows = np.array([0, 1, 5, 9, 9, 17, 30, 41])
    loss = PairwiseAUCLoss(0.5, 1.0)
    _, grad = loss.value_and_grad(h[rows], y[rows])
    step = 1e-6
    for i in range(len(rows)):
        up, down = h[rows].copy(), h[rows].copy()
        up[i] += step
        down[i] -= step
        numeric = (loss.value(up, y[rows]) - loss.value(down, y[rows])) / (2 * step)
        assert grad[i] == pytest.approx(numeric, abs=1e-7)


def test_twenty_thousand_rows_allocate_no_pair_matrix():
    h, y = scores_and_labels(20_000, seed=4)
    tracemalloc.start()
    PairwiseAUCLoss().value_and_grad(h, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2_000_000  # a few vectors of 20k floats; the pairs would take ≈ 1.6e9 bytes


def test_it_needs_both_classes_and_positive_constants():
    with pytest.raises(UserError, match="both positive and negative"):
        PairwiseAUCLoss().value(np.zeros(3), np.ones(3, dtype=np.int8))
    with pytest.raises(UserError, match="c1 > 0 and c2 > 0"):
        PairwiseAUCLoss(0.0, 1.0)


def test_it_offers_a_smooth_convex_objective_but_no_minibatch_loss():
    assert objective_offers("pairwise_auc") == {
        Capability.SMOOTH,
        Capability.CONVEX,
        Capability.PAIRWISE_AUC,
    }
    assert set(OBJECTIVES) == set(OBJECTIVE_TYPES)
    model = ModelSpec()
    assert solver_card("ssg").refusal(model, "pSP", "pairwise_auc") is None
    assert solver_card("unconstrained").refusal(model, None, "pairwise_auc") is None
    assert solver_card("sgd").refusal(model, None, "pairwise_auc") == (
        f"sgd needs {Capability.MINIBATCH_LOSS.words} "
        f"({solver_card('sgd').needs[Capability.MINIBATCH_LOSS]}), which the pairwise_auc "
        "objective does not offer"
    )


def spec(objective=None) -> RunSpec:
    extra = {} if objective is None else {"objective": objective}
    return RunSpec(
        data=CSVSpec("toy.csv", label="y", protected=("g",)),
        prepare=PrepareOptions(grouping=(GroupingSpec("g"),)),
        model=ModelSpec(),
        constraint=ConstraintSpec("pSP", 0.1, (0.1, 0.5)),
        interval=(0.1, 0.5),
        solver="ssg",
        budget=Budget(max_iterations=5),
        **extra,
    )


def test_the_spec_carries_the_objective_and_a_logistic_spec_keeps_its_run_id():
    logistic = spec()
    assert set(logistic.to_dict()) == {
        "data",
        "prepare",
        "model",
        "constraint",
        "interval",
        "solver",
        "config",
        "budget",
        "seed",
        "engine_version",
    }
    assert spec(LogisticLoss()).run_id == logistic.run_id
    assert RunSpec.from_dict(logistic.to_dict()) == logistic
    pairwise = spec(PairwiseAUCLoss(0.5, 1.0))
    assert pairwise.to_dict()["objective"] == {"name": "pairwise_auc", "c1": 0.5, "c2": 1.0}
    assert pairwise.run_id != logistic.run_id
    restored = RunSpec.from_dict(json.loads(pairwise.canonical_json()))
    assert restored == pairwise and restored.run_id == pairwise.run_id


def test_a_run_with_the_pairwise_objective_reports_its_value_and_the_test_auc(tmp_path, capsys):
    out = tmp_path / "run.json"
    csv = write_toy_csv(tmp_path).path
    assert (
        main(
            [
                "run",
                *TOY_FLAGS,
                "--csv",
                csv,
                "--objective",
                "pairwise_auc",
                "--objective-c1",
                "0.5",
                "--solver",
                "ssg",
                "--iterations",
                "30",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "ssg: " in capsys.readouterr().out
    document = json.loads(out.read_text())
    assert document["spec"]["objective"] == {"name": "pairwise_auc", "c1": 0.5, "c2": 1.0}
    test = document["result"]["metrics"]["test"]
    assert 0.5 < test["auc"] <= 1.0
    assert test["loss"] is not None and test["loss"] >= 0.0  # the pairwise objective's value


def test_a_minibatch_solver_is_refused_with_the_pairwise_objective(tmp_path, capsys):
    csv = write_toy_csv(tmp_path).path
    assert (
        main(
            [
                "run",
                *TOY_FLAGS,
                "--csv",
                csv,
                "--constraint",
                "none",
                "--objective",
                "pairwise_auc",
                "--solver",
                "sgd",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith(f"error: sgd needs {Capability.MINIBATCH_LOSS.words}")
    assert "which the pairwise_auc objective does not offer" in err
    assert main(["run", "--objective-c1", "0.5", "--solver", "unconstrained"]) == 2
    assert "set the pairwise_auc objective only" in capsys.readouterr().err


def test_a_ranking_objective_is_not_degenerate_for_its_accuracy_at_the_threshold():
    metrics = {
        "test": {
            "accuracy": 0.6,
            "majority": 0.7,
            "auc": 0.8,
            "score_std": 1.0,
            "positive_rate": 0.5,
            "constraint": 0.01,
        }
    }
    assert judge("converged", metrics, "pSP", 0.05).splits["test"].degenerate
    assert (
        judge("converged", metrics, "pSP", 0.05, thresholded=False).splits["test"].degenerate
        is None
    )
    assert spec(PairwiseAUCLoss(1.0, 1.0)).thresholded is False
    assert spec().thresholded is True


def test_a_run_says_its_objective():
    assert dict(describe_spec(spec()))["objective"] == "logistic loss"
    assert dict(describe_spec(spec(PairwiseAUCLoss(0.5, 1.0))))["objective"] == (
        "pairwise AUC square loss (paper 004, eq. 3), c1 = 0.5, c2 = 1"
    )


@pytest.mark.parametrize("objective", [LogisticLoss(), PairwiseAUCLoss(0.5, 1.0)])
def test_the_curvature_bounds_the_hessian_in_the_scores(objective):
    """The declared curvature is at least the largest eigenvalue of ∇²_h f (by finite
    differences of the gradient), and for the pairwise loss equal to it (a quadratic)."""
    rng = np.random.default_rng(4)
    y = (rng.random(40) < 0.3).astype(np.int8)
    h = rng.normal(size=40)
    step = 1e-6
    hessian = np.array(
        [
            (
                objective.value_and_grad(h + step * e, y)[1]
                - objective.value_and_grad(h - step * e, y)[1]
            )
            / (2 * step)
            for e in np.eye(40)
        ]
    )
    largest = np.linalg.eigvalsh((hessian + hessian.T) / 2)[-1]
    assert largest <= objective.curvature(y) * (1 + 1e-6)
    if isinstance(objective, PairwiseAUCLoss):
        assert largest == pytest.approx(objective.curvature(y), rel=1e-5)
