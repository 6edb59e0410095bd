"""Paper 004's methods in memory O(d + n) (spec 004 §5): on 20,000 rows, where one matrix of all
score pairs would take gigabytes, no step of a solver, no surrogate row and no exact AUC gap
allocates more than a few vectors of the data's length."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch
from solver_data import two_groups
from torch.profiler import ProfilerActivity, profile

from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.family_options import AUC_GAP_VARIANTS
from engine.models import ModelSpec
from engine.objectives import PairwiseAUCLoss
from engine.problem import Problem
from engine.solvers.catalogue import solver_card

ROWS = 20_000
LIMIT = 16 * ROWS * 8  # 16 float64 vectors of the data's length; all pairs: ~1e8 × 8 bytes


@pytest.fixture(scope="module")
def data():
    return two_groups(n=ROWS)


def _peak(work) -> int:
    """The peak of memory allocated through Python and numpy while `work` runs."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _largest_torch_op(work) -> int:
    """The most memory one torch operation allocated while `work` runs (torch's allocator is
    not seen by tracemalloc)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
        work()
    return max(event.cpu_memory_usage for event in profiler.events())


@pytest.mark.parametrize(
    ("solver", "variant"),
    [(s, v) for s in ("sfls", "proxy_lagrangian") for v in ("group", "inter", "intra")]
    + [("corr_penalty", "group")],  # Ex. 1 only (paper 004, App. E.2)
)
def test_solver_steps_allocate_no_pair_matrix(data, solver, variant):
    card = solver_card(solver)
    constraint = ConstraintSpec("auc_gap", 0.05, None, options=(("variant", variant),))
    problem = Problem(data, ModelSpec(), constraint, objective=PairwiseAUCLoss())
    instance = card.load()(problem, card.Config(select="last"), np.random.default_rng(0))
    instance.advance(25)  # first steps: one-off set-up

    def steps() -> None:
        for _ in range(8):
            instance.advance(25)

    assert _peak(steps) < LIMIT


@pytest.mark.parametrize("variant", AUC_GAP_VARIANTS)
def test_surrogate_rows_and_exact_gaps_allocate_no_pair_matrix(data, variant):
    constraint = ConstraintSpec("auc_gap", 0.05, None, options=(("variant", variant),))
    problem = Problem(data, ModelSpec(), constraint, objective=PairwiseAUCLoss())
    h = np.random.default_rng(1).normal(size=len(data.train))
    bound = problem.bound

    assert _largest_torch_op(lambda: bound.surrogate(torch.from_numpy(h))) < LIMIT
    assert _peak(lambda: problem.report_scores(h, "train", only=("auc", "constraint"))) < LIMIT
