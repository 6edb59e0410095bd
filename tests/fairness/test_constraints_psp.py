"""pSP model (15) of paper 003: grid, feasible start, surrogate vs. indicator, exact metric."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from engine.errors import UserError
from engine.fairness.constraints import (
    ConstraintSpec,
    PSPConstraint,
    Surrogate,
    TinyBandWarning,
    VacuousConstraintWarning,
    bind,
    group_mean_relu,
    mean_relu,
    psp_grid,
)

torch.set_default_dtype(torch.float64)


def brute_psp(scores: np.ndarray, groups: np.ndarray, alpha: float, beta: float) -> float:
    """max over pairs and thresholds of the clipped-rank gap (paper 003, eq. 6–7 with eq. 62)."""
    labels = np.unique(groups)
    thetas = [-np.inf, *sorted(set(scores.tolist()))]
    best = 0.0
    for theta in thetas:
        cond = []
        for k in labels:
            rank = np.mean(scores[groups == k] > theta)
            cond.append((min(max(rank, alpha), beta) - alpha) / (beta - alpha))
        best = max(best, max(cond) - min(cond))
    return best


def two_groups(seed: int, n: int = 200, shift: float = 0.7):
    rng = np.random.default_rng(seed)
    groups = np.repeat([0, 1], n // 2)
    scores = rng.normal(size=n) + shift * groups
    return scores, groups


def quiet_bind(spec, groups, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TinyBandWarning)
        return bind(spec, groups=groups, y=y)


# ---- grid -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "alpha, beta, kappa, size", [(0.0, 0.2, 0.1, 10), (0.05, 0.3, 0.05, 7), (0.7, 1.0, 0.5, 3)]
)
def test_inside_grid_is_equally_spaced_in_lemma_5_1_range(alpha, beta, kappa, size):
    grid = psp_grid(alpha, beta, kappa, size, "inside")
    top = beta - kappa * (beta - alpha)
    assert grid.size == size
    assert grid[0] == pytest.approx(alpha)
    assert np.all(grid < top) and np.all(grid >= alpha)
    steps = np.diff(grid)
    np.testing.assert_allclose(steps, (top - alpha) / size)


def test_literal_grid_is_equally_spaced_in_the_interval():
    grid = psp_grid(0.05, 0.3, 0.1, 10, "literal")
    np.testing.assert_allclose(grid, 0.05 + 0.025 * np.arange(10))


def test_kappa_one_leaves_no_rows_and_says_so():
    scores, groups = two_groups(0)
    with pytest.warns(VacuousConstraintWarning, match="no rows"):
        c = bind(ConstraintSpec("pSP", 1.0, (0.0, 0.5)), groups=groups)
    assert c.m == 0
    assert c.surrogate(torch.as_tensor(scores), c.aux_init()).shape == (0,)


def test_rows_are_per_grid_point_group_and_side():
    scores, groups = two_groups(0)
    c = bind(ConstraintSpec("pSP", 0.1, (0.0, 0.5), grid_size=5), groups=groups)
    assert c.m == 2 * 5 * 2
    assert c.rows[0] == "pSP[p=0,g=0]:lower"
    assert c.rows[3] == "pSP[p=0,g=1]:upper"
    assert c.rows[4] == "pSP[p=0.09,g=0]:lower"


# ---- tiny band --------------------------------------------------------------------------------
def test_tiny_band_warns_and_a_sub_sample_band_raises():
    groups = np.repeat([0, 1], [400, 30])
    with pytest.warns(TinyBandWarning, match="group '1'"):
        bind(ConstraintSpec("pSP", 0.5, (0.0, 0.2)), groups=groups)  # 0.1 · 30 = 3 samples
    with pytest.raises(UserError, match="at least\\s+one"):
        bind(ConstraintSpec("pSP", 0.1, (0.0, 0.2)), groups=groups)  # 0.02 · 30 = 0.6 samples
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bind(ConstraintSpec("pSP", 0.5, (0.0, 0.8)), groups=groups)  # 0.4 · 30 = 12 samples


# ---- feasible start -----------------------------------------------------------------------------
@pytest.mark.parametrize("surrogate", ["ramp", "sigmoid"])
@pytest.mark.parametrize("temperature", [0.1, 1.0, 3.0])
@pytest.mark.parametrize(
    "interval, kappa, grid",
    [
        ((0.0, 0.2), 0.1, "inside"),
        ((0.05, 0.3), 0.01, "inside"),
        ((0.7, 1.0), 0.2, "literal"),
        ((0.0, 1.0), 0.9, "literal"),
    ],
)
def test_initial_theta_satisfies_every_row_at_zero_scores(
    surrogate, temperature, interval, kappa, grid
):
    groups = np.repeat([0, 1, 2], [500, 800, 600])
    spec = ConstraintSpec(
        "pSP", kappa, interval, surrogate=surrogate, temperature=temperature, grid=grid
    )
    c = quiet_bind(spec, groups)
    zeros = torch.zeros(groups.size)
    g = c.surrogate(zeros, c.aux_init())
    assert torch.all(g <= 1e-12), c.named(g)
    assert torch.all(c.dc.plus(zeros, c.aux_init()) - c.dc.minus(zeros, c.aux_init()) <= 1e-12)


def test_initial_theta_for_the_ramp_is_the_spec_formula():
    # spec 003 §6.2.1: θ_p = ½ − p − κ(β − α)/2 for τ = 1
    c = bind(ConstraintSpec("pSP", 0.1, (0.05, 0.3)), groups=np.repeat([0, 1], 1000))
    expected = 0.5 - c.grid - 0.1 * 0.25 / 2
    np.testing.assert_allclose(c.aux_init()["theta"].numpy(), expected, atol=1e-15)


def test_initial_theta_follows_constant_scores():
    groups = np.repeat([0, 1], 300)
    c = bind(ConstraintSpec("pSP", 0.2, (0.0, 0.5), surrogate="sigmoid"), groups=groups)
    h = torch.full((600,), 2.5)
    aux = c.aux_init(h)
    assert torch.all(c.surrogate(h, aux) <= 1e-12)
    torch.testing.assert_close(aux["theta"], c.aux_init()["theta"] + 2.5)


@pytest.mark.parametrize("surrogate", ["ramp", "sigmoid"])
def test_initial_theta_is_feasible_when_groups_share_their_scores(surrogate):
    rng = np.random.default_rng(5)
    base = rng.normal(size=300)
    scores = np.concatenate([base, base, rng.permutation(base)])
    groups = np.repeat([0, 1, 2], 300)
    c = bind(
        ConstraintSpec("pSP", 0.05, (0.1, 0.5), surrogate=surrogate, temperature=0.3), groups=groups
    )
    h = torch.as_tensor(scores)
    assert torch.all(c.surrogate(h, c.aux_init(h)) <= 1e-9)
    # a θ that ignores the scores is not feasible here, so the check above has teeth
    assert torch.any(c.surrogate(h, c.aux_init()) > 0)


# ---- surrogate versus indicator -----------------------------------------------------------------
def test_sigmoid_rates_converge_to_indicator_rates():
    scores, groups = two_groups(1)
    h = torch.as_tensor(scores)
    rng = np.random.default_rng(2)
    theta = {"theta": torch.as_tensor(rng.uniform(-1.0, 2.0, size=10))}
    errors = []
    for tau in (1.0, 0.1, 1e-2, 1e-3, 1e-5):
        c = bind(
            ConstraintSpec("pSP", 0.2, (0.0, 0.5), surrogate="sigmoid", temperature=tau),
            groups=groups,
        )
        errors.append(np.abs(c.surrogate(h, theta).numpy() - c.exact_rows(h, theta)).max())
    assert all(b < a for a, b in zip(errors, errors[1:], strict=False))
    assert errors[-1] < 1e-6
    assert errors[0] > 1e-2


def test_ramp_equals_indicator_on_well_separated_scores():
    rng = np.random.default_rng(3)
    groups = np.repeat([0, 1], [60, 90])
    levels = np.arange(12) * 10.0
    scores = np.concatenate(
        [rng.choice(levels, 60), rng.choice(levels, 90, p=np.linspace(1, 2, 12) / 18)]
    )
    h = torch.as_tensor(scores)
    c = bind(ConstraintSpec("pSP", 0.3, (0.0, 0.8), grid_size=8, temperature=2.0), groups=groups)
    theta = {
        "theta": torch.as_tensor(rng.choice(levels + 5.0, size=8))
    }  # midpoints, ≥ 5 from any score
    np.testing.assert_allclose(c.surrogate(h, theta).numpy(), c.exact_rows(h, theta), atol=1e-12)


def test_surrogate_feasibility_implies_lemma_5_1_condition_on_separated_scores():
    rng = np.random.default_rng(4)
    levels = np.arange(20) * 4.0
    groups = np.repeat([0, 1], 200)
    scores = np.concatenate([rng.choice(levels, 200), rng.choice(levels, 200)])
    h = torch.as_tensor(scores)
    c = bind(ConstraintSpec("pSP", 0.5, (0.0, 1.0), grid_size=6), groups=groups)
    candidates = levels + 2.0
    found = 0
    for theta in rng.choice(candidates, size=(400, 6)):
        aux = {"theta": torch.as_tensor(theta)}
        if torch.all(c.surrogate(h, aux) <= 0):
            found += 1
            assert np.all(c.exact_rows(h, aux) <= 1e-12)
    assert found > 0


def test_exact_rows_are_the_indicator_rates():
    scores, groups = two_groups(6, n=100)
    h = torch.as_tensor(scores)
    c = bind(ConstraintSpec("pSP", 0.2, (0.0, 0.5), grid_size=3), groups=groups)
    theta = torch.tensor([0.1, 0.4, -0.3])
    rows = c.named(c.exact_rows(h, {"theta": theta}))
    band = 0.2 * 0.5
    for i, p in enumerate(c.grid):
        for k in (0, 1):
            rate = np.mean(scores[groups == k] > theta[i].item())
            assert rows[f"pSP[p={p:.6g},g={k}]:lower"] == pytest.approx(p - rate)
            assert rows[f"pSP[p={p:.6g},g={k}]:upper"] == pytest.approx(rate - p - band)


# ---- bucketed sums versus the direct form ------------------------------------------------
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("n_groups", [1, 3])
def test_bucketed_means_equal_direct_means_with_gradients(ties, n_groups):
    rng = np.random.default_rng(7)
    raw = rng.integers(-4, 5, size=80) / 2.0 if ties else rng.normal(size=80)
    codes = torch.as_tensor(np.arange(80) % n_groups)
    h1 = torch.as_tensor(raw).requires_grad_(True)
    h2 = torch.as_tensor(raw).requires_grad_(True)
    cuts_np = np.concatenate([rng.normal(size=10), raw[:5], [raw.min() - 1, raw.max() + 1]])
    c1 = torch.as_tensor(cuts_np).requires_grad_(True)
    c2 = torch.as_tensor(cuts_np).requires_grad_(True)
    a = group_mean_relu(h1, c1, codes, n_groups, "bucketed")
    b = group_mean_relu(h2, c2, codes, n_groups, "direct")
    brute = [
        [np.maximum(raw[np.arange(80) % n_groups == k] - c, 0).mean() for c in cuts_np]
        for k in range(n_groups)
    ]
    np.testing.assert_allclose(b.detach().numpy(), brute, rtol=0, atol=1e-13)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-13)
    if n_groups == 1:
        torch.testing.assert_close(mean_relu(h1, c1), a[0])
    w = torch.as_tensor(rng.normal(size=a.shape))
    (a * w).sum().backward()
    (b * w).sum().backward()
    torch.testing.assert_close(h1.grad, h2.grad, rtol=0, atol=1e-13)
    torch.testing.assert_close(c1.grad, c2.grad, rtol=0, atol=1e-13)


def test_psp_rows_do_not_depend_on_the_mean_method():
    scores, groups = two_groups(8)
    h = torch.as_tensor(scores)
    rows = []
    for method in ("bucketed", "direct"):
        spec = ConstraintSpec(
            "pSP", 0.1, (0.0, 0.5), temperature=0.4, options={"mean_method": method}
        )
        c = bind(spec, groups=groups)
        aux = c.aux_init(h)
        rows.append((c.surrogate(h, aux), c.dc.minus_linearization(h, aux).d_scores))
    torch.testing.assert_close(rows[0][0], rows[1][0], rtol=0, atol=1e-13)
    torch.testing.assert_close(rows[0][1], rows[1][1], rtol=0, atol=1e-13)


# ---- gradients --------------------------------------------------------------------------------
def test_sigmoid_rows_pass_gradcheck():
    scores, groups = two_groups(9, n=40)
    c = bind(
        ConstraintSpec("pSP", 0.5, (0.0, 0.5), grid_size=3, surrogate="sigmoid", temperature=0.5),
        groups=groups,
    )
    h = torch.as_tensor(scores).requires_grad_(True)
    theta = torch.tensor([0.0, 0.3, -0.2], requires_grad=True)
    assert torch.autograd.gradcheck(lambda hh, tt: c.surrogate(hh, {"theta": tt}), (h, theta))
    for part in (c.dc.plus, c.dc.minus):
        assert torch.autograd.gradcheck(lambda hh, tt, f=part: f(hh, {"theta": tt}), (h, theta))


def test_ramp_subgradient_matches_the_masks_of_spec_6_2_4():
    # ∂ mean_k σ⁺((h − θ)/τ) / ∂h_i = 1[(h_i − θ)/τ + ½ > 0] / (τ n_k) for i in group k
    scores, groups = two_groups(10, n=50)
    tau = 0.8
    c = bind(ConstraintSpec("pSP", 0.5, (0.0, 0.5), grid_size=2, temperature=tau), groups=groups)
    h = torch.as_tensor(scores)
    theta = torch.tensor([0.2, -0.1])
    lin = c.dc.minus_linearization(h, {"theta": theta})
    rows = {name: i for i, name in enumerate(c.rows)}
    for j, p in enumerate(c.grid):
        for k in (0, 1):
            in_k = groups == k
            z = (scores - theta[j].item()) / tau
            lower = rows[f"pSP[p={p:.6g},g={k}]:lower"]  # f⁻ = mean σ⁺ − p
            upper = rows[f"pSP[p={p:.6g},g={k}]:upper"]  # f⁻ = mean σ⁻ + p + band
            np.testing.assert_allclose(
                lin.d_scores[lower].numpy(), in_k * (z + 0.5 > 0) / (tau * in_k.sum())
            )
            np.testing.assert_allclose(
                lin.d_scores[upper].numpy(), in_k * (z - 0.5 > 0) / (tau * in_k.sum())
            )
            d_theta = lin.d_aux["theta"][lower].numpy()
            assert d_theta[j] == pytest.approx(-lin.d_scores[lower].sum().item())
            assert np.count_nonzero(d_theta) <= 1


# ---- the exact metric ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_exact_is_the_partial_sp_of_paper_003(seed):
    rng = np.random.default_rng(seed)
    n_groups = 2 + seed % 3
    groups = rng.integers(0, n_groups, size=150)
    groups[:n_groups] = np.arange(n_groups)
    scores = (
        rng.integers(-6, 7, size=150) / 3.0 if seed % 2 else rng.normal(size=150) + 0.3 * groups
    )
    alpha, beta = [(0.0, 0.2), (0.05, 0.3), (0.7, 1.0), (0.0, 1.0)][seed % 4]
    c = quiet_bind(ConstraintSpec("pSP", 0.9, (alpha, beta)), groups)
    assert c.exact(scores) == pytest.approx(brute_psp(scores, groups, alpha, beta), abs=1e-12)


def test_exact_uses_group_labels_not_their_order():
    scores, groups = two_groups(11)
    c = bind(ConstraintSpec("pSP", 0.2, (0.1, 0.4)), groups=np.where(groups == 0, "b", "a"))
    assert c.exact(scores) == pytest.approx(brute_psp(scores, groups, 0.1, 0.4), abs=1e-12)
    assert c.exact(scores) > 0.1


def test_a_separated_model_violates_and_identical_groups_do_not():
    rng = np.random.default_rng(12)
    base = rng.normal(size=200)
    groups = np.repeat([0, 1], 200)
    c = bind(
        ConstraintSpec("pSP", 0.1, (0.0, 0.3), surrogate="sigmoid", temperature=0.01), groups=groups
    )
    fair = torch.as_tensor(np.concatenate([base, base]))
    unfair = torch.as_tensor(np.concatenate([base, base + 3.0]))
    assert torch.all(c.surrogate(fair, c.aux_init(fair)) <= 1e-9)
    assert torch.any(c.surrogate(unfair, c.aux_init(unfair)) > 0.05)
    assert c.exact(unfair.numpy()) > 0.1 >= c.exact(fair.numpy())


def test_psp_class_is_registered_and_rejects_pairs():
    groups = np.repeat([0, 1], 100)
    assert isinstance(bind(ConstraintSpec("pSP", 0.2, (0.0, 0.5)), groups=groups), PSPConstraint)
    with pytest.raises(UserError, match="pairs"):
        bind(ConstraintSpec("pSP", 0.2, (0.0, 0.5), pairs="vs_mean"), groups=groups)
    with pytest.raises(UserError, match="mean_method"):
        bind(ConstraintSpec("pSP", 0.2, (0.0, 0.5), options={"mean_method": "fast"}), groups=groups)


def test_surrogate_inverse_is_the_inverse():
    rates = torch.linspace(0.01, 0.99, 13)
    for name in ("ramp", "sigmoid"):
        s = Surrogate(name, 0.7)
        torch.testing.assert_close(s(s.inverse(rates)), rates)


@pytest.mark.parametrize("name", ["ramp", "sigmoid"])
def test_crossing_is_where_the_direct_mean_rate_meets_each_rate(name):
    rng = np.random.default_rng(11)
    h = torch.as_tensor(np.round(rng.normal(size=500), 1))  # rounded: many ties
    rates = torch.tensor([0.0005, 0.05, 0.3, 0.5, 0.77, 0.999])
    s = Surrogate(name, 0.4)
    theta = s.crossing(h, rates)
    direct = s(h[:, None] - theta[None, :]).mean(dim=0)
    torch.testing.assert_close(direct, rates.to(direct.dtype), atol=1e-9, rtol=0)
    # the mean decreases in the threshold: a little higher is below the rate, lower above it
    assert torch.all(s(h[:, None] - theta[None, :] - 1e-3).mean(dim=0) < rates)
    assert torch.all(s(h[:, None] - theta[None, :] + 1e-3).mean(dim=0) > rates)


def lemma_5_1_holds_on_grid(c, scores: np.ndarray) -> bool:
    """Whether every p in Î has one shared θ with all indicator rows satisfied (eq. 14)."""
    n_grid = c.grid.size
    candidates = np.concatenate([[scores.min() - 1.0], np.unique(scores)])
    thetas = torch.as_tensor(np.repeat(candidates[:, None], n_grid, axis=1))
    ok = np.zeros(n_grid, dtype=bool)
    for theta in thetas:
        rows = c.exact_rows(scores, {"theta": theta}).reshape(n_grid, -1)
        ok |= np.all(rows <= 1e-12, axis=1)
    return bool(ok.all())


def test_indicator_rows_feasible_on_the_grid_bound_the_exact_psp():
    # Lemma 5.1 on the grid: if (14) holds for every p in Î (spacing δ), then for every θ the
    # clipped ranks differ by at most κ(β − α) + δ, i.e. pSP ≤ κ + (1 − κ)/|Î| on the inside grid
    kappa, size, interval = 0.3, 10, (0.1, 0.6)
    held = failed = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n_groups = 2 + seed % 2
        groups = np.repeat(np.arange(n_groups), 150)
        scores = rng.normal(size=groups.size) + rng.uniform(0, 0.6) * groups
        if seed % 3 == 0:
            scores = np.round(scores * 2) / 2
        c = bind(ConstraintSpec("pSP", kappa, interval, grid_size=size), groups=groups)
        if lemma_5_1_holds_on_grid(c, scores):
            held += 1
            assert brute_psp(scores, groups, *interval) <= kappa + (1 - kappa) / size + 1e-12
            assert c.exact(scores) <= kappa + (1 - kappa) / size + 1e-12
        else:
            failed += 1
    assert held > 0 and failed > 0


@pytest.mark.parametrize("surrogate", ["ramp", "sigmoid"])
def test_single_row_subgradient_matches_autograd_of_that_row(surrogate):
    rng = np.random.default_rng(11)
    groups = rng.integers(0, 3, 300)
    spec = ConstraintSpec("pSP", 0.2, (0.1, 0.5), surrogate=surrogate, temperature=0.7)
    bound = bind(spec, groups=groups)
    scores = torch.from_numpy(rng.normal(0, 1.5, 300))
    aux = {"theta": torch.from_numpy(rng.normal(0, 1, bound.grid.size))}
    dc = bound.dc
    for row in range(bound.m):
        h = scores.clone().requires_grad_()
        theta = aux["theta"].clone().requires_grad_()
        dc.plus(h, {"theta": theta})[row].backward()
        closed = dc.plus_row_subgradient(scores, aux, row)
        d_scores = torch.zeros_like(scores).index_put_((closed.rows,), closed.d_scores)
        torch.testing.assert_close(d_scores, h.grad)
        torch.testing.assert_close(closed.d_aux["theta"], theta.grad)
