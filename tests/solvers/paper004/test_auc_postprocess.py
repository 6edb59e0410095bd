"""Paper 004's post-processing baseline (App. E.2): the exact AUCs of every map of the grid against
the rank AUCs of engine.fairness.auc, the map in Problem.scores, and the solver from its run to
its refusals."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from solver_data import toy_prepared, two_groups, two_groups_flags, two_groups_frame

from engine import fairness
from engine.cli import main
from engine.errors import UserError
from engine.fairness.auc_shift import TwoGroupScores, map_metrics
from engine.fairness.constraint_spec import ConstraintSpec
from engine.model_forms import POST_SCALE, POST_SHIFT
from engine.models import ModelSpec
from engine.objectives import PairwiseAUCLoss
from engine.problem import Problem
from engine.runs import Store
from engine.solvers import Budget, solve
from engine.solvers.paper004.auc_postprocess import grid, group_map
from engine.solvers.paper004.cards_postprocess import PostProcessConfig

KAPPA = 0.05
COARSE = PostProcessConfig(scale_step=0.25, shift_step=0.25)  # 21 × 25 maps


@pytest.fixture(scope="module")
def data():
    return two_groups(n=3000)


def _problem(data, variant: str = "group", kappa: float = KAPPA, model=None) -> Problem:
    constraint = ConstraintSpec("auc_gap", kappa, None, options=(("variant", variant),))
    return Problem(data, model or ModelSpec(), constraint, objective=PairwiseAUCLoss())


def _mapped(h: np.ndarray, groups: np.ndarray, scale: float, shift: float) -> np.ndarray:
    return np.where(groups == 0, scale * h + shift, h)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_grid_metrics_are_the_rank_aucs_of_the_mapped_scores(seed):
    rng = np.random.default_rng(seed)
    n = 300
    groups = (rng.random(n) < 0.6).astype(np.int64)
    y = (rng.random(n) < 0.25 + 0.2 * groups).astype(np.int64)
    h = np.round(rng.normal(size=n) + 0.7 * y - 0.4 * groups, 1)  # many ties, in and across
    scales = np.array([0.0, 0.5, 1.0, 1.5, 3.0])
    shifts = np.round(np.arange(-8, 9) * 0.2, 12)  # −1.6 … 1.6: crosses many of U's scores
    values = map_metrics(TwoGroupScores.build(h, groups, y), scales, shifts)
    for (i, scale), (j, shift) in itertools.product(enumerate(scales), enumerate(shifts)):
        s = _mapped(h, groups, scale, shift)
        assert values.auc[i, j] == fairness.roc_auc(s, y)
        assert values.group[i, j] == fairness.group_auc_gap(s, groups)
        assert values.inter[i, j] == fairness.inter_group_auc_gap(s, groups, y)


def test_the_paper_grid_holds_the_identity_and_its_bounds():
    scales, shifts = grid(PostProcessConfig())
    assert len(scales) == 101 and len(shifts) == 61  # paper 004, App. E.3
    assert scales[0] == 0.0 and scales[-1] == 5.0 and 1.0 in scales and 0.15 in scales
    assert shifts[0] == -3.0 and shifts[-1] == 3.0 and 0.0 in shifts
    with pytest.raises(UserError, match="option shift_step must be > 0, not 0"):
        PostProcessConfig(shift_step=0.0)
    with pytest.raises(UserError, match="at most 1,000,000 are allowed"):
        PostProcessConfig(scale_step=1e-4, shift_step=1e-4)


@pytest.mark.parametrize("model", [ModelSpec(), ModelSpec("mlp", hidden=(5,))])
def test_problem_scores_map_the_protected_group_only(data, model):
    problem = _problem(data, model=model)
    params = problem.init_params(0)
    if model.affine:
        params["w"] = np.random.default_rng(0).normal(size=params["w"].shape)
    groups = data.split("test").groups
    h = problem.scores(params, "test")
    mapped = problem.scores(params | group_map(2.0, -0.5), "test")
    assert np.array_equal(mapped, _mapped(h, groups, 2.0, -0.5))
    assert np.array_equal(mapped[groups == 1], h[groups == 1])
    assert np.array_equal(problem.scores(params | group_map(1.0, 0.0), "test"), h)


@pytest.mark.parametrize("variant", ["group", "inter"])
def test_the_reported_map_is_the_best_validation_auc_within_kappa(data, variant):
    problem = _problem(data, variant)
    budget = Budget(max_iterations=500)
    reference = solve(problem, "unconstrained", budget=budget, seed=0)
    solution = solve(problem, "auc_postprocess", COARSE, budget=budget, seed=0)
    assert solution.status == "converged" and "post-processing: F's scores mapped to" in (
        solution.reason
    )
    assert np.array_equal(solution.params["w"], reference.params["w"])  # phase 1 is that solver
    val, test = solution.metrics["val"], solution.metrics["test"]
    assert val["constraint"] <= KAPPA
    assert test["constraint"] < reference.metrics["test"]["constraint"] / 3
    scale, shift = solution.params[POST_SCALE][0], solution.params[POST_SHIFT][0]
    assert solution.params[POST_SCALE][1] == 1.0 and solution.params[POST_SHIFT][1] == 0.0
    scales, shifts = grid(COARSE)
    assert scale in scales and shift in shifts
    h, part = problem.scores(reference.params, "val"), data.split("val")
    feasible_aucs = []
    for a, b in itertools.product(scales, shifts):
        metrics = problem.report_scores(_mapped(h, part.groups, a, b), "val", ("auc", "constraint"))
        if metrics["constraint"] <= KAPPA:
            feasible_aucs.append(metrics["auc"])
    assert val["auc"] == max(feasible_aucs)
    assert np.array_equal(solution.test_scores, problem.scores(solution.params, "test"))


def test_a_run_ended_by_its_budget_is_post_processed_and_stored_with_its_map(data, tmp_path):
    problem = _problem(data)
    solution = solve(problem, "auc_postprocess", COARSE, Budget(max_iterations=3), seed=0)
    assert solution.reason.startswith("iteration budget of 3 reached; post-processing: F's ")
    assert POST_SCALE in solution.params and solution.metrics["val"]["constraint"] <= KAPPA
    store = Store(tmp_path)
    store.save_artifacts("run", solution.params, solution.test_scores, solution.test_groups)
    loaded = store.load_params("run")
    assert loaded.keys() == solution.params.keys()
    assert np.array_equal(problem.scores(loaded, "test"), store.load_scores("run")[0])


def test_without_a_map_within_kappa_the_unmapped_model_is_reported_and_said(data):
    problem = _problem(data, kappa=1e-6)  # only an exact ½ would do
    solution = solve(problem, "auc_postprocess", COARSE, Budget(max_iterations=500), seed=0)
    reference = solve(problem, "unconstrained", budget=Budget(max_iterations=500), seed=0)
    assert (
        "post-processing failed: no map of the grid brings the validation AUC gap within κ = 1e-06"
    ) in solution.reason
    assert "the unmapped model is reported" in solution.reason
    assert POST_SCALE not in solution.params
    assert solution.metrics == reference.metrics


def test_intra_and_more_than_two_groups_are_refused(data):
    with pytest.raises(
        UserError,
        match=r"auc_postprocess applies to the AUC gaps group and "
        r"inter only \(paper 004, App. E.2 .*\), not intra$",
    ):
        solve(_problem(data, "intra"), "auc_postprocess", COARSE, Budget(max_iterations=5))
    three = _problem(toy_prepared(groups=3))
    with pytest.raises(
        UserError, match="two protected groups .*this data has 3; choose a grouping with two"
    ):
        solve(three, "auc_postprocess", COARSE, Budget(max_iterations=5))


def _run(tmp_path, *flags: str) -> list[str]:
    table = tmp_path / "two_groups.csv"
    two_groups_frame(n=1500).to_csv(table, index=False)
    return [
        "run",
        *two_groups_flags(table),
        "--constraint",
        "auc_gap",
        "--kappa",
        str(KAPPA),
        "--solver",
        "auc_postprocess",
        "--iterations",
        "500",
        "--quiet",
        *flags,
    ]


def test_the_command_line_runs_it_and_refuses_intra_in_a_sentence(tmp_path, capsys):
    out = tmp_path / "pp.json"
    assert main(_run(tmp_path, "--auc-variant", "inter", "--out", str(out))) == 0
    printed = capsys.readouterr()
    assert "post-processing: F's scores mapped to" in printed.out
    document = json.loads(out.read_text())
    assert document["spec"]["objective"]["name"] == "pairwise_auc"
    assert document["result"]["metrics"]["val"]["constraint"] <= KAPPA
    assert main(_run(tmp_path, "--auc-variant", "intra")) == 2
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err + printed.out
    assert printed.err.startswith("error: auc_postprocess applies to the AUC gaps group and inter")
