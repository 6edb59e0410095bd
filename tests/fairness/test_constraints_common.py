"""Contract tests shared by every constraint family: registry, spec, binding, DC parts, invariances."""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pytest
import torch

from engine.errors import UserError
from engine.fairness.constraints import (
    BoundConstraint,
    ConstraintSpec,
    bind,
    family,
)
from engine.fairness.families import FAMILIES

torch.set_default_dtype(torch.float64)

N = 90
N_GROUPS = 3

SPECS = {
    "pSP-ramp": ConstraintSpec("pSP", 0.3, (0.1, 0.7), grid_size=4),
    "pSP-sigmoid": ConstraintSpec(
        "pSP", 0.3, (0.1, 0.7), surrogate="sigmoid", temperature=0.7, grid_size=4
    ),
    "pSP-literal": ConstraintSpec("pSP", 0.4, (0.0, 1.0), grid="literal", grid_size=5),
    "pDP-ramp": ConstraintSpec("pDP", 0.2, (0.2, 0.8), threshold=0.1),
    "pDP-sigmoid": ConstraintSpec("pDP", 0.2, (0.2, 0.8), surrogate="sigmoid", temperature=0.5),
    "loss-mean": ConstraintSpec("group_loss_gap", 0.05, pairs="vs_mean"),
    "loss-pairs": ConstraintSpec("group_loss_gap", 0.05, pairs="all"),
    "DP": ConstraintSpec("DP", 0.1, surrogate="sigmoid"),
    "DP-ramp": ConstraintSpec("DP", 0.1, surrogate="ramp", temperature=2.0),
    "EO": ConstraintSpec("EO", 0.1, surrogate="sigmoid"),
    "EOpp": ConstraintSpec("EOpp", 0.1, surrogate="sigmoid", threshold=-0.2),
    "hinge": ConstraintSpec("intersectional_hinge", 0.05),
    "auc-group": ConstraintSpec("auc_gap", 0.1),
    "auc-inter": ConstraintSpec("auc_gap", 0.1, options={"variant": "inter", "c1": 0.5}),
    "auc-intra": ConstraintSpec("auc_gap", 0.1, options={"variant": "intra", "c2": 0.7}),
}


def make_data(seed: int = 0, n: int = N, n_groups: int = N_GROUPS):
    rng = np.random.default_rng(seed)
    groups = np.arange(n) % n_groups
    rng.shuffle(groups)
    y = (np.arange(n) // n_groups) % 2
    rng.shuffle(y)
    x = rng.normal(size=(n, 4))
    x[:, 0] += 0.8 * groups
    return groups, y, torch.as_tensor(x)


def bound_for(key: str, groups, y) -> BoundConstraint:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bind(SPECS[key], groups=groups, y=y)


def random_aux(c: BoundConstraint, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(rng.normal(size=v.shape)) for k, v in c.aux_init().items()}


# ---- registry and spec ------------------------------------------------------------------------
def test_registry_names_map_to_their_classes():
    assert set(FAMILIES) == {
        "pSP",
        "pDP",
        "group_loss_gap",
        "DP",
        "EO",
        "EOpp",
        "intersectional_hinge",
        "auc_gap",
        "quad_group_auc",
        "quad_inter",
        "quad_intra",
    }
    for name in FAMILIES:
        assert family(name).family == name
    with pytest.raises(UserError, match="Unknown constraint family"):
        family("nope")
    with pytest.raises(TypeError):
        FAMILIES["x"] = FAMILIES["pSP"]  # type: ignore[index]


def test_spec_is_frozen_hashable_and_normalises_options():
    a = ConstraintSpec("auc_gap", 0.1, options={"variant": "inter", "c1": 0.5})
    b = ConstraintSpec("auc_gap", 0.1, options=(("c1", 0.5), ("variant", "inter")))
    assert a == b and hash(a) == hash(b)
    assert a.option("variant", "group") == "inter"
    assert a.option("missing", 3) == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.kappa = 0.2  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kappa": -0.1}, "kappa"),
        ({"kappa": float("nan")}, "kappa"),
        ({"interval": (0.5, 0.5)}, "α < β"),
        ({"interval": (-0.1, 0.5)}, "α < β"),
        ({"interval": (0.2, 1.5)}, "α < β"),
        ({"temperature": 0.0}, "temperature"),
        ({"grid_size": 0}, "grid_size"),
        ({"surrogate": "tanh"}, "surrogate"),
        ({"grid": "dense"}, "grid"),
        ({"pairs": "some"}, "pairs"),
        ({"options": (("a", 1), ("a", 2))}, "Repeated"),
    ],
)
def test_spec_rejects_bad_values(kwargs, match):
    args = {"family": "pSP", "kappa": 0.1, **kwargs}
    with pytest.raises(UserError, match=match):
        ConstraintSpec(**args)


