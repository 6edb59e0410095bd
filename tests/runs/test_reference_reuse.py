"""A reference run at a new I takes the model of the same reference trained at another I: no
solver call, the same parameters, and every value on I computed afresh at the new I."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from run_fixtures import make_spec

from engine.data.sources import load_prepared
from engine.fairness.constraint_spec import ConstraintSpec
from engine.problem import Problem
from engine.runs import execute as execute_module
from engine.runs.reference_key import TRAINED_IN, reused_from
from engine.runs.reference_reuse import (
    CONSTRAINT_METRIC,
    METRICS_ON_I,
    depends_on_interval,
    interval_free,
    reference_source,
)
from engine.runs.worker import execute_run

I1 = (0.1, 0.5)  # run_fixtures.INTERVAL
I2 = (0.6, 0.95)


def brute_force_psp(scores: np.ndarray, groups: np.ndarray, alpha: float, beta: float) -> float:
    """max over pairs of groups k, k' and thresholds θ of
    |clip(F̄_k(θ), α, β) − clip(F̄_k'(θ), α, β)| / (β − α),
    F̄_k(θ) = Pr(score > θ | group k) (paper 003, Def. 4.2 in the closed form of App. C, eq. 62), over every pooled score θ."""
    best = 0.0
    ids = np.unique(groups)
    for theta in np.unique(scores):
        ranks = [np.mean(scores[groups == k] > theta) for k in ids]
        clipped = [(min(max(r, alpha), beta) - alpha) / (beta - alpha) for r in ranks]
        for a in range(len(ids)):
            for b in range(a + 1, len(ids)):
                best = max(best, abs(clipped[a] - clipped[b]))
    return best


@pytest.fixture
def solver_calls(monkeypatch) -> list[str]:
    """The solver (`solve_run`) calls the worker makes, through `engine.runs.execute`, by solver
    name."""
    calls: list[str] = []
    solve_run = execute_module.solve_run

    def counted(problem, solver, *args, **kwargs):
        calls.append(solver)
        return solve_run(problem, solver, *args, **kwargs)

    monkeypatch.setattr(execute_module, "solve_run", counted)
    return calls


def run(store, spec) -> str:
    store.enqueue(spec.run_id, spec.to_dict())
    return execute_run(str(store.home), spec.run_id)


def reference(data, interval=I1, **changes):
    spec = make_spec(data, solver="unconstrained")
    return dataclasses.replace(spec, interval=interval, **changes)


def test_a_reference_at_a_new_interval_reuses_the_model_and_reports_at_its_own_interval(
    store, csv_spec, solver_calls
):
    first, second = reference(csv_spec, I1), reference(csv_spec, I2)
    assert first.run_id != second.run_id
    assert run(store, first) == "converged"
    assert run(store, second) == "converged"
    assert solver_calls == ["unconstrained"]  # the second did not train

    one, two = store.run(first.run_id), store.run(second.run_id)
    assert f"reuses the model trained in run {first.run_id}" in two.reason
    assert "does not depend on I" in two.reason
    assert two.stop_code == one.stop_code and two.iterations == one.iterations
    trained, reused = store.load_params(first.run_id), store.load_params(second.run_id)
    assert trained.keys() == reused.keys()
    assert all(np.array_equal(trained[k], reused[k]) for k in trained)

    scores, groups = store.load_scores(first.run_id)  # the model's test scores, as trained
    np.testing.assert_array_equal(store.load_scores(second.run_id)[0], scores)
    at_one, at_two = store.metrics(first.run_id), store.metrics(second.run_id)
    assert at_two["test"]["psp"] == pytest.approx(brute_force_psp(scores, groups, *I2), abs=1e-12)
    assert at_one["test"]["psp"] == pytest.approx(brute_force_psp(scores, groups, *I1), abs=1e-12)
    assert abs(at_two["test"]["psp"] - at_one["test"]["psp"]) > 0.01
    # values that do not depend on I are those of the same model
    for split in ("train", "val", "test"):
        for name in ("loss", "accuracy", "auc", "sp"):
            assert at_two[split][name] == pytest.approx(at_one[split][name], abs=1e-12)
    # the held-out intervals, as a trained run stores them, at I2
    for split in ("val", "test"):
        assert at_two[split]["psp_low"] <= at_two[split]["psp"] <= at_two[split]["psp_high"]
        assert at_two[split]["accuracy_low"] == pytest.approx(at_one[split]["accuracy_low"])


def test_the_reused_trajectory_keeps_training_without_values_on_the_interval(store, csv_spec):
    first, second = reference(csv_spec, I1), reference(csv_spec, I2)
    run(store, first)
    run(store, second)
    source, records = store.records(first.run_id), store.records(second.run_id)
    kinds = [r["kind"] for r in records]
    assert kinds[-2:] == ["exact", "final"]
    # the source's training records, in order, less its final record and the exact record
    # where it ended, which the reused model's, whole at I2, replaces
    assert source[-2]["kind"] == "exact" and source[-2]["iteration"] == records[-2]["iteration"]
    assert kinds[:-2] == [r["kind"] for r in source[:-2]]
    for old, new in zip(source[:-2], records[:-2], strict=True):
        assert (new["iteration"], new["seconds"], new["objective"]) == (
            old["iteration"],
            old["seconds"],
            old["objective"],
        )
        assert not any(k.partition(".")[2] in METRICS_ON_I for k in new["values"])
        kept = {k: v for k, v in old["values"].items() if k.partition(".")[2] not in METRICS_ON_I}
        assert new["values"] == kept
    # at the end, the model's exact record and final record at I2
    exact, final = records[-2], records[-1]
    metrics = store.metrics(second.run_id)
    same = {
        k: v for k, v in source[-2]["values"].items() if k.partition(".")[2] not in METRICS_ON_I
    }
    assert {k: exact["values"][k] for k in same} == pytest.approx(same)
    assert exact["values"]["val.psp"] == pytest.approx(metrics["val"]["psp"])
    assert exact["values"]["train.psp"] == pytest.approx(metrics["train"]["psp"])
    assert final["values"]["test.psp"] == pytest.approx(metrics["test"]["psp"])
    assert final["values"]["test.psp_high"] == pytest.approx(metrics["test"]["psp_high"])
    assert final["state"][TRAINED_IN] == first.run_id
    assert final["iteration"] == store.run(first.run_id).iterations


def test_a_run_reusing_a_reused_model_names_the_run_that_trained_it(store, csv_spec, solver_calls):
    first, second, third = (reference(csv_spec, i) for i in (I1, I2, (0.0, 0.2)))
    run(store, first)
    run(store, second)
    store.delete(first.run_id)  # its model now lives on only in the second run
    assert run(store, third) == "converged"
    assert solver_calls == ["unconstrained"]
    assert f"reuses the model trained in run {first.run_id}" in store.run(third.run_id).reason
    assert store.run(third.run_id).reason == store.run(second.run_id).reason
    assert reused_from(store, third.run_id) == first.run_id  # what the pages name
    assert reused_from(store, first.run_id) is None
    kinds = [r["kind"] for r in store.records(third.run_id)]
    assert kinds.count("final") == 1 and kinds[-2:] == ["exact", "final"]
    assert len(kinds) == len(store.records(second.run_id))  # its own end only, not the second's


@pytest.mark.parametrize(
    "changes",
    [{"seed": 1}, {"config": {"l2": 0.01}}],
    ids=["another seed", "other options"],
)
def test_a_reference_that_differs_in_more_than_the_interval_trains(
    store, csv_spec, solver_calls, changes
):
    run(store, reference(csv_spec, I1))
    other = reference(csv_spec, I2, **changes)
    assert reference_source(other, store) is None
    run(store, other)
    assert solver_calls == ["unconstrained", "unconstrained"]
    assert "reuses" not in store.run(other.run_id).reason


def test_a_cancelled_source_or_one_without_its_model_file_is_not_reused(
    store, csv_spec, solver_calls
):
    cancelled = reference(csv_spec, I1)
    store.enqueue(cancelled.run_id, cancelled.to_dict())
    store.request_cancel(cancelled.run_id)
    assert reference_source(reference(csv_spec, I2), store) is None

    trained = reference(csv_spec, (0.2, 0.4))
    run(store, trained)
    assert reference_source(reference(csv_spec, I2), store).run_id == trained.run_id
    (store.artifacts(trained.run_id) / "params.npz").unlink()
    assert reference_source(reference(csv_spec, I2), store) is None
    assert run(store, reference(csv_spec, I2)) == "converged"
    assert solver_calls == ["unconstrained", "unconstrained"]


def test_a_constrained_solver_is_never_a_reference(store, csv_spec):
    idca = make_spec(csv_spec, solver="idca", iterations=2)
    run(store, idca)
    constraint = dataclasses.replace(idca.constraint, interval=I2)
    moved = dataclasses.replace(idca, interval=I2, constraint=constraint)
    assert reference_source(moved, store) is None


def test_a_kept_constraint_that_moves_with_the_interval_is_reused_without_its_values(
    store, csv_spec, solver_calls
):
    """A benchmark keeps the sweep's constraint on the reference, its interval I: the reference
    does not train on it, but every value read from it is at the new I."""
    first = reference(csv_spec, I1, constraint=ConstraintSpec("pSP", 0.1, I1))
    second = reference(csv_spec, I2, constraint=ConstraintSpec("pSP", 0.1, I2))
    run(store, first)
    assert run(store, second) == "converged"
    assert solver_calls == ["unconstrained"]
    records = store.records(second.run_id)
    for record in records[:-2]:
        names = [k.partition(".")[2] for k in record["values"]]
        assert not any(depends_on_interval(n, True) for n in names)
        if record["kind"] == "surrogate":
            assert record["values"] == {} and record["max_violation"] is None
    scores, groups = store.load_scores(second.run_id)
    metrics = store.metrics(second.run_id)["test"]
    assert metrics[CONSTRAINT_METRIC] == pytest.approx(brute_force_psp(scores, groups, *I2))
    assert records[-2]["values"]["train.constraint"] == pytest.approx(
        store.metrics(second.run_id)["train"]["constraint"]
    )


def test_the_metrics_declared_on_the_interval_are_those_that_move_with_it(csv_spec):
    """`METRICS_ON_I` is what `Problem.report_scores` computes on I: a metric added there on I
    and not declared would be carried over from another I."""
    spec = reference(csv_spec)
    prepared = load_prepared(spec.data, spec.prepare)
    h = np.random.default_rng(0).normal(size=len(prepared.test)) + prepared.test.groups
    reports = [
        Problem(prepared, spec.model, None, interval=i).report_scores(h, "test") for i in (I1, I2)
    ]
    moved = {name for name, value in reports[0].items() if value != reports[1][name]}
    assert moved == METRICS_ON_I


def test_interval_free_leaves_out_only_what_depends_on_the_interval():
    record = {
        "iteration": 3,
        "seconds": 0.5,
        "kind": "iterate",
        "objective": 0.4,
        "max_violation": 0.1,
        "values": {
            "train.loss": 0.4,
            "train.psp": 0.2,
            "test.constraint": 0.1,
            "train.row.a-b": 0.1,
            "train.group.a.loss": 0.3,
        },
        "state": {},
    }
    kept = interval_free(record, constraint_changed=False)
    assert set(kept.values) == {
        "train.loss",
        "test.constraint",
        "train.row.a-b",
        "train.group.a.loss",
    }
    assert kept.max_violation == 0.1
    moved = interval_free(record, constraint_changed=True)
    assert set(moved.values) == {"train.loss", "train.group.a.loss"}
    assert moved.max_violation is None and moved.objective == 0.4
    assert interval_free(dict(record, kind="final"), False) is None
    assert interval_free(dict(record, state={TRAINED_IN: "x"}), False) is None
