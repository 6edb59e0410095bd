"""Constraints bound to integer group ids (the prepared data's) equal those bound to the group
values, on the whole sample and on minibatches, for every family."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec, bind, bind_ids
from engine.fairness.families import family_names

NAMES = ("a", "b", "c")  # sorted, so value-binding and id-binding share the row order


def sample(n: int = 240, seed: int = 0):
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(3), n // 3)
    rng.shuffle(ids)
    y = (rng.random(n) < 0.4 + 0.1 * ids).astype(np.int8)
    return ids, y, torch.from_numpy(rng.normal(size=n))


def spec_of(family: str) -> ConstraintSpec:
    return ConstraintSpec(family, 0.3 if family.startswith("quad") else 0.1, (0.1, 0.6))


@pytest.mark.parametrize("family", family_names())
def test_binding_ids_equals_binding_values(family):
    ids, y, scores = sample()
    by_value = bind(spec_of(family), groups=np.asarray(NAMES)[ids], y=y)
    by_id = bind_ids(spec_of(family), ids=ids, names=NAMES, y=y)
    assert by_id.rows == by_value.rows
    aux = by_value.aux_init(scores)
    torch.testing.assert_close(by_id.surrogate(scores, aux), by_value.surrogate(scores, aux))
    assert by_id.exact(scores) == pytest.approx(by_value.exact(scores))
    batch = np.random.default_rng(1).choice(len(ids), 90, replace=False)
    on_ids = by_id.with_ids(ids[batch], y[batch])
    on_values = by_value.with_batch(groups=np.asarray(NAMES)[ids[batch]], y=y[batch])
    torch.testing.assert_close(
        on_ids.surrogate(scores[batch], aux), on_values.surrogate(scores[batch], aux)
    )


@pytest.mark.parametrize(
    "ids",
    [np.array([0, 1, 3]), np.array([-1, 0, 1]), np.array([0.0, 1.0]), np.array([], dtype=np.int64)],
)
def test_ids_outside_the_vocabulary_are_refused(ids):
    full, y, _ = sample()
    bound = bind_ids(spec_of("DP"), ids=full, names=NAMES, y=y)
    with pytest.raises(UserError, match="Group ids"):
        bound.with_ids(ids)