@pytest.mark.parametrize("fam", ["pSP", "pDP"])
@pytest.mark.parametrize("kappa", [0.0, 1.5])
def test_kappa_outside_unit_interval_is_refused_for_paper_003(fam, kappa):
    groups, y, _ = make_data()
    with pytest.raises(UserError, match="κ"):
        bind(ConstraintSpec(fam, kappa, (0.0, 0.5)), groups=groups, y=y)


def test_bind_errors_are_user_errors():
    groups, y, _ = make_data()
    with pytest.raises(UserError, match="needs the labels"):
        bind(SPECS["EO"], groups=groups)
    with pytest.raises(UserError, match="0/1 or −1/\\+1"):
        bind(SPECS["EO"], groups=groups, y=y + 2)
    with pytest.raises(UserError, match="group"):
        bind(SPECS["DP"], groups=np.zeros(N, dtype=int))
    with pytest.raises(UserError, match="one value per sample"):
        bind(SPECS["EO"], groups=groups, y=y[:-1])
    with pytest.raises(UserError, match="family"):
        family("pDP").bind(SPECS["DP"], groups=groups)
    with pytest.raises(UserError, match="pairs"):
        bind(ConstraintSpec("group_loss_gap", 0.1, pairs="vs_rest"), groups=groups, y=y)
    with pytest.raises(UserError, match="variant"):
        bind(ConstraintSpec("auc_gap", 0.1, options={"variant": "ex6"}), groups=groups, y=y)


def test_labels_in_plus_minus_one_match_zero_one():
    groups, y, x = make_data()
    h = x[:, 0]
    for key in ("EO", "loss-pairs", "auc-inter", "hinge"):
        a = bound_for(key, groups, y).surrogate(h)
        b = bound_for(key, groups, 2 * y - 1).surrogate(h)
        torch.testing.assert_close(a, b, rtol=0, atol=0)


# ---- bound objects ------------------------------------------------------------------------------
@pytest.mark.parametrize("key", list(SPECS))
def test_rows_are_named_unique_and_match_values(key):
    groups, y, x = make_data()
    c = bound_for(key, groups, y)
    aux = c.aux_init()
    g = c.surrogate(x[:, 0], aux)
    assert g.shape == (c.m,) and c.m > 0
    assert len(set(c.rows)) == c.m
    assert list(c.named(g)) == list(c.rows)
    assert c.exact_rows(x[:, 0], aux).shape == (c.m,)
    assert np.isfinite(c.exact(x[:, 0].numpy()))


@pytest.mark.parametrize("key", list(SPECS))
def test_bound_constraint_is_immutable(key):
    groups, y, _ = make_data()
    c = bound_for(key, groups, y)
    with pytest.raises(AttributeError):
        c.rows = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        c.spec = SPECS["DP"]  # type: ignore[misc]


