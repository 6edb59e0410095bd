"""Overlapping subgroups from thresholds (paper 001 §5.3) and the intersectional hinge (eq. 18)
on them: the membership matrix against a direct loop, the closed-form batch rows against autograd,
the conventions for empty subgroups, caching and run specs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "solvers"))
from subgroup_data import SHARES, subgroup_frame, subgroup_prepared  # noqa: E402

from engine.data.cache import load_cached, store  # noqa: E402
from engine.data.subgroups import (  # noqa: E402
    SubgroupSpec,
    attribute_values,
    threshold_subgroups,
)
from engine.errors import UserError  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.fairness.constraints.batch_rows import AutogradRows  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.problem import Problem  # noqa: E402

KAPPA = 0.05


def hinge_problem(prepared) -> Problem:
    return Problem(prepared, ModelSpec(), ConstraintSpec("intersectional_hinge", KAPPA))


def test_subgroups_are_every_threshold_combination_above_the_share():
    frame, _ = subgroup_frame()
    values = frame[list(SHARES)].to_numpy()
    spec = SubgroupSpec(SHARES, thresholds=4, min_share=0.05)
    found = threshold_subgroups(values, spec)
    cuts = [np.quantile(values[:, j], [0, 0.25, 0.5, 0.75]) for j in range(2)]
    expected = {
        (i, j)
        for i in range(4)
        for j in range(4)
        if (i, j) != (0, 0)
        and np.mean((values[:, 0] >= cuts[0][i]) & (values[:, 1] >= cuts[1][j])) > 0.05
    }
    assert len(found) == len(expected) > 5
    assert {tuple(np.rint(level * 4).astype(int)) for level in found.levels} == expected
    members = found.membership(values).toarray()
    for column, thresholds in enumerate(found.thresholds):
        assert np.array_equal(members[:, column], np.all(values >= thresholds, axis=1))
    assert found.names[0].startswith("share_b≥")  # the cut-at-the-minimum attribute is left out


def test_missing_values_are_in_no_subgroup_and_bad_specs_are_refused():
    spec = SubgroupSpec(("a",), thresholds=2, min_share=0.0)
    found = threshold_subgroups(np.array([[0.0], [1.0], [2.0], [3.0]]), spec)
    assert found.membership(np.array([[np.nan], [3.0]])).toarray().tolist() == [[0.0], [1.0]]
    frame = subgroup_frame()[0]
    with pytest.raises(UserError, match="'g' is not numeric"):
        attribute_values(frame, ("share_a", "g"))
    for bad in (
        {"attributes": ()},
        {"attributes": ("a", "a")},
        {"attributes": ("a",), "thresholds": 1},
        {"attributes": ("a",), "min_share": 1.0},
    ):
        with pytest.raises(UserError):
            SubgroupSpec(**bad)


def test_subgroup_means_from_the_membership_matrix_equal_a_direct_loop():
    prepared = subgroup_prepared()
    problem = hinge_problem(prepared)
    bound = problem.bound
    train = prepared.train
    rng = np.random.default_rng(1)
    h = rng.normal(size=len(train))
    hinge = np.maximum(1.0 - (2.0 * train.y - 1.0) * h, 0.0)
    members = train.members.toarray().astype(bool)
    expected = [hinge[members[:, j]].mean() - hinge.mean() - KAPPA for j in range(members.shape[1])]
    assert bound.m == len(prepared.subgroups) > 5
    np.testing.assert_allclose(bound.surrogate(torch.from_numpy(h)).numpy(), expected)
    np.testing.assert_allclose(problem.batch_rows().values(h), expected)
    assert bound.exact(h) == pytest.approx(max(expected) + KAPPA)
    assert bound.rows[0] == f"hinge[{prepared.subgroups.names[0]}-all]"


def test_closed_form_batch_rows_equal_autograd_with_an_empty_subgroup():
    prepared = subgroup_prepared()
    problem = hinge_problem(prepared)
    train = prepared.train
    rng = np.random.default_rng(2)
    smallest = int(np.argmin(np.asarray(train.members.sum(axis=0)).ravel()))
    outside = np.flatnonzero(train.members[:, smallest].toarray().ravel() == 0)
    rows = rng.choice(outside, size=40, replace=False)  # a batch without the smallest subgroup
    batch = problem.batch_rows(rows)
    counts = np.asarray(train.members[rows].sum(axis=0)).ravel()
    assert counts[smallest] == 0 and (counts > 0).sum() > 5
    generic = AutogradRows(problem.constraint_on("train", rows))
    h = rng.normal(size=len(rows))
    values, pullback = batch.linearise(h)
    expected_values, expected_pullback = generic.linearise(h, {})
    np.testing.assert_allclose(values, expected_values)
    assert np.all(values[counts == 0] == -KAPPA)  # an empty subgroup's row: no evidence
    v = rng.normal(size=batch.m)
    np.testing.assert_allclose(pullback(v)[0], expected_pullback(v)[0], atol=1e-12)
    e = np.zeros(batch.m)
    e[np.flatnonzero(counts == 0)[0]] = 1.0
    assert np.allclose(pullback(e)[0], 0.0)


def test_exact_rows_on_held_out_splits_use_their_own_membership():
    prepared = subgroup_prepared()
    problem = hinge_problem(prepared)
    test = prepared.test
    h = np.random.default_rng(3).normal(size=len(test))
    on_test = problem.constraint_on("test")
    hinge = np.maximum(1.0 - (2.0 * test.y - 1.0) * h, 0.0)
    members = test.members.toarray().astype(bool)
    worst = max(
        hinge[members[:, j]].mean() - hinge.mean()
        for j in range(members.shape[1])
        if members[:, j].any()
    )
    assert on_test.exact(h) == pytest.approx(max(worst, 0.0))
    with pytest.raises(UserError, match="subgroup membership"):
        problem.bound.with_ids(test.groups, test.y)


def test_without_subgroups_the_hinge_constrains_the_groups():
    prepared = subgroup_prepared()
    plain = Problem(
        prepared.__class__(**{**prepared.__dict__, "subgroups": None}),
        ModelSpec(),
        ConstraintSpec("intersectional_hinge", KAPPA),
    )
    assert plain.bound.rows == ("hinge[high-all]", "hinge[low-all]")
    other = Problem(prepared, ModelSpec(), ConstraintSpec("DP", 0.05))
    assert other.bound.m == 2  # subgroups are only for the family that constrains them


def test_cached_preparation_keeps_the_membership(tmp_path):
    prepared = subgroup_prepared()
    keyed = prepared.__class__(**{**prepared.__dict__, "key": "k"})
    store(tmp_path, keyed)
    loaded = load_cached(tmp_path, "k")
    assert loaded.subgroups.names == prepared.subgroups.names
    np.testing.assert_array_equal(loaded.subgroups.levels, prepared.subgroups.levels)
    for split in ("train", "val", "test"):
        difference = loaded.split(split).members - prepared.split(split).members
        assert isinstance(loaded.split(split).members, sparse.csr_matrix)
        assert difference.nnz == 0
