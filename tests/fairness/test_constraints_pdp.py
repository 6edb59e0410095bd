"""pDP model (21) of paper 003: clipped rates, Lemma 5.2, the DC split of eq. (84) with the mean."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec, bind

torch.set_default_dtype(torch.float64)

pytestmark = pytest.mark.filterwarnings("ignore::engine.fairness.constraints.TinyBandWarning")


def brute_pdp(scores, groups, alpha, beta, threshold=0.0):
    """max over pairs of |clip(P_k) − clip(P_k')| / (β − α) (paper 003, eq. 10–11 with eq. 62)."""
    clipped = [
        (min(max(np.mean(scores[groups == k] > threshold), alpha), beta) - alpha) / (beta - alpha)
        for k in np.unique(groups)
    ]
    return max(clipped) - min(clipped)


def data(seed=0, n=300, n_groups=3, shift=0.4):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, n_groups, size=n)
    groups[:n_groups] = np.arange(n_groups)
    return rng.normal(size=n) + shift * groups, groups


def test_rows_are_two_per_pair():
    scores, groups = data()
    c = bind(ConstraintSpec("pDP", 0.1, (0.1, 0.4)), groups=groups)
    assert c.rows == tuple(
        f"pDP[{a},{b}]:{s}" for a, b in ((0, 1), (0, 2), (1, 2)) for s in ("upper", "lower")
    )


def test_zero_scores_are_feasible():
    scores, groups = data()
    for surrogate in ("ramp", "sigmoid"):
        c = bind(ConstraintSpec("pDP", 0.01, (0.0, 0.3), surrogate=surrogate), groups=groups)
        assert torch.all(c.surrogate(torch.zeros(scores.size)) <= 0)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("interval", [(0.0, 1.0), (0.1, 0.4), (0.6, 0.9)])
def test_exact_rows_are_lemma_5_2_and_match_the_exact_metric(seed, interval):
    scores, groups = data(seed)
    alpha, beta = interval
    kappa = 0.2
    c = bind(ConstraintSpec("pDP", kappa, interval, threshold=0.3), groups=groups)
    expected = brute_pdp(scores, groups, alpha, beta, threshold=0.3)
    assert c.exact(scores) == pytest.approx(expected, abs=1e-12)
    # the largest exact row is (β − α)(pDP − κ): rows ≤ 0 exactly when pDP ≤ κ
    assert c.exact_rows(scores).max() == pytest.approx(
        (beta - alpha) * (expected - kappa), abs=1e-12
    )


def test_sigmoid_surrogate_tends_to_the_exact_rows():
    scores, groups = data(7)
    indicator = np.array([np.mean(scores[groups == k] > 0) for k in range(3)])
    errors, row_errors = [], []
    for tau in (1.0, 1e-1, 1e-2, 1e-4):
        c = bind(
            ConstraintSpec("pDP", 0.1, (0.1, 0.5), surrogate="sigmoid", temperature=tau),
            groups=groups,
        )
        errors.append(np.abs(c.rates(torch.as_tensor(scores)).numpy() - indicator).max())
        row_errors.append(
            np.abs(c.surrogate(torch.as_tensor(scores)).numpy() - c.exact_rows(scores)).max()
        )
    assert all(b < a for a, b in zip(errors, errors[1:], strict=False))
    assert errors[-1] < 1e-8 < errors[0]
    assert row_errors[-1] < 1e-8 < row_errors[0]


def test_ramp_equals_the_exact_rows_when_no_score_is_near_the_threshold():
    scores, groups = data(8)
    scores = np.where(scores > 0, scores + 1.0, scores - 1.0)  # |h − θ̂| > 1 ≥ τ/2
    c = bind(ConstraintSpec("pDP", 0.1, (0.0, 0.5), temperature=2.0), groups=groups)
    np.testing.assert_allclose(
        c.surrogate(torch.as_tensor(scores)).numpy(), c.exact_rows(scores), atol=1e-14
    )


def test_dc_parts_use_group_means_not_sums():
    # eq. (84) prints Σσ⁺ without 1/n_k; with it the parts would not add up to the constraint
    scores, groups = data(9, n=500, n_groups=2)
    c = bind(ConstraintSpec("pDP", 0.1, (0.2, 0.6)), groups=groups)
    h = torch.as_tensor(scores)
    a_plus = torch.stack([torch.relu(h[torch.as_tensor(groups == k)] + 0.5).mean() for k in (0, 1)])
    a_minus = torch.stack(
        [torch.relu(h[torch.as_tensor(groups == k)] - 0.5).mean() for k in (0, 1)]
    )
    m_a = torch.maximum(a_minus + 0.2, a_plus)
    m_b = torch.maximum(a_minus + 0.6, a_plus)
    torch.testing.assert_close(c.dc.plus(h), torch.stack([m_a[0] + m_b[1], m_a[1] + m_b[0]]))
    torch.testing.assert_close(
        c.dc.minus(h), torch.stack([m_b[0] + m_a[1], m_b[1] + m_a[0]]) + 0.1 * 0.4
    )


def test_sigmoid_rows_pass_gradcheck():
    scores, groups = data(10, n=30)
    c = bind(
        ConstraintSpec("pDP", 0.1, (0.0, 1.0), surrogate="sigmoid", temperature=0.5), groups=groups
    )
    h = torch.as_tensor(scores).requires_grad_(True)
    # keep the clipped rates off the kinks at α and β, where min{s, c} is not differentiable
    s = c.rates(h.detach())
    assert torch.all((s - 0.0).abs() > 1e-3) and torch.all((s - 1.0).abs() > 1e-3)
    assert torch.autograd.gradcheck(c.surrogate, (h,))


def test_pairs_other_than_all_are_refused():
    _, groups = data()
    with pytest.raises(UserError, match="pairs"):
        bind(ConstraintSpec("pDP", 0.1, (0.0, 0.5), pairs="vs_rest"), groups=groups)


def test_tiny_rank_band_warns():
    from engine.fairness.constraints import TinyBandWarning

    groups = np.repeat([0, 1], [500, 40])
    with pytest.warns(TinyBandWarning, match="pDP"):
        bind(ConstraintSpec("pDP", 0.5, (0.0, 0.2)), groups=groups)  # 0.1 · 40 = 4 samples
    with pytest.warns(TinyBandWarning, match="0.8 samples"):
        # pDP can still hold with a band under one sample (equal clipped rates), so no error
        bind(ConstraintSpec("pDP", 0.1, (0.0, 0.2)), groups=groups)  # 0.02 · 40 = 0.8 samples