@pytest.mark.parametrize(
    "key", ["pSP-ramp", "pDP-sigmoid", "loss-mean", "EO", "hinge", "auc-intra"]
)
def test_with_batch_keeps_rows_and_matches_a_fresh_bind(key):
    groups, y, x = make_data(n=120)
    c = bound_for(key, groups, y)
    sel = np.arange(0, 120, 2)
    batch = c.with_batch(groups=groups[sel], y=y[sel])
    assert batch.rows == c.rows
    fresh = bound_for(key, groups[sel], y[sel])
    aux = c.aux_init()
    torch.testing.assert_close(batch.surrogate(x[sel, 0], aux), fresh.surrogate(x[sel, 0], aux))
    with pytest.raises(UserError, match="not present"):
        c.with_batch(groups=np.full(len(sel), 7), y=y[sel])
    with pytest.raises(UserError, match="[Nn]o "):
        c.with_batch(groups=np.zeros(len(sel), dtype=int), y=y[sel])


# ---- DC parts -----------------------------------------------------------------------------------
@pytest.mark.parametrize("key", list(SPECS))
def test_dc_parts_difference_is_the_surrogate(key):
    groups, y, x = make_data()
    c = bound_for(key, groups, y)
    rng = np.random.default_rng(1)
    for _ in range(5):
        h = torch.as_tensor(rng.normal(scale=2.0, size=N))
        aux = random_aux(c, rng)
        diff = c.dc.plus(h, aux) - c.dc.minus(h, aux)
        torch.testing.assert_close(diff, c.surrogate(h, aux), rtol=0, atol=1e-12)


@pytest.mark.parametrize("key", list(SPECS))
def test_dc_parts_are_convex_for_a_linear_model(key):
    groups, y, x = make_data()
    c = bound_for(key, groups, y)
    rng = np.random.default_rng(2)
    for _ in range(20):
        wa, wb = (torch.as_tensor(rng.normal(scale=1.5, size=x.shape[1])) for _ in range(2))
        aa, ab = random_aux(c, rng), random_aux(c, rng)
        am = {k: 0.5 * (aa[k] + ab[k]) for k in aa}
        for part in (c.dc.plus, c.dc.minus):
            mid = part(x @ (0.5 * (wa + wb)), am)
            ends = 0.5 * (part(x @ wa, aa) + part(x @ wb, ab))
            assert torch.all(mid <= ends + 1e-12), (part, (mid - ends).max())


def test_a_concave_part_would_fail_the_convexity_check():
    # the midpoint check above can fail: the surrogate itself (ramp) is not convex in general
    groups, y, x = make_data()
    c = bound_for("pSP-ramp", groups, y)
    rng = np.random.default_rng(2)
    failed = False
    for _ in range(50):
        wa, wb = (torch.as_tensor(rng.normal(scale=1.5, size=x.shape[1])) for _ in range(2))
        aa, ab = random_aux(c, rng), random_aux(c, rng)
        am = {k: 0.5 * (aa[k] + ab[k]) for k in aa}
        mid = c.surrogate(x @ (0.5 * (wa + wb)), am)
        ends = 0.5 * (c.surrogate(x @ wa, aa) + c.surrogate(x @ wb, ab))
        failed |= bool(torch.any(mid > ends + 1e-12))
    assert failed


@pytest.mark.parametrize("key", list(SPECS))
def test_linearization_matches_finite_differences(key):
    groups, y, x = make_data()
    c = bound_for(key, groups, y)
    rng = np.random.default_rng(3)
    h = torch.as_tensor(rng.normal(scale=2.0, size=N))
    aux = random_aux(c, rng)
    for lin_of, fn in (
        (c.dc.minus_linearization, c.dc.minus),
        (c.dc.plus_linearization, c.dc.plus),
    ):
        lin = lin_of(h, aux)
        torch.testing.assert_close(lin.value, fn(h, aux))
        assert lin.d_scores.shape == (c.m, N)
        for k, v in aux.items():
            assert lin.d_aux[k].shape == (c.m, *v.shape)
        eps = 1e-6
        for _ in range(3):
            dh = torch.as_tensor(rng.normal(size=N))
            da = {k: torch.as_tensor(rng.normal(size=v.shape)) for k, v in aux.items()}
            up = fn(h + eps * dh, {k: aux[k] + eps * da[k] for k in aux})
            down = fn(h - eps * dh, {k: aux[k] - eps * da[k] for k in aux})
            fd = (up - down) / (2 * eps)
            pred = lin.d_scores @ dh + sum(
                (lin.d_aux[k].reshape(c.m, -1) @ da[k].reshape(-1) for k in aux), torch.zeros(c.m)
            )
            # random points sit away from the kinks of the ramp pieces with probability one
            torch.testing.assert_close(pred, fd, rtol=1e-5, atol=1e-7)


