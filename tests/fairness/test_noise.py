"""The standard error σ of a family's exact value on a split (`engine.fairness.noise`), against
simulation: two groups drawn many times from the same distribution, the exact engine metric
computed on each draw. Their difference has mean zero, so its root mean square is its SE."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from engine.fairness import demographic_parity_gap, equal_opportunity_gap, pdp, psp
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.noise import proportion_gap_se, value_noise

SMALL, LARGE = 300, 600
DRAWS = 2000
GROUPS = np.repeat([0, 1], [SMALL, LARGE])


def _rms(values: list[float]) -> float:
    return float(np.sqrt(np.mean(np.square(values))))


def _draws(metric, draws: int = DRAWS) -> list[float]:
    rng = np.random.default_rng(0)
    return [metric(rng.normal(size=GROUPS.size)) for _ in range(draws)]


def _above(p: float) -> float:
    """The threshold a standard normal score exceeds with probability p."""
    return NormalDist().inv_cdf(1.0 - p)


@pytest.mark.parametrize("p", [0.15, 0.3, 0.5])
def test_the_se_of_a_clipped_rank_difference_at_p_matches_the_formula(p):
    alpha, beta = 0.05, 0.6  # p well inside I: the clipping does not bite
    simulated = _rms(_draws(lambda h: pdp(h, GROUPS, alpha, beta, threshold=_above(p))))
    formula = proportion_gap_se(p, SMALL, LARGE) / (beta - alpha)
    assert simulated == pytest.approx(formula, rel=0.15)


def test_the_dp_gap_at_an_even_rate_has_the_se_value_noise_gives():
    simulated = _rms(_draws(lambda h: demographic_parity_gap(h, GROUPS, threshold=0.0)))
    sigma = value_noise(ConstraintSpec("DP", 0.1), GROUPS, None)
    assert simulated == pytest.approx(sigma, rel=0.15)


def test_equal_opportunity_counts_only_the_positive_labels():
    y = np.random.default_rng(1).integers(0, 2, GROUPS.size)
    simulated = _rms(_draws(lambda h: equal_opportunity_gap(h, GROUPS, y, threshold=0.0)))
    sigma = value_noise(ConstraintSpec("EOpp", 0.1), GROUPS, y)
    assert simulated == pytest.approx(sigma, rel=0.15)
    positives = np.bincount(GROUPS[y == 1])
    assert sigma == pytest.approx(proportion_gap_se(0.5, *positives))
    negatives = np.bincount(GROUPS[y == 0])
    odds = value_noise(ConstraintSpec("EO", 0.1), GROUPS, y)
    assert odds == pytest.approx(max(sigma, proportion_gap_se(0.5, *negatives)))


def test_psp_takes_the_noisiest_rank_of_its_interval_and_the_two_smallest_groups():
    three = np.repeat([0, 1, 2], [SMALL, 5000, LARGE])
    top = value_noise(ConstraintSpec("pSP", 0.1, (0.05, 0.3)), three, None)
    assert top == pytest.approx(proportion_gap_se(0.3, SMALL, LARGE) / 0.25)
    middle = value_noise(ConstraintSpec("pSP", 0.1, (0.2, 0.8)), three, None)
    assert middle == pytest.approx(proportion_gap_se(0.5, SMALL, LARGE) / 0.6)
    assert value_noise(ConstraintSpec("pDP", 0.1, (0.05, 0.3)), three, None) == top


def test_groups_that_do_not_differ_rarely_show_psp_above_twice_sigma():
    alpha, beta = 0.05, 0.3
    sigma = value_noise(ConstraintSpec("pSP", 0.1, (alpha, beta)), GROUPS, None)
    values = np.array(_draws(lambda h: psp(h, GROUPS, alpha, beta), draws=400))
    assert np.mean(values) > 0.5 * sigma  # the largest gap over thresholds sits above zero
    assert 0.02 < np.mean(values > 2 * sigma) < 0.2


def test_no_sigma_for_a_family_that_is_no_difference_of_shares_or_a_single_group():
    assert value_noise(ConstraintSpec("group_loss_gap", 0.1, pairs="vs_mean"), GROUPS, None) is None
    assert value_noise(ConstraintSpec("DP", 0.1), np.zeros(50, dtype=np.int64), None) is None
    assert value_noise(ConstraintSpec("EOpp", 0.1), GROUPS, None) is None  # no labels given
