"""Paper 000's SSL-ALM and ALM (Alg. 2) on the minibatch interface, in the paper's slack form
and the Hestenes–Powell–Rockafellar one: iterates by hand, μ = 0, seeds, the safeguard, the
duals' sign, the options, and a fairer MLP than SGD's."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers import Budget, config_from_dict, solve
from engine.solvers.paper000.alm import SSLALM
from engine.solvers.paper000.cards_alm import ALMConfig, SSLALMConfig

DELTA = 0.02
GAP = ConstraintSpec("group_loss_gap", DELTA)


def linear_toy(problem: Problem, config: SSLALMConfig, seed: int) -> tuple:
    """For a linear model with the two-group loss gap, in numpy: the size of w, the solver's
    draws (the model seed, then the sampler's ξ, ζ1, ζ2 per step), (f, ∇f) on a batch, and
    c = [ℓ_0 − ℓ_1 − δ, ℓ_1 − ℓ_0 − δ] on a batch with its Jacobian in w."""
    rng = np.random.default_rng(seed)
    rng.integers(2**31)
    batches = BatchSampler(problem.data.train.groups, problem.data.n_groups, rng)
    X, y_true, g = problem.design().dense(), problem.data.train.y, problem.data.train.groups

    def draw() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        xi = batches.objective(config.batch_size).rows
        zeta1 = batches.per_group(config.per_group).rows
        return xi, zeta1, batches.per_group(config.per_group).rows

    def loss_and_grad(w: np.ndarray, rows: np.ndarray) -> tuple[float, np.ndarray]:
        h = X[rows] @ w
        p = 1.0 / (1.0 + np.exp(-h))
        loss = np.mean(np.logaddexp(0.0, h) - y_true[rows] * h)
        return loss, X[rows].T @ (p - y_true[rows]) / len(rows)

    def gap_and_jacobian(w: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        (l0, d0), (l1, d1) = (loss_and_grad(w, rows[g[rows] == k]) for k in (0, 1))
        return np.array([l0 - l1, l1 - l0]) - DELTA, np.stack([d0 - d1, d1 - d0])

    return X.shape[1], draw, loss_and_grad, gap_and_jacobian


def iterates_by_hand(problem: Problem, config: SSLALMConfig, seed: int, steps: int) -> list:
    """(w, s, y) after each of the first `steps` steps of paper 000's Alg. 2 ("slack") on the
    linear toy, in numpy."""
    n, draw, loss_and_grad, gap_and_jacobian = linear_toy(problem, config, seed)
    w, s, y = np.zeros(n), np.zeros(2), np.zeros(2)
    zw, zs = w.copy(), s.copy()
    out = []
    for _ in range(steps):
        xi, zeta1, zeta2 = draw()
        _, grad_f = loss_and_grad(w, xi)
        c1, jac = gap_and_jacobian(w, zeta1)
        c1, c2 = c1 + s, gap_and_jacobian(w, zeta2)[0] + s
        y = y + config.eta * c1
        if np.linalg.norm(y) >= config.dual_bound:
            y = np.zeros(2)
        weight = y + config.rho * c2
        gw = grad_f + jac.T @ weight + config.mu * (w - zw)
        gs = weight + config.mu * (s - zs)
        zw, zs = zw + config.beta * (w - zw), zs + config.beta * (s - zs)
        w, s = w - config.tau * gw, np.maximum(s - config.tau * gs, 0.0)
        out.append((w, s, y))
    return out


def hpr_iterates_by_hand(problem: Problem, config: SSLALMConfig, seed: int, steps: int) -> list:
    """(w, y, whether y was reset, whether a max(0, ·) cut) after each of the first `steps`
    steps of the Hestenes–Powell–Rockafellar form on the linear toy, in numpy, from its
    definition L_ρ = f + (1/(2ρ)) Σ_i (max(0, y_i + ρ c_i)² − y_i²): y ← max(0, y + η c(ζ1)),
    reset at ‖y‖ ≥ M_y, then w ← w − τ (∇f(ξ) + ∇c(ζ1)ᵀ max(0, y + ρ c(ζ2)) + μ (w − z));
    no slacks."""
    n, draw, loss_and_grad, gap_and_jacobian = linear_toy(problem, config, seed)
    w, y = np.zeros(n), np.zeros(2)
    zw = w.copy()
    out = []
    for _ in range(steps):
        xi, zeta1, zeta2 = draw()
        _, grad_f = loss_and_grad(w, xi)
        c1, jac = gap_and_jacobian(w, zeta1)
        c2, _ = gap_and_jacobian(w, zeta2)
        ascent = y + config.eta * c1
        y = np.maximum(0.0, ascent)
        reset = np.linalg.norm(y) >= config.dual_bound
        if reset:
            y = np.zeros(2)
        trial = y + config.rho * c2
        gw = grad_f + jac.T @ np.maximum(0.0, trial) + config.mu * (w - zw)
        zw = zw + config.beta * (w - zw)
        w = w - config.tau * gw
        out.append((w, y, reset, bool((ascent < 0).any() or (trial < 0).any())))
    return out


@pytest.mark.parametrize("dual_bound", [10.0, 1e-3])  # 1e-3: the safeguard resets y every step
def test_the_first_iterates_are_algorithm_2_by_hand(toy, dual_bound):
    problem = Problem(toy, ModelSpec(), GAP)
    config = SSLALMConfig(
        tau=0.3,
        eta=0.5,
        rho=2.0,
        mu=2.0,
        beta=0.5,
        batch_size=5,
        per_group=3,
        dual_bound=dual_bound,
    )
    solver = SSLALM(problem, config, np.random.default_rng(7))
    rows = problem.bound.rows
    for w, s, y in iterates_by_hand(problem, config, seed=7, steps=3):
        state = solver.step().state
        np.testing.assert_allclose(solver.candidate()["w"], w, rtol=0, atol=1e-10)
        np.testing.assert_allclose([state[f"slack.{r}"] for r in rows], s, rtol=0, atol=1e-10)
        np.testing.assert_allclose([state[f"dual.{r}"] for r in rows], y, rtol=0, atol=1e-10)
        assert state["dual_reset"] == float(dual_bound < 1)


@pytest.mark.parametrize("dual_bound", [10.0, 1e-3])
def test_the_first_hpr_iterates_are_the_textbook_formulas_by_hand(toy, dual_bound):
    problem = Problem(toy, ModelSpec(), GAP)
    config = SSLALMConfig(
        tau=0.3,
        eta=0.5,
        rho=2.0,
        mu=2.0,
        beta=0.5,
        batch_size=5,
        per_group=3,
        dual_bound=dual_bound,
        augmentation="hpr",
    )
    solver = SSLALM(problem, config, np.random.default_rng(7))
    rows = problem.bound.rows
    assert list(solver.oracles.layout.blocks) == ["weights"]  # no slack block in x
    by_hand = hpr_iterates_by_hand(problem, config, seed=7, steps=4)
    assert any(cut for *_, cut in by_hand)  # a max(0, ·) is active, so the test can tell
    assert any(reset for _, _, reset, _ in by_hand) == (dual_bound < 1)
    for w, y, reset, _ in by_hand:
        state = solver.step().state
        np.testing.assert_allclose(solver.candidate()["w"], w, rtol=0, atol=1e-10)
        np.testing.assert_allclose([state[f"dual.{r}"] for r in rows], y, rtol=0, atol=1e-10)
        assert not any(k.startswith("slack.") for k in state)
        assert state["dual_reset"] == float(reset)


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_hpr_duals_stay_nonnegative_and_slack_duals_need_not(toy, kind):
    problem = Problem(toy, ModelSpec(kind=kind, hidden=(6,)), GAP)
    duals = {}
    for form in ("hpr", "slack"):
        solver = SSLALM(problem, ALMConfig(eta=0.5, augmentation=form), np.random.default_rng(1))
        duals[form] = np.array(
            [
                [v for k, v in solver.step().state.items() if k.startswith("dual.")]
                for _ in range(300)
            ]
        )
    assert (duals["hpr"] >= 0).all() and (duals["hpr"] > 0).any()
    assert (duals["slack"] < 0).any()  # paper 000, Alg. 2: y is not projected


def test_a_seed_reproduces_an_hpr_run_and_another_seed_does_not(toy):
    problem = Problem(toy, ModelSpec(kind="mlp", hidden=(6,)), GAP)
    budget, config = Budget(max_iterations=60), SSLALMConfig(augmentation="hpr")
    first, again, other = (
        solve(problem, "ssl_alm", config, budget=budget, seed=seed) for seed in (4, 4, 5)
    )
    for name, value in first.params.items():
        np.testing.assert_array_equal(value, again.params[name])
    assert not np.array_equal(first.params["layers.0.weight"], other.params["layers.0.weight"])
    last, again_last = first.trajectory[-1].state, again.trajectory[-1].state
    assert last == again_last and not any(k.startswith("slack.") for k in last)


def test_the_default_augmentation_is_the_papers_slack_form(toy):
    assert SSLALMConfig().augmentation == ALMConfig().augmentation == "slack"
    solver = SSLALM(Problem(toy, ModelSpec(), GAP), ALMConfig(), np.random.default_rng(0))
    assert {k for k in solver.step().state if k.startswith("slack.")}


def test_an_unknown_augmentation_or_hpr_without_a_penalty_is_refused_clearly():
    with pytest.raises(
        UserError, match="option augmentation must be one of slack, hpr, not 'quadratic'"
    ):
        config_from_dict(ALMConfig, {"augmentation": "quadratic"})
    with pytest.raises(UserError, match="rho must be > 0 for 'hpr'"):
        SSLALMConfig(augmentation="hpr", rho=0.0)
    assert config_from_dict(SSLALMConfig, {"augmentation": "hpr"}).augmentation == "hpr"


def test_the_safeguard_resets_the_duals_when_their_norm_reaches_the_bound(toy):
    problem = Problem(toy, ModelSpec(), GAP)
    free = SSLALM(problem, SSLALMConfig(eta=0.5), np.random.default_rng(0))
    bounded = SSLALM(problem, SSLALMConfig(eta=0.5, dual_bound=1e-3), np.random.default_rng(0))
    duals = [k for k in free.step().state if k.startswith("dual.")]
    state = free.step().state
    assert 1e-3 <= np.linalg.norm([state[k] for k in duals]) < 10 and state["dual_reset"] == 0
    bounded.step()
    state = bounded.step().state
    assert state["dual_reset"] == 1 and all(state[k] == 0 for k in duals)


def test_alm_is_ssl_alm_with_mu_zero(toy):
    assert ALMConfig().mu == 0 and SSLALMConfig().mu == 2.0
    problem = Problem(toy, ModelSpec(kind="mlp", hidden=(6,)), GAP)
    budget = Budget(max_iterations=40)
    alm = solve(problem, "alm", budget=budget, seed=2)
    ssl = solve(problem, "ssl_alm", SSLALMConfig(mu=0.0), budget=budget, seed=2)
    proximal = solve(problem, "ssl_alm", budget=budget, seed=2)
    for name, value in alm.params.items():
        np.testing.assert_array_equal(value, ssl.params[name])
    assert not np.array_equal(alm.params["layers.0.weight"], proximal.params["layers.0.weight"])


def test_an_mlp_trained_by_ssl_alm_has_a_smaller_group_loss_gap_than_sgd(toy):
    problem = Problem(toy, ModelSpec(kind="mlp", hidden=(8, 4)), GAP)
    budget = Budget(max_iterations=400)
    constrained = solve(problem, "ssl_alm", budget=budget, seed=0)
    plain = solve(problem, "sgd", budget=budget, seed=0)
    gap = constrained.metrics["train"]["constraint"]
    assert gap < plain.metrics["train"]["constraint"]
