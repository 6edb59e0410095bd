"""A frontier's inputs from the store: the axes a sweep shows by default, and the unconstrained
reference measured by the sweep's own constraint (paper 004's AUC gaps by variant)."""

from __future__ import annotations

import dataclasses

import pytest
from run_fixtures import make_spec

from engine.data.sources import load_prepared
from engine.fairness.auc import (
    bpsn_bnsp_gap,
    group_auc_gap,
    inter_group_auc_gap,
    intra_group_auc_gap,
    negative_average_equality_gap,
    positive_average_equality_gap,
)
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import reported_metric, set_options
from engine.fairness.family_options import AUC_GAP_VARIANTS
from engine.objectives import PairwiseAUCLoss
from engine.runs.frontier import frontier_points
from engine.runs.results import frontier_axes, run_result, sweep_view
from engine.runs.worker import execute_run

# paper 004, App. A: each variant's exact gap, from the test scores, groups and labels
EXACT_GAPS = {
    "group": lambda scores, groups, y: group_auc_gap(scores, groups),
    "inter": inter_group_auc_gap,
    "intra": intra_group_auc_gap,
    "average_positive": positive_average_equality_gap,
    "average_negative": negative_average_equality_gap,
    "bpsn": bpsn_bnsp_gap,
}


def auc_gap(variant: str, kappa: float = 0.05, **options) -> ConstraintSpec:
    return ConstraintSpec(
        "auc_gap",
        kappa,
        (0.0, 1.0),
        options=set_options("auc_gap", {"variant": variant, **options}),
    )


def auc_spec(data, solver: str, variant: str = "group", kappa: float = 0.05, seed: int = 0):
    """A run of paper 004: the pairwise AUC objective, under `variant`'s AUC gap unless the
    solver is the unconstrained reference."""
    spec = make_spec(data, solver=solver, iterations=50, seed=seed)
    constraint = None if solver == "unconstrained" else auc_gap(variant, kappa)
    return dataclasses.replace(spec, constraint=constraint, objective=PairwiseAUCLoss())


@pytest.fixture
def reference(store, csv_spec):
    """A finished unconstrained run of the pairwise AUC objective, with its test labels."""
    spec = auc_spec(csv_spec, "unconstrained")
    store.enqueue(spec.run_id, spec.to_dict())
    assert execute_run(str(store.home), spec.run_id) in ("converged", "budget")
    y = load_prepared(spec.data, spec.prepare).test.y
    return store.run(spec.run_id), y


@pytest.mark.parametrize("variant", AUC_GAP_VARIANTS)
def test_the_unconstrained_reference_carries_the_exact_gap_of_the_sweeps_variant(
    store, reference, variant
):
    row, y = reference
    scores, groups = store.load_scores(row.id)
    expected = EXACT_GAPS[variant](scores, groups, y)
    result = run_result(row, store, auc_gap(variant))
    assert result.metrics["test"]["constraint"] == pytest.approx(expected, abs=1e-12)
    assert all(result.metrics[split]["constraint"] is not None for split in ("train", "val"))
    (point,) = frontier_points([result], metric="constraint", score="auc", spread="se")
    assert point.unconstrained and point.fairness == pytest.approx(1.0 - expected, abs=1e-12)
    if variant != "group":  # the quantity the reference carried before, which is not this one
        assert expected != pytest.approx(store.metrics(row.id)["test"]["group_auc_gap"])


def test_every_variants_gap_is_read_from_the_stored_metrics_without_the_model(store, reference):
    row, _ = reference
    stored = store.metrics(row.id)["test"]
    (store.artifacts(row.id) / "params.npz").unlink()
    # c1 and c2 shape the surrogate, not the exact gap
    group = run_result(row, store, auc_gap("group", c1=1.0))
    assert group.metrics["test"]["constraint"] == stored["group_auc_gap"]
    intra = run_result(row, store, auc_gap("intra"))
    assert intra.metrics["test"]["constraint"] == stored["intra_group_auc_gap"]
    assert stored["intra_group_auc_gap"] != stored["group_auc_gap"]


@pytest.mark.parametrize(
    ("spec", "metric"),
    [
        (auc_gap("group"), "group_auc_gap"),
        (auc_gap("group", c1=1.0, c2=2.0), "group_auc_gap"),
        (auc_gap("intra"), "intra_group_auc_gap"),
        (auc_gap("bpsn"), "bpsn_bnsp_gap"),
        (ConstraintSpec("pSP", 0.1, (0.05, 0.3)), "psp"),
        (ConstraintSpec("group_loss_gap", 0.1), "group_loss_gap"),
        (ConstraintSpec("group_loss_gap", 0.1, pairs="vs_mean"), None),
        (ConstraintSpec("group_loss_gap", 0.1, options={"condition": "positive"}), None),
        (ConstraintSpec("intersectional_hinge", 0.1), None),
    ],
)
def test_a_constraint_is_reported_by_every_run_only_at_its_defaults(spec, metric):
    assert reported_metric(spec) == metric


def test_the_sweep_view_is_the_one_constraint_its_runs_share_whatever_kappa(csv_spec):
    intra = [auc_spec(csv_spec, "sfls", "intra", kappa) for kappa in (0.02, 0.1)]
    reference = auc_spec(csv_spec, "unconstrained")
    specs = [*intra, reference]
    assert sweep_view(specs) == intra[0].constraint
    assert sweep_view([*specs, auc_spec(csv_spec, "sfls", "inter")]) is None
    assert sweep_view([reference]) is None


def test_paper_004_sweeps_default_to_auc_with_standard_errors(csv_spec):
    psp = make_spec(csv_spec)
    logistic_auc_gap = dataclasses.replace(psp, constraint=auc_gap("intra"))
    pairwise_reference = auc_spec(csv_spec, "unconstrained")
    assert frontier_axes([psp, make_spec(csv_spec, "unconstrained")]) == ("accuracy", "ci")
    assert frontier_axes([logistic_auc_gap]) == ("auc", "se")
    assert frontier_axes([pairwise_reference]) == ("auc", "se")
    assert frontier_axes([psp, pairwise_reference]) == ("auc", "se")