# ---- invariances --------------------------------------------------------------------------------
PERM = {0: 2, 1: 0, 2: 1}


def renamed(row: str) -> str:
    """The name the row gets when group k is relabelled PERM[k] (pairs are stored with k < k')."""
    head, inner, side = re.fullmatch(r"([^\[]+)\[(.*)\](?::(\w+))?", row).groups()
    if inner.startswith("p="):
        p, g = inner.split(",g=")
        inner = f"{p},g={PERM[int(g)]}"
    elif "-" in inner:
        g, rest = inner.split("-", 1)
        inner = f"{PERM[int(g)]}-{rest}"
    else:
        pair, _, label = inner.partition(";")
        a, b = (PERM[int(t)] for t in pair.split(","))
        if a > b:
            a, b = b, a
            side = {"upper": "lower", "lower": "upper"}[side]
        inner = f"{a},{b}" + (f";{label}" if label else "")
    return f"{head}[{inner}]" + (f":{side}" if side else "")


@pytest.mark.parametrize("key", list(SPECS))
def test_relabelling_groups_permutes_rows_consistently(key):
    groups, y, x = make_data()
    h = x @ torch.tensor([1.0, -0.5, 0.3, 0.2])
    c = bound_for(key, groups, y)
    c2 = bound_for(key, np.vectorize(PERM.get)(groups), y)
    assert sorted(renamed(r) for r in c.rows) == sorted(c2.rows)
    aux = c.aux_init(h)
    a = c.named(c.surrogate(h, aux))
    b = c2.named(c2.surrogate(h, aux))
    for row, value in a.items():
        assert b[renamed(row)] == pytest.approx(value, abs=1e-12)
    assert c2.exact(h.numpy()) == pytest.approx(c.exact(h.numpy()), abs=1e-12)


@pytest.mark.parametrize("key", list(SPECS))
def test_permuting_samples_leaves_rows_unchanged(key):
    groups, y, x = make_data()
    h = x @ torch.tensor([0.5, 1.0, -0.3, 0.2])
    perm = np.random.default_rng(4).permutation(N)
    c = bound_for(key, groups, y)
    c2 = bound_for(key, groups[perm], y[perm])
    aux = c.aux_init()
    torch.testing.assert_close(c2.surrogate(h[perm], aux), c.surrogate(h, aux), rtol=0, atol=1e-12)
    np.testing.assert_allclose(c2.exact_rows(h[perm], aux), c.exact_rows(h, aux), atol=1e-12)


