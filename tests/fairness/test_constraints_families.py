"""Families of papers 000 (group losses), 001 (sigmoid rate gaps, intersectional hinge), 004 (AUC gaps)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from engine.errors import UserError
from engine.fairness.constraints import (
    ConstraintSpec,
    bind,
    empirical_auc,
    square_pair_loss,
)
from engine.fairness.families import FAMILIES
from engine.pairwise import lemma1_terms

torch.set_default_dtype(torch.float64)


def labelled(seed=0, n=240, n_groups=3):
    rng = np.random.default_rng(seed)
    groups = np.arange(n) % n_groups
    rng.shuffle(groups)
    y = (rng.random(n) < 0.3 + 0.15 * groups).astype(int)
    y[: 2 * n_groups] = np.repeat([0, 1], n_groups)
    groups[: 2 * n_groups] = np.tile(np.arange(n_groups), 2)
    scores = rng.normal(size=n) + 0.8 * y + 0.3 * groups
    return scores, groups, y


def bce(s, y):
    return np.log1p(np.exp(-s)) * y + np.log1p(np.exp(s)) * (1 - y)


# ---- paper 000 ----------------------------------------------------------------------------------
def test_group_loss_vs_mean_rows_follow_eq_4():
    scores, groups, y = labelled()
    delta = 0.03
    c = bind(ConstraintSpec("group_loss_gap", delta, pairs="vs_mean"), groups=groups, y=y)
    losses = np.array([bce(scores[groups == k], y[groups == k]).mean() for k in range(3)])
    gaps = losses - losses.mean()
    rows = c.named(c.surrogate(torch.as_tensor(scores)))
    assert len(rows) == 2 * 3
    for k in range(3):
        assert rows[f"loss[{k}-mean]:upper"] == pytest.approx(gaps[k] - delta, abs=1e-12)
        assert rows[f"loss[{k}-mean]:lower"] == pytest.approx(-gaps[k] - delta, abs=1e-12)
    np.testing.assert_allclose(
        c.exact_rows(scores), c.surrogate(torch.as_tensor(scores)).numpy(), atol=1e-12
    )
    assert c.exact(scores) == pytest.approx(np.abs(gaps).max(), abs=1e-12)


def test_group_loss_pairs_rows_and_exact():
    scores, groups, y = labelled(1, n_groups=4)
    c = bind(ConstraintSpec("group_loss_gap", 0.05), groups=groups, y=y)
    losses = np.array([bce(scores[groups == k], y[groups == k]).mean() for k in range(4)])
    assert c.m == 4 * 3
    rows = c.named(c.surrogate(torch.as_tensor(scores)))
    for a, b in itertools.combinations(range(4), 2):
        assert rows[f"loss[{a},{b}]:upper"] == pytest.approx(
            losses[a] - losses[b] - 0.05, abs=1e-12
        )
        assert rows[f"loss[{a},{b}]:lower"] == pytest.approx(
            losses[b] - losses[a] - 0.05, abs=1e-12
        )
    assert c.exact(scores) == pytest.approx(np.ptp(losses), abs=1e-12)


def test_group_loss_gradcheck():
    scores, groups, y = labelled(2, n=30)
    for pairs in ("vs_mean", "all"):
        c = bind(ConstraintSpec("group_loss_gap", 0.05, pairs=pairs), groups=groups, y=y)
        h = torch.as_tensor(scores).requires_grad_(True)
        assert torch.autograd.gradcheck(c.surrogate, (h,))


# ---- paper 001 ----------------------------------------------------------------------------------
def rate(scores, mask, threshold=0.0):
    return np.mean(scores[mask] > threshold)


def test_dp_sigmoid_rows_are_the_smoothed_gap_of_eq_15():
    scores, groups, y = labelled(3, n_groups=2)
    c = bind(ConstraintSpec("DP", 0.02, surrogate="sigmoid"), groups=groups)
    s = [1 / (1 + np.exp(-scores[groups == k])) for k in (0, 1)]
    gap = s[0].mean() - s[1].mean()
    np.testing.assert_allclose(
        c.surrogate(torch.as_tensor(scores)).numpy(), [gap - 0.02, -gap - 0.02]
    )


@pytest.mark.parametrize("fam", ["DP", "EO", "EOpp"])
def test_rate_gaps_tend_to_indicator_gaps_and_match_the_exact_metric(fam):
    scores, groups, y = labelled(4)
    theta = 0.2
    kappa = 0.05
    errors = []
    for tau in (1.0, 1e-2, 1e-4, 1e-6):
        c = bind(
            ConstraintSpec(fam, kappa, surrogate="sigmoid", temperature=tau, threshold=theta),
            groups=groups,
            y=y,
        )
        errors.append(
            np.abs(c.surrogate(torch.as_tensor(scores)).numpy() - c.exact_rows(scores)).max()
        )
    assert all(b <= a for a, b in zip(errors, errors[1:], strict=False))
    assert errors[-1] < 1e-8 < 1e-3 < errors[0]
    cells = {"DP": [None], "EO": [1, 0], "EOpp": [1]}[fam]
    gaps = []
    for label in cells:
        for a, b in itertools.combinations(range(3), 2):
            ma = (groups == a) if label is None else (groups == a) & (y == label)
            mb = (groups == b) if label is None else (groups == b) & (y == label)
            gaps.append(rate(scores, ma, theta) - rate(scores, mb, theta))
    expected = np.stack([np.array(gaps) - kappa, -np.array(gaps) - kappa], axis=1).reshape(-1)
    np.testing.assert_allclose(c.exact_rows(scores), expected, atol=1e-12)
    assert c.exact(scores) == pytest.approx(np.abs(gaps).max(), abs=1e-12)


def test_eo_has_a_tpr_and_an_fpr_row_per_pair_and_side():
    scores, groups, y = labelled(5, n_groups=2)
    c = bind(ConstraintSpec("EO", 0.1, surrogate="sigmoid"), groups=groups, y=y)
    assert c.rows == (
        "EO[0,1;y=1]:upper",
        "EO[0,1;y=1]:lower",
        "EO[0,1;y=0]:upper",
        "EO[0,1;y=0]:lower",
    )


def test_eo_needs_both_labels_in_every_group():
    scores, groups, y = labelled(6, n_groups=2)
    y = np.where(groups == 1, 1, y)
    with pytest.raises(UserError, match="y = 0"):
        bind(ConstraintSpec("EO", 0.1), groups=groups, y=y)


def test_rate_gap_gradcheck():
    scores, groups, y = labelled(7, n=36)
    c = bind(ConstraintSpec("EO", 0.1, surrogate="sigmoid", temperature=0.6), groups=groups, y=y)
    h = torch.as_tensor(scores).requires_grad_(True)
    assert torch.autograd.gradcheck(c.surrogate, (h,))
    for part in (c.dc.plus, c.dc.minus):
        assert torch.autograd.gradcheck(lambda hh, f=part: f(hh), (h,))


def test_intersectional_hinge_is_eq_18():
    rng = np.random.default_rng(8)
    n = 300
    attrs = np.stack([rng.integers(0, 2, n), rng.integers(0, 3, n)], axis=1)
    y = rng.integers(0, 2, n)
    scores = rng.normal(size=n)
    c = bind(ConstraintSpec("intersectional_hinge", 0.1), groups=attrs, y=y)
    ypm = 2 * y - 1
    hinge = np.maximum(1 - ypm * scores, 0)
    keys = sorted(set(map(tuple, attrs.tolist())))
    assert c.m == len(keys) == 6
    rows = c.named(c.surrogate(torch.as_tensor(scores)))
    for key in keys:
        mask = np.all(attrs == key, axis=1)
        assert rows[f"hinge[{key[0]}|{key[1]}-all]"] == pytest.approx(
            hinge[mask].mean() - hinge.mean() - 0.1
        )
    assert c.exact(scores) == pytest.approx(max(rows.values()) + 0.1)


# ---- paper 004 ----------------------------------------------------------------------------------
def pair_mean(ha, hb, c1, c2):
    return float(np.mean(c1 * (ha[:, None] - hb[None, :] - c2) ** 2))


def brute_auc(ha, hb):
    d = ha[:, None] - hb[None, :]
    return float(np.mean((d > 0) + 0.5 * (d == 0)))


def test_square_pair_loss_is_the_pairwise_mean():
    rng = np.random.default_rng(9)
    ha, hb = rng.normal(size=17), rng.normal(size=29) + 0.5
    for c1, c2 in ((1.0, 1.0), (0.5, 1.0), (2.0, 0.3)):
        got = square_pair_loss(torch.as_tensor(ha), torch.as_tensor(hb), c1, c2).item()
        assert got == pytest.approx(pair_mean(ha, hb, c1, c2), rel=1e-12)


@pytest.mark.parametrize("c1", [1.0, 0.5, 2.0])
def test_lemma_1_terms_recover_the_pair_loss_at_the_saddle(c1):
    rng = np.random.default_rng(10)
    n = 60
    h = rng.normal(size=n)
    in_a = rng.random(n) < 0.4
    in_b = ~in_a
    c2 = 1.0
    ma, mb = h[in_a].mean(), h[in_b].mean()
    weight_a, weight_b = (in_a / in_a.mean())[:, None], (in_b / in_b.mean())[:, None]

    def mean_terms(a: float, b: float, alpha: float):
        t = lemma1_terms(
            h, weight_a, weight_b, np.array([a]), np.array([b]), np.array([c1]), np.array([c2])
        )
        value = float(np.mean(t.F + alpha * t.G) - alpha**2)
        slopes = (np.mean(t.dF_da), np.mean(t.dF_db), float(np.mean(t.G)) - 2 * alpha)
        return value, slopes

    alpha = np.sqrt(c1) * (ma - mb)
    value, slopes = mean_terms(ma, mb, alpha)
    assert value == pytest.approx(pair_mean(h[in_a], h[in_b], c1, c2), rel=1e-12)
    assert np.all(np.abs(slopes) < 1e-12)
    # a saddle: moving α lowers the value, moving a or b raises it
    for da, db, dal, sign in ((0.1, 0, 0, 1), (0, -0.1, 0, 1), (0, 0, 0.1, -1)):
        moved, _ = mean_terms(ma + da, mb + db, alpha + dal)
        assert sign * (moved - value) > 0


@pytest.mark.parametrize("variant", ["group", "inter", "intra"])
def test_auc_surrogate_rows_follow_eq_4_to_6(variant):
    scores, groups, y = labelled(11, n=150, n_groups=2)
    c1, c2, kappa = 0.5, 1.0, 0.1
    c = bind(
        ConstraintSpec("auc_gap", kappa, options={"variant": variant, "c1": c1, "c2": c2}),
        groups=groups,
        y=y,
    )
    p, u = groups == 0, groups == 1
    pos, neg = y == 1, y == 0
    s = scores
    g1, g1p, g2, g2p = {
        "group": (s[p], s[u], s, s),
        "inter": (s[p & pos], s[u & neg], s[u & pos], s[p & neg]),
        "intra": (s[p & pos], s[p & neg], s[u & pos], s[u & neg]),
    }[variant]
    upper = pair_mean(g1p, g1, c1, c2) + pair_mean(g2, g2p, c1, c2) - 1 - kappa
    lower = pair_mean(g2p, g2, c1, c2) + pair_mean(g1, g1p, c1, c2) - 1 - kappa
    np.testing.assert_allclose(
        c.surrogate(torch.as_tensor(scores)).numpy(), [upper, lower], rtol=1e-12
    )
    auc1 = brute_auc(g1, g1p)
    auc2 = 0.5 if variant == "group" else brute_auc(g2, g2p)
    np.testing.assert_allclose(
        c.exact_rows(scores), [auc1 - auc2 - kappa, auc2 - auc1 - kappa], atol=1e-12
    )
    assert c.exact(scores) == pytest.approx(abs(auc1 - auc2), abs=1e-12)


def test_empirical_auc_counts_ties_as_half():
    rng = np.random.default_rng(12)
    ha = rng.integers(-3, 4, size=40) / 2
    hb = rng.integers(-3, 4, size=25) / 2
    assert empirical_auc(ha, hb) == pytest.approx(brute_auc(ha, hb), abs=1e-14)


def test_auc_rows_are_convex_in_the_scores_and_gradcheck():
    scores, groups, y = labelled(13, n=40, n_groups=2)
    c = bind(ConstraintSpec("auc_gap", 0.1, options={"variant": "inter"}), groups=groups, y=y)
    h = torch.as_tensor(scores).requires_grad_(True)
    assert torch.autograd.gradcheck(c.surrogate, (h,))
    hess = torch.autograd.functional.hessian(lambda hh: c.surrogate(hh)[0], h.detach())
    assert torch.linalg.eigvalsh(hess).min() > -1e-12


def test_auc_needs_positives_and_negatives_in_each_group():
    scores, groups, y = labelled(14, n_groups=2)
    y = np.where(groups == 0, 1, y)
    with pytest.raises(UserError, match="positive and negative"):
        bind(ConstraintSpec("auc_gap", 0.1, options={"variant": "intra"}), groups=groups, y=y)


@pytest.mark.parametrize("bad", [{"c1": 0.0}, {"c2": -1.0}, {"c1": "x"}])
def test_auc_rejects_bad_square_loss_constants(bad):
    scores, groups, y = labelled(15, n_groups=2)
    with pytest.raises(UserError, match="c1|c2"):
        bind(ConstraintSpec("auc_gap", 0.1, options=bad), groups=groups, y=y)


def test_a_family_whose_kappa_bounds_a_surrogate_names_a_kappa_on_that_scale():
    """κ on a surrogate's scale (paper 003's quadratic AUC rows) needs a κ of its own for a run
    that would take the typical one; a family on the exact quantity's scale has none."""
    for family in FAMILIES.values():
        assert bool(family.kappa_scale) == (family.surrogate_kappa is not None), family.name
