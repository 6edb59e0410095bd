"""Paper 001's PLADA (Alg. 1) on the minibatch interface: the first iterates by hand in both modes,
λ never clipped, u in its box, ‖λ − μ‖ → 0 on a feasible problem, Table 2's defaults per model,
the derived θ-step (Alg. 1's bound with the problem's constants) and Table 2's one option away,
the full-batch pass equal to the oracles, and runs on DP and EO with linear and MLP models."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from adult_sample import adult_sample
from subgroup_data import subgroup_prepared

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.options import config_from_dict
from engine.oracles import WEIGHTS
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers import Budget, solve
from engine.solvers.paper001.cards_plada import TABLE2_LINEAR, TABLE2_NETWORK, PLADAConfig
from engine.solvers.paper001.plada import PLADA, FullData
from engine.status import StopCode

KAPPA = 0.02


def dp(kappa: float = KAPPA) -> ConstraintSpec:
    """Paper 001's DP rows (eq. 15) with its sigmoid surrogate, as s_a − s_b − κ ≤ 0 and
    s_b − s_a − κ ≤ 0."""
    return ConstraintSpec("DP", kappa, surrogate="sigmoid")


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def iterates_by_hand(problem: Problem, config: PLADAConfig, seed: int, steps: int) -> list:
    """(w, u, μ, λ, γ) at the start and after each of the first `steps` steps of paper 001's
    Alg. 1 with the linearised θ-step, on a linear model with the two-group DP rows, in numpy,
    with the solver's draws (the model seed; in minibatch mode the sampler, ζ_0, then ξ_k and
    ζ_{k+1} per step)."""
    rng = np.random.default_rng(seed)
    rng.integers(2**31)
    X, y, g = problem.design().dense(), problem.data.train.y, problem.data.train.groups
    everything = np.arange(len(y))
    batches = None
    if not config.full_batch:
        batches = BatchSampler(g, problem.data.n_groups, rng)

    def xi() -> np.ndarray:
        return everything if batches is None else batches.objective(config.batch_size).rows

    def zeta() -> np.ndarray:
        return everything if batches is None else batches.per_group(config.per_group).rows

    def loss_gradient(w: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return X[rows].T @ (sigmoid(X[rows] @ w) - y[rows]) / len(rows)

    def rows_and_jacobian(w: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rates, slopes = [], []
        for k in (0, 1):
            part = rows[g[rows] == k]
            s = sigmoid(X[part] @ w)
            rates.append(s.mean())
            slopes.append(X[part].T @ (s * (1 - s)) / len(part))
        gap, d_gap = rates[0] - rates[1], slopes[0] - slopes[1]
        return np.array([gap, -gap]) - problem.constraint.kappa, np.stack([d_gap, -d_gap])

    rho = config.alpha / (1 + config.alpha * config.beta)
    w, mu = np.zeros(X.shape[1]), np.zeros(2)
    G, J = rows_and_jacobian(w, zeta())
    u = np.clip(-G, 0.0, config.u_max)  # the solver's start: each row's room, in U
    lam = mu + rho * (G + u)
    out = [(w, u, mu, lam, math.nan)]
    for k in range(steps):
        gamma = min(
            config.gamma0, rho * config.delta_scale / (k + 1) / (np.sum((lam - mu) ** 2) + 1)
        )
        w = w - config.eta_w * (loss_gradient(w, xi()) + J.T @ lam)  # θ-step with λ_k
        u = np.clip(u - config.eta_u * lam, 0.0, config.u_max)  # u-step with λ_k
        mu = mu + gamma / rho * (lam - mu)  # μ-step with λ_k
        G, J = rows_and_jacobian(w, zeta())
        lam = mu + rho * (G + u)  # λ_{k+1} at the new θ, u and μ; no clipping
        out.append((w, u, mu, lam, gamma))
    return out


def rows_of(state: dict, name: str, problem: Problem) -> np.ndarray:
    return np.array([state[f"{name}.{row}"] for row in problem.bound.rows])


@pytest.mark.parametrize("full_batch", [True, False])
def test_the_first_iterates_are_algorithm_1_by_hand(toy, full_batch):
    problem = Problem(toy, ModelSpec(), dp())
    config = PLADAConfig(
        eta_w=0.5,
        eta_u=0.3,
        alpha=2.0,
        beta=0.25,
        gamma0=1.0,
        delta_scale=2.0,
        u_max=0.03,
        full_batch=full_batch,
        batch_size=7,
        per_group=5,
    )
    solver = PLADA(problem, config, np.random.default_rng(3))
    assert solver.rho == pytest.approx(2.0 / 1.5)
    expected = iterates_by_hand(problem, config, seed=3, steps=6)
    state = solver.state()
    for k, (w, u, mu, lam, gamma) in enumerate(expected):
        if k:
            state = solver.step().state
            assert state["gamma"] == pytest.approx(gamma, rel=1e-12)
        np.testing.assert_allclose(solver.candidate()["w"], w, rtol=0, atol=1e-10)
        np.testing.assert_allclose(rows_of(state, "u", problem), u, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows_of(state, "mu", problem), mu, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows_of(state, "dual", problem), lam, rtol=0, atol=1e-10)
        assert state["dual_gap"] == pytest.approx(np.linalg.norm(lam - mu), abs=1e-10)
    # both rows are feasible at w = 0 (G = −κ): u_0 = κ, so G + u = 0 and λ_0 = 0 (the start
    # keeps eq. 5's G + u = z, z = 0); later duals go negative and are kept, not clipped
    np.testing.assert_allclose(expected[0][1], KAPPA)
    np.testing.assert_allclose(expected[0][3], 0.0, atol=1e-15)
    assert min(lam.min() for *_, lam, _ in expected[1:]) < 0


def test_the_full_batch_pass_equals_the_oracles(toy):
    """`FullData` (one pass for F and G) gives the values and gradients of the oracles' calls,
    also with an auxiliary variable (pSP's θ), an MLP and EO's cells."""
    cases = [
        (ModelSpec(), ConstraintSpec("pSP", 0.3, (0.05, 0.3)), (0.05, 0.3)),
        (ModelSpec(cross_terms=True), ConstraintSpec("EO", 0.02), (0.0, 1.0)),
        (ModelSpec("mlp", hidden=(5,)), dp(), (0.0, 1.0)),
    ]
    for model, constraint, interval in cases:
        problem = Problem(toy, model, constraint, interval=interval)
        solver = PLADA(problem, PLADAConfig(), np.random.default_rng(0))
        x = solver.x + 0.1 * np.random.default_rng(1).normal(size=solver.x.shape)
        lam = np.linspace(-1.0, 2.0, problem.bound.m)
        loss, values, direction = FullData(solver.oracles, problem).linearise(x)
        rows = np.arange(len(toy.train))
        expected_loss, grad = solver.oracles.objective(x, rows)
        expected_values, pullback = solver.oracles.constraint_linearised(x, rows)
        assert loss == pytest.approx(expected_loss, rel=1e-12)
        np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(direction(lam), grad + pullback(lam), rtol=1e-10, atol=1e-12)


def test_u_stays_in_its_box_and_lambda_takes_either_sign(toy):
    problem = Problem(toy, ModelSpec(), dp())
    u_max = 0.01
    solver = PLADA(problem, PLADAConfig(u_max=u_max, eta_w=0.5), np.random.default_rng(0))
    states = [solver.step().state for _ in range(300)]
    u = np.array([rows_of(s, "u", problem) for s in states])
    lam = np.array([rows_of(s, "dual", problem) for s in states])
    assert u.min() == 0.0 and u.max() == u_max  # both ends are reached, never passed
    assert lam.min() < -0.1 and lam.max() > 0.1


def test_the_duals_meet_on_a_feasible_problem(toy):
    """A linear model under a DP constraint that becomes active (paper 001, Thm 2 and App. D.2):
    from λ_0 = μ_0 = 0 (θ_0 = 0 is feasible and u_0 its room), ‖λ − μ‖ grows while θ meets the
    constraint, then shrinks towards 0; u absorbs the inactive row's slack (u → −G) and the
    active row ends nearly feasible."""
    problem = Problem(toy, ModelSpec(), dp(0.05))
    solver = PLADA(problem, PLADAConfig(eta_w=0.2), np.random.default_rng(0))
    gaps = [solver.state()["dual_gap"]]
    for _ in range(3000):
        gaps.append(solver.step().state["dual_gap"])
    assert gaps[0] == 0.0
    assert gaps[3000] < gaps[2000] < gaps[1000] < max(gaps) / 3
    _, rows = solver.surrogate_view()
    inactive = int(np.argmin(rows))
    assert rows[inactive] < -0.05 and 0 < rows.max() < 0.015
    assert solver.x[solver.u][inactive] == pytest.approx(-rows[inactive], abs=1e-3)


def test_the_table2_defaults_follow_the_model(toy):
    linear = PLADA(Problem(toy, ModelSpec(), dp()), PLADAConfig(), np.random.default_rng(0))
    assert (linear.tau, linear.gamma0, linear.rho) == (0.1, 0.1, 5.0)
    mlp = Problem(toy, ModelSpec("mlp", hidden=(4,)), dp())
    network = PLADA(mlp, PLADAConfig(), np.random.default_rng(0))
    assert network.tau == 0.01
    assert network.rho == pytest.approx(10 / 6)
    chosen = PLADA(mlp, PLADAConfig(eta_w=0.2, beta=0.1), np.random.default_rng(0))
    assert (chosen.eta, chosen.tau, chosen.rho) == (0.2, 0.01, 5.0)
    with pytest.raises(UserError, match="gamma0"):
        PLADAConfig(gamma0=1.5)
    with pytest.raises(UserError, match="eta_u"):
        PLADAConfig(eta_u=0.0)


@pytest.mark.parametrize("family", ["DP", "EO"])
@pytest.mark.parametrize("model", [ModelSpec(), ModelSpec("mlp", hidden=(6,))])
def test_plada_runs_on_dp_and_eo_with_linear_and_mlp_models(toy, family, model):
    problem = Problem(toy, model, ConstraintSpec(family, KAPPA, surrogate="sigmoid"))
    solution = solve(problem, "plada", budget=Budget(max_iterations=40), seed=1)
    assert solution.stop.code is StopCode.ITERATION_BUDGET and solution.iterations == 40
    state = solution.last_surrogate().state
    rows = problem.bound.rows
    assert len(rows) == (2 if family == "DP" else 4)  # EO: the TPR and FPR gaps, two rows each
    for name in ("dual", "mu", "u"):
        assert all(math.isfinite(state[f"{name}.{row}"]) for row in rows)
    assert {"dual_gap", "gamma", "batch_loss"} <= set(state)
    # full batch: one pass over the data at the start and one per step
    assert state["oracle.data_passes"] == 41 and state["oracle.objective_gradients"] == 41
    assert state["oracle.constraint_gradients"] == 40
    for split in ("train", "val", "test"):
        assert math.isfinite(solution.metrics[split]["constraint"])


def test_the_minibatch_mode_draws_batches(toy):
    problem = Problem(toy, ModelSpec(), ConstraintSpec("EO", KAPPA, surrogate="sigmoid"))
    config = PLADAConfig(full_batch=False, batch_size=16, per_group=4)
    solution = solve(problem, "plada", config, Budget(max_iterations=30), seed=0)
    state = solution.last_surrogate().state
    assert state["oracle.objective_gradients"] == 30 and state["oracle.constraint_values"] == 31
    cells = 4  # EO's constraint batches take J rows of every (group, label) cell
    samples = 30 * 16 + 31 * cells * 4
    assert state["oracle.data_passes"] == pytest.approx(samples / len(toy.train))


def test_plada_pulls_the_surrogate_gap_to_kappa(toy):
    """With a larger θ-step than Table 2's, the violated DP row is ten times smaller after 1000
    steps than the unconstrained model's (it keeps shrinking, slowly: μ moves by γ_k ~ 1/k)."""
    problem = Problem(toy, ModelSpec(), dp())
    solver = PLADA(problem, PLADAConfig(eta_w=0.5), np.random.default_rng(0))
    for _ in range(1000):
        solver.step()
    _, rows = solver.surrogate_view()
    free = solve(problem, "unconstrained").params
    unconstrained = problem.bound.surrogate(torch.from_numpy(problem.scores(free))).numpy()
    assert rows.max() < 0.025 and unconstrained.max() > 0.2


# ---- the θ-step: derived from the problem unless set ------------------------------------------

RHO_LINEAR = 10.0 / (1.0 + 10.0 * 0.1)  # Table 2's α and β for linear models: ρ = α/(1 + αβ)


@pytest.mark.parametrize(("surrogate", "slope"), [("sigmoid", 0.25), ("ramp", 1.0)])
def test_the_derived_step_is_algorithm_1s_bound_with_the_problems_constants(toy, surrogate, slope):
    """Unset, η = 1/(L_F + 3ρM_G²), Alg. 1's bound: for the mean logistic loss of a linear model
    L_F = λ_max(X̃ᵀX̃)/(4n); at θ_0 = 0 every score is 0, where the sigmoid's slope is ¼ and the
    ramp's 1, so the DP rows ±(s_a − s_b) − κ have gradients ±d, d = slope·(x̄_a − x̄_b), and
    J_G = [d; −d] has the norm √2‖d‖. The first θ-step, from λ_0 = 0 (both rows are feasible at
    θ_0), is −η∇F(θ_0)."""
    problem = Problem(toy, ModelSpec(), ConstraintSpec("DP", KAPPA, surrogate=surrogate))
    X, y, g = problem.design().dense(), problem.data.train.y, problem.data.train.groups
    lipschitz_f = np.linalg.eigvalsh(X.T @ X)[-1] / (4 * len(y))
    d = slope * (X[g == 0].mean(axis=0) - X[g == 1].mean(axis=0))
    lipschitz_g = math.sqrt(2.0) * np.linalg.norm(d)
    eta = 1.0 / (lipschitz_f + 3.0 * RHO_LINEAR * lipschitz_g**2)
    solver = PLADA(problem, PLADAConfig(), np.random.default_rng(0))
    # λ_max by power iterations, which approach it from below: to four digits
    assert lipschitz_f * (1 - 1e-4) <= solver.smoothness.objective <= lipschitz_f * (1 + 1e-12)
    assert solver.smoothness.constraint == pytest.approx(lipschitz_g, rel=1e-10)
    assert solver.eta == pytest.approx(eta, rel=1e-4)
    state = solver.step().state
    assert state["step"] == solver.eta
    gradient = X.T @ (0.5 - y) / len(y)  # ∇F(0): σ(0) = ½
    np.testing.assert_allclose(solver.candidate()["w"], -solver.eta * gradient, atol=1e-12)


def test_an_mlps_derived_step_takes_table2s_network_step_for_one_over_l_f(toy):
    """An MLP's L_F has no closed form: 1/η_w of Table 2's network row stands in for it, so the
    derived step is below Table 2's and M_G is the norm of the rows' Jacobian at the start (as
    the oracles give it)."""
    problem = Problem(toy, ModelSpec("mlp", hidden=(5,)), dp())
    solver = PLADA(problem, PLADAConfig(), np.random.default_rng(0))
    _, jacobian = solver.oracles.constraint_jacobian(solver.x, np.arange(len(toy.train)))
    lipschitz_g = np.linalg.norm(jacobian, 2)
    assert lipschitz_g > 0
    assert solver.smoothness.objective == 1.0 / TABLE2_NETWORK["eta_w"]
    assert solver.smoothness.constraint == pytest.approx(lipschitz_g, rel=1e-10)
    expected = 1.0 / (1.0 / TABLE2_NETWORK["eta_w"] + 3.0 * solver.rho * lipschitz_g**2)
    assert solver.eta == pytest.approx(expected, rel=1e-12)
    assert solver.eta < TABLE2_NETWORK["eta_w"]


def test_table2s_step_is_one_option_away(toy):
    """η_w given (as a page's or command line's text, too) is the step, Table 2's among them;
    "auto" or empty text leaves it unset, to be derived."""
    for model, table2 in (
        (ModelSpec(), TABLE2_LINEAR),
        (ModelSpec("mlp", hidden=(4,)), TABLE2_NETWORK),
    ):
        config = config_from_dict(PLADAConfig, {"eta_w": str(table2["eta_w"])})
        solver = PLADA(Problem(toy, model, dp()), config, np.random.default_rng(0))
        assert solver.eta == table2["eta_w"] and solver.smoothness is None
        assert np.all(solver.steps[solver.oracles.layout["weights"]] == table2["eta_w"])
        assert solver.step().state["step"] == table2["eta_w"]
    for unset in ("auto", "", "none"):
        assert config_from_dict(PLADAConfig, {"eta_w": unset}).eta_w is None


def test_at_its_defaults_plada_fits_an_adult_sample_and_ends_near_kappa():
    """On standardised Adult features (a sample) under paper 001's sigmoid DP rows, 1000 steps
    at the derived step take the loss more than half the way from F(θ_0) = log 2 to the
    unconstrained optimum F* (Table 2's η_w = 0.001 is not yet halfway), and the active
    constraint ends near κ: the surrogate gap |s_a − s_b| within κ/2 of κ (the largest row
    |s_a − s_b| − κ within ±κ/2), where the unconstrained model's largest row is over 5κ."""
    problem = Problem(adult_sample(1500), ModelSpec(), dp())
    free = solve(problem, "unconstrained").params
    optimum = problem.loss(problem.scores(free))
    free_rows = problem.bound.surrogate(torch.from_numpy(problem.scores(free))).numpy()
    assert free_rows.max() > 5 * KAPPA
    halfway = 0.5 * (math.log(2.0) + optimum)
    ends = {}
    for config in (PLADAConfig(), PLADAConfig(eta_w=TABLE2_LINEAR["eta_w"])):
        solver = PLADA(problem, config, np.random.default_rng(0))
        for _ in range(1000):
            solver.step()
        ends[config.eta_w] = solver.surrogate_view()
    loss, rows = ends[None]
    assert optimum < loss < halfway
    assert abs(rows.max()) <= KAPPA / 2
    assert ends[TABLE2_LINEAR["eta_w"]][0] > halfway


def test_an_mlp_at_its_defaults_does_not_diverge_under_many_subgroup_rows():
    """Paper 001 §5.3's construction on a toy scale: an MLP under one hinge row per overlapping
    subgroup (about a hundred). J_Gᵀλ sums rows that point alike, so Table 2's network step 0.1
    diverges within a few dozen steps; the derived step, shrunk by M_G, keeps every value finite
    and lowers the loss."""
    data = subgroup_prepared(thresholds=10, min_share=0.01)
    problem = Problem(
        data, ModelSpec("mlp", hidden=(64,)), ConstraintSpec("intersectional_hinge", KAPPA)
    )
    assert problem.bound.m > 50
    table2 = PLADAConfig(eta_w=TABLE2_NETWORK["eta_w"])
    with np.errstate(over="ignore", invalid="ignore"):  # its overflows on the way to inf
        paper = solve(problem, "plada", table2, Budget(max_iterations=300), seed=0)
    assert paper.stop.code is StopCode.NON_FINITE
    solver = PLADA(problem, PLADAConfig(), np.random.default_rng(0))
    start = solver.loss  # F(θ_0): full-batch mode keeps F of the current point
    for _ in range(300):
        state = solver.step().state
    values = [v for k, v in state.items() if k.split(".")[0] in ("dual", "mu", "u", "dual_gap")]
    assert len(values) == 3 * problem.bound.m + 1 and all(map(math.isfinite, values))
    assert math.isfinite(solver.loss) and solver.loss < start


def test_a_warm_start_begins_at_the_given_model_with_its_slacks_and_duals_set_there(toy):
    """Alg. 1 takes any θ₀ (the card's warm start): started from a model that PLADA itself fitted,
    θ₀ is that model, u₀ = Π_U(−G(θ₀)), μ₀ = 0 and λ₀ = ρ(G(θ₀) + u₀) there, and its first step
    stays near it, where the first step from θ₀ = 0 is far from it."""
    problem = Problem(toy, ModelSpec(), dp())
    config = PLADAConfig(eta_w=0.5)
    fitted = PLADA(problem, config, np.random.default_rng(0))
    for _ in range(1000):
        fitted.step()
    start = {"w": fitted.x[fitted.oracles.layout[WEIGHTS]].copy()}
    warm_problem = Problem(toy, ModelSpec(), dp(), start=start)
    warm = PLADA(warm_problem, config, np.random.default_rng(1))
    np.testing.assert_array_equal(warm.x[warm.oracles.layout[WEIGHTS]], start["w"])
    rows = warm_problem.bound.surrogate(torch.from_numpy(warm_problem.scores(start))).numpy()
    u0 = np.clip(-rows, 0.0, config.u_max)
    np.testing.assert_allclose(warm.x[warm.u], u0, atol=1e-9)
    np.testing.assert_allclose(warm.lam, warm.rho * (rows + u0), atol=1e-9)
    cold = PLADA(problem, config, np.random.default_rng(1))
    np.testing.assert_array_equal(warm.mu, 0.0)
    warm.step()
    cold.step()
    weights = warm.oracles.layout[WEIGHTS]
    from_start = [np.linalg.norm(run.x[weights] - start["w"]) for run in (warm, cold)]
    assert from_start[0] < 0.2 * from_start[1]


def test_a_warm_start_from_a_solve_at_another_kappa_starts_its_duals_at_that_solves(toy):
    """A κ′ step of a sequence (κ = 0.02 → 0.015) hands PLADA the state its start model's solve
    ended with: μ₀ is that solve's last λ, and the largest surrogate row falls toward κ′ step by
    step; from μ₀ = 0 the first steps pull the model toward the unconstrained one, and the row
    is five times as large after 200 steps."""
    problem = Problem(toy, ModelSpec(), dp())
    config = PLADAConfig(eta_w=0.5)
    fitted = PLADA(problem, config, np.random.default_rng(0))
    for _ in range(999):
        fitted.step()
    state = fitted.step().state
    start = {"w": fitted.x[fitted.oracles.layout[WEIGHTS]].copy()}
    tighter = dp(0.015)
    with_duals = PLADA(problem.under(tighter, start, state), config, np.random.default_rng(1))
    without = PLADA(problem.under(tighter, start), config, np.random.default_rng(1))
    np.testing.assert_array_equal(with_duals.mu, fitted.lam)
    np.testing.assert_array_equal(without.mu, 0.0)
    largest = {"with": [], "without": []}
    for _ in range(200):
        for name, run in (("with", with_duals), ("without", without)):
            run.step()
            largest[name].append(run.surrogate_view()[1].max())
    start_row = (
        with_duals.problem.bound.surrogate(torch.from_numpy(problem.scores(start))).numpy().max()
    )
    assert max(largest["with"]) < start_row + 0.005 < 0.1 < max(largest["without"])
    assert 5 * largest["with"][-1] < largest["without"][-1]