def test_string_and_intersectional_group_labels_name_rows():
    groups, y, x = make_data()
    names = np.array(["f", "m", "x"])[groups]
    c = bind(ConstraintSpec("DP", 0.1), groups=names)
    assert c.rows[:2] == ("DP[f,m]:upper", "DP[f,m]:lower")
    attrs = np.stack([groups % 2, (np.arange(N) // 3) % 2], axis=1)
    c = bind(ConstraintSpec("intersectional_hinge", 0.1), groups=attrs, y=y)
    assert c.rows == ("hinge[0|0-all]", "hinge[0|1-all]", "hinge[1|0-all]", "hinge[1|1-all]")


# ---- the exact-metric lookup ---------------------------------------------------------------------
def test_exact_metric_lookup_names_what_is_missing(monkeypatch):
    from engine.fairness.constraints import exact as exact_module

    with pytest.raises(exact_module.MissingExactMetric, match="No exact metric"):
        exact_module.exact_metric("nope")
    monkeypatch.setitem(exact_module.EXACT_FUNCTIONS, "pSP", "no_such_function")
    groups, y, x = make_data()
    c = bound_for("pSP-ramp", groups, y)
    with pytest.raises(exact_module.MissingExactMetric, match="no_such_function"):
        c.exact(x[:, 0].numpy())


@pytest.mark.parametrize("key", list(SPECS))
def test_exact_accepts_tensors_that_require_grad(key):
    groups, y, x = make_data()
    c = bound_for(key, groups, y)
    h = x[:, 1].clone().requires_grad_(True)
    assert c.exact(h) == c.exact(x[:, 1].numpy())


def test_grid_labels_stay_unique_when_short_ones_collide():
    from engine.fairness.constraints.base import fmt_all

    assert fmt_all([0.1, 0.25]) == ["0.1", "0.25"]
    close = [0.5, 0.5 + 1e-9, 0.5 + 2e-9]
    labels = fmt_all(close)
    assert len(set(labels)) == 3
    assert [float(v) for v in labels] == close


@pytest.mark.parametrize("key", list(SPECS))
@pytest.mark.parametrize("lattice", [False, True])
def test_linearized_minus_part_gives_a_convex_majorant(key, lattice):
    # paper 003, eq. 31–32: f⁺(v) − [f⁻(w) + ⟨∂f⁻(w), v − w⟩] ≥ f(v) for every v, whatever
    # subgradient is taken, including at kinks (the lattice puts scores exactly on them)
    groups, y, x = make_data(5)
    if lattice:
        x = torch.round(x * 2) / 2
    c = bound_for(key, groups, y)
    rng = np.random.default_rng(6)
    for trial in range(6):
        w = torch.zeros(x.shape[1]) if trial == 0 else torch.as_tensor(rng.normal(size=x.shape[1]))
        if lattice and trial > 0:
            w = torch.zeros(x.shape[1])
            w[trial % x.shape[1]] = 1.0
        aux_w = c.aux_init(x @ w)
        if lattice:
            aux_w = {k: torch.round(v) for k, v in aux_w.items()}
        lin = c.dc.minus_linearization(x @ w, aux_w)
        for _ in range(5):
            v = w + torch.as_tensor(rng.normal(scale=0.7, size=x.shape[1]))
            aux_v = {
                k: t + torch.as_tensor(rng.normal(scale=0.3, size=t.shape))
                for k, t in aux_w.items()
            }
            step = lin.d_scores @ (x @ (v - w))
            for k in aux_w:
                step = step + lin.d_aux[k].reshape(c.m, -1) @ (aux_v[k] - aux_w[k]).reshape(-1)
            majorant = c.dc.plus(x @ v, aux_v) - (lin.value + step)
            assert torch.all(majorant >= c.surrogate(x @ v, aux_v) - 1e-12)
        # and it touches f at the linearisation point
        torch.testing.assert_close(c.dc.plus(x @ w, aux_w) - lin.value, c.surrogate(x @ w, aux_w))


@pytest.mark.parametrize("key", ["pSP-ramp", "pSP-sigmoid", "pSP-literal"])
@pytest.mark.parametrize("lattice", [False, True])
def test_closed_form_psp_subgradients_equal_autograd(key, lattice):
    from engine.fairness.constraints.base import _linearize

    groups, y, x = make_data(7)
    c = bound_for(key, groups, y)
    rng = np.random.default_rng(8)
    h = x[:, 0]
    aux = random_aux(c, rng)
    if lattice:  # scores on half-integers and integer θ: many (h − θ)/τ ± ½ are exactly 0 for τ = 1
        h = torch.round(h * 2) / 2
        aux = {k: torch.round(v) for k, v in aux.items()}
    for fast, fn in (
        (c.dc.minus_linearization, c.dc.minus_fn),
        (c.dc.plus_linearization, c.dc.plus_fn),
    ):
        a, b = fast(h, aux), _linearize(fn, h, aux)
        torch.testing.assert_close(a.value, b.value, rtol=0, atol=1e-14)
        torch.testing.assert_close(a.d_scores, b.d_scores, rtol=0, atol=1e-14)
        torch.testing.assert_close(a.d_aux["theta"], b.d_aux["theta"], rtol=0, atol=1e-14)
