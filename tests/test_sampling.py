"""Minibatches: objective batches as shuffled passes, J rows of every group, one Generator."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import UserError
from engine.sampling import BatchSampler

GROUPS = np.array([0] * 30 + [1] * 7 + [2] * 3)


def sampler(seed: int = 0) -> BatchSampler:
    return BatchSampler(GROUPS, 3, np.random.default_rng(seed))


def test_objective_batches_visit_every_row_once_per_pass():
    batches = sampler()
    first_pass = np.concatenate([batches.objective(8).rows for _ in range(5)])
    assert sorted(first_pass) == list(range(40))
    second = np.concatenate([batches.objective(8).rows for _ in range(5)])
    assert sorted(second) == list(range(40)) and not np.array_equal(first_pass, second)


def test_a_batch_across_the_end_of_a_pass_takes_the_rest_then_a_new_pass():
    batches = sampler()
    head = batches.objective(35).rows
    crossing = batches.objective(10).rows
    assert sorted(np.concatenate([head, crossing[:5]])) == list(range(40))
    assert len(set(crossing[5:])) == 5  # from the new pass, without repeats within it


def test_constraint_batches_hold_j_rows_of_every_group_and_cycle_small_groups():
    batches = sampler()
    batch = batches.per_group(4)
    assert np.array_equal(batch.groups, np.repeat([0, 1, 2], 4))
    assert np.array_equal(GROUPS[batch.rows], batch.groups)
    seen = np.concatenate([batches.per_group(4).rows[batch.groups == 2] for _ in range(3)])
    assert set(seen) == {37, 38, 39}  # the 3-row group is recycled, pass by pass


def test_two_draws_are_independent_and_a_seed_reproduces_them():
    one, two = sampler(5), sampler(5)
    draws = [one.per_group(2).rows, one.per_group(2).rows, one.objective(6).rows]
    again = [two.per_group(2).rows, two.per_group(2).rows, two.objective(6).rows]
    assert all(np.array_equal(a, b) for a, b in zip(draws, again, strict=True))
    assert not np.array_equal(draws[0], draws[1])
    assert not np.array_equal(sampler(6).objective(6).rows, draws[2])


@pytest.mark.parametrize("size", [0, -1, 2.5, True])
def test_an_empty_or_odd_batch_size_is_refused(size):
    with pytest.raises(UserError):
        sampler().objective(size)


def test_a_group_without_rows_is_refused():
    with pytest.raises(UserError, match=r"\[1\]"):
        BatchSampler(np.array([0, 0, 2]), 3, np.random.default_rng(0))


def test_with_labels_every_constraint_batch_has_j_rows_of_every_group_and_label():
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 3, 300)
    labels = (rng.random(300) < 0.2).astype(np.int8)  # few positives: a group batch often has none
    sampler = BatchSampler(groups, 3, np.random.default_rng(1), labels=labels)
    for _ in range(20):
        batch = sampler.per_group(4)
        cells = 2 * batch.groups + labels[batch.rows]
        assert np.array_equal(np.bincount(cells, minlength=6), np.full(6, 4))
        assert np.array_equal(batch.groups, groups[batch.rows])
    with pytest.raises(UserError, match=r"\(group id, label\) cells \[\(2, 1\)\]"):
        BatchSampler(groups, 3, rng, labels=np.where(groups == 2, 0, labels))
