"""Steps from the problem's own smoothness (`engine.solvers.smoothness`): L_F against its
definition on the dense design, with and without group cross-terms, its scale following the
features', and the solvers that leave their step unset taking 1/(2L_F) (ConEx's first dual
step 2/m on m rows)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.objectives import objective_type
from engine.problem import Problem
from engine.solvers.paper001.cards_baselines import NETWORK_STEP, IPPConExConfig, SSGHLConfig
from engine.solvers.paper001.ipp import InexactProximalPoint
from engine.solvers.paper001.ssg_hl import SwitchingSubgradientHL
from engine.solvers.paper004.cards_baselines import CorrPenaltyConfig, ProxyLagrangianConfig
from engine.solvers.paper004.corr_penalty import CorrPenalty
from engine.solvers.paper004.proxy_lagrangian import ProxyLagrangian
from engine.solvers.smoothness import objective_lipschitz, safe_step


def lipschitz_by_definition(problem: Problem) -> float:
    """λ_max of the logistic loss's Hessian bound X̃ᵀX̃/(4n), from the dense design."""
    dense = problem.design().dense()
    return float(np.linalg.eigvalsh(dense.T @ dense / (4 * len(dense)))[-1])


@pytest.mark.parametrize("cross_terms", [False, True])
def test_the_objectives_lipschitz_constant_is_its_definition(data, cross_terms):
    problem = Problem(data, ModelSpec(cross_terms=cross_terms), ConstraintSpec("DP", 0.05))
    expected = lipschitz_by_definition(problem)
    assert objective_lipschitz(problem) == pytest.approx(expected, rel=1e-5)
    assert safe_step(problem, NETWORK_STEP) == pytest.approx(0.5 / expected, rel=1e-5)


def test_columns_that_move_together_make_the_objective_less_smooth_and_the_step_shorter(data):
    """A copy of every column doubles λ_max(X̃ᵀX̃) along the shared directions: L_F grows and
    the step shrinks, as on Communities and Crime's correlated columns."""
    splits = {
        name: dataclasses.replace(part, X=np.hstack([part.X, part.X]))
        for name, part in (("train", data.train), ("val", data.val), ("test", data.test))
    }
    names = tuple(f"{name} {copy}" for copy in (1, 2) for name in data.feature_names)
    doubled = dataclasses.replace(data, **splits, feature_names=names)
    plain = Problem(data, ModelSpec(), ConstraintSpec("DP", 0.05))
    copied = Problem(doubled, ModelSpec(), ConstraintSpec("DP", 0.05))
    assert objective_lipschitz(copied) == pytest.approx(lipschitz_by_definition(copied), rel=1e-5)
    assert objective_lipschitz(copied) > 1.5 * objective_lipschitz(plain)
    assert safe_step(copied, NETWORK_STEP) < safe_step(plain, NETWORK_STEP)


def test_a_network_has_no_closed_form_constant_and_takes_the_fallback(data):
    problem = Problem(data, ModelSpec("mlp"), ConstraintSpec("DP", 0.05))
    assert objective_lipschitz(problem) is None
    assert safe_step(problem, NETWORK_STEP) == NETWORK_STEP


def test_unset_steps_of_paper_001s_baselines_are_derived_and_set_ones_kept(data):
    problem = Problem(data, ModelSpec(), ConstraintSpec("DP", 0.05))
    derived = 0.5 / lipschitz_by_definition(problem)
    rng = np.random.default_rng(0)
    ssg = SwitchingSubgradientHL(problem, SSGHLConfig(), rng)
    assert ssg.objective_step == pytest.approx(derived, rel=1e-5)
    assert ssg.constraint_step == ssg.objective_step
    given = SwitchingSubgradientHL(problem, SSGHLConfig(objective_step=0.3), rng)
    assert (given.objective_step, given.constraint_step) == (0.3, 0.3)
    ipp = InexactProximalPoint(problem, IPPConExConfig(), rng)
    assert ipp.inner.primal_step(0) == pytest.approx(derived, rel=1e-5)
    assert len(problem.bound.rows) == 2 and ipp.inner.dual_first == 1.0  # σ0 = 2/m
    assert InexactProximalPoint(problem, IPPConExConfig(dual_step=3.0), rng).inner.dual_first == 3
    assert InexactProximalPoint(problem, IPPConExConfig(inner_step=0.8), rng).inner.primal_step(
        0
    ) == pytest.approx(0.8)


def test_unset_rates_of_paper_004s_sgd_baselines_are_derived_from_the_pairwise_loss(data):
    """The pairwise AUC loss is quadratic in the scores: its Hessian there is constant, and
    L_F = λ_max(X̃ᵀ ∇²_h f X̃) ≤ (its curvature bound) · λ_max(X̃ᵀX̃), which the rate halves."""
    objective = objective_type("pairwise_auc")()
    problem = Problem(data, ModelSpec(), ConstraintSpec("auc_gap", 0.05), objective=objective)
    dense = problem.design().dense()
    y = problem.data.train.y
    at_zero = objective.value_and_grad(np.zeros(len(y)), y)[1]
    hessian = np.stack([objective.value_and_grad(unit, y)[1] - at_zero for unit in np.eye(len(y))])
    exact = float(np.linalg.eigvalsh(dense.T @ hessian @ dense)[-1])
    bound = objective_lipschitz(problem)
    assert exact <= bound * (1 + 1e-6)
    rng = np.random.default_rng(0)
    for solver, config in (
        (ProxyLagrangian, ProxyLagrangianConfig()),
        (CorrPenalty, CorrPenaltyConfig()),
    ):
        assert solver(problem, config, rng).step == pytest.approx(0.5 / bound, rel=1e-6)
        given = dataclasses.replace(config, step=0.3)
        assert solver(problem, given, rng).step == 0.3
