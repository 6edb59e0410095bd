import numpy as np
import pytest

from engine.data.split import strata_of, stratified_split
from engine.errors import UserError


def test_each_stratum_is_cut_in_the_requested_shares():
    rng = np.random.default_rng(1)
    groups = rng.integers(0, 4, 5000)
    labels = rng.integers(0, 2, 5000)
    strata = strata_of(groups, labels)
    split = stratified_split(strata, (0.6, 0.2, 0.2), seed=3)
    for stratum in np.unique(strata):
        members = split[strata == stratum]
        for part, share in enumerate((0.6, 0.2, 0.2)):
            assert abs((members == part).sum() - share * len(members)) < 1


def test_split_is_reproducible_and_seed_dependent():
    strata = np.repeat(np.arange(6), 100)
    first = stratified_split(strata, (0.5, 0.25, 0.25), seed=7)
    assert np.array_equal(first, stratified_split(strata, (0.5, 0.25, 0.25), seed=7))
    assert not np.array_equal(first, stratified_split(strata, (0.5, 0.25, 0.25), seed=8))


def test_tiny_strata_still_get_every_row_assigned():
    strata = np.array([0, 1, 1, 2, 2, 2])
    split = stratified_split(strata, (0.6, 0.2, 0.2), seed=0)
    assert set(split) <= {0, 1, 2} and len(split) == 6


@pytest.mark.parametrize(
    "fractions", [(0.5, 0.5), (0.6, 0.3, 0.3), (0.0, 0.5, 0.5), (1.2, -0.1, -0.1)]
)
def test_bad_fractions_are_refused(fractions):
    with pytest.raises(UserError):
        stratified_split(np.zeros(10, dtype=int), fractions, seed=0)
