"""Capabilities: what a family declares it offers is what its bound constraint does, and a solver
is refused exactly when the model, the objective and the family together do not offer what it
requires, with the missing capability in words."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from engine import capabilities
from engine.capabilities import (
    Capability,
    Side,
    model_kinds_offering,
    model_offers,
    objective_offers,
)
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec, bind
from engine.fairness.constraints.base import BoundConstraint
from engine.fairness.constraints.quadratic_auc import QuadraticAUC
from engine.fairness.families import family_names, family_offers
from engine.fairness.rates import positive_rates
from engine.models import ModelSpec
from engine.objectives import LogisticLoss
from engine.solvers import solver_card, solver_names

PROJECT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.filterwarnings("ignore::engine.fairness.constraints.base.TinyBandWarning")

MODELS = {
    "linear": ModelSpec(),
    "cross-terms": ModelSpec(cross_terms=True),
    "mlp": ModelSpec("mlp"),
}
OBJECTIVE = LogisticLoss().name
# two groups of unequal sizes, each with as many positives as negatives, so that J rows of every
# (group, label) cell are also a uniform sample of every group
CELLS = {("a", 1): 4, ("a", 0): 4, ("b", 1): 3, ("b", 0): 3}
GROUPS = np.repeat([g for g, _ in CELLS], list(CELLS.values()))
Y = np.repeat([v for _, v in CELLS], list(CELLS.values()))
GROUP_IDS = np.unique(GROUPS, return_inverse=True)[1]
SCORES = torch.from_numpy(np.random.default_rng(0).normal(0.0, 2.0, GROUPS.size))
# κ and I: pDP's clipped rates cross α and β on some batches
KAPPA, INTERVAL = 0.5, (0.3, 0.7)
QUADRATIC = {
    "group": Capability.QUADRATIC_GROUP_AUC,
    "inter": Capability.QUADRATIC_INTER,
    "intra": Capability.QUADRATIC_INTRA,
}


def tiny(family: str) -> BoundConstraint:
    return bind(ConstraintSpec(family, KAPPA, INTERVAL), groups=GROUPS, y=Y)


def offers_everything(
    model: ModelSpec, family: str | None, objective: str = OBJECTIVE
) -> frozenset[Capability]:
    return model_offers(model) | objective_offers(objective) | family_offers(family)


@pytest.mark.parametrize("family", family_names())
def test_a_family_offers_dc_parts_exactly_when_its_bound_constraint_has_them(family):
    assert (Capability.DC_PARTS in family_offers(family)) == (tiny(family).dc is not None)


@pytest.mark.parametrize("family", family_names())
def test_a_family_offers_minibatch_rows_exactly_when_balanced_batches_are_unbiased(family):
    """The rows averaged over every batch of 2 rows of each cell equal the rows on the data."""
    bound = tiny(family)
    aux = bound.aux_init(SCORES)
    cells = np.split(np.arange(GROUPS.size), np.cumsum(list(CELLS.values()))[:-1])
    batches = [
        np.concatenate(pick)
        for pick in itertools.product(*(itertools.combinations(c, 2) for c in cells))
    ]
    mean = np.mean(
        [
            bound.with_batch(groups=GROUPS[rows], y=Y[rows]).surrogate(SCORES[rows], aux).numpy()
            for rows in batches
        ],
        axis=0,
    )
    unbiased = np.allclose(mean, bound.surrogate(SCORES, aux).numpy(), rtol=0, atol=1e-12)
    assert (Capability.MINIBATCH_ROWS in family_offers(family)) == unbiased


@pytest.mark.parametrize("family", family_names())
def test_every_family_offers_differentiable_surrogate_rows(family):
    assert Capability.SURROGATE in family_offers(family)
    bound = tiny(family)
    scores = SCORES.clone().requires_grad_()
    aux = {k: v.clone().requires_grad_() for k, v in bound.aux_init(SCORES).items()}
    bound.surrogate(scores, aux).sum().backward()
    assert torch.isfinite(scores.grad).all()


@pytest.mark.parametrize("family", family_names())
def test_the_quadratic_rows_are_offered_by_the_quadratic_model_of_their_equation(family):
    bound = tiny(family)
    offered = {c for c in family_offers(family) if c in QUADRATIC.values()}
    assert offered == ({QUADRATIC[bound.variant]} if isinstance(bound, QuadraticAUC) else set())


@pytest.mark.parametrize("family", family_names())
def test_a_family_offers_selection_rate_gaps_exactly_when_its_value_is_the_rates_range(family):
    """Over many random scores, the exact value is the largest gap of the groups' overall
    positive rates (statistical parity) for the families that say so, and for no other."""
    bound = tiny(family)
    draws = np.random.default_rng(1).normal(0.0, 2.0, (40, GROUPS.size))
    is_range = all(
        np.isclose(bound.exact(h), np.ptp(positive_rates(h, GROUP_IDS)), rtol=0, atol=1e-12)
        for h in draws
    )
    assert (Capability.SELECTION_RATE_GAPS in family_offers(family)) == is_range


@pytest.mark.parametrize(
    "family", [f for f in family_names() if Capability.LOSS_GAP_PENALTY in family_offers(f)]
)
def test_loss_gap_penalty_rows_are_plus_and_minus_group_loss_gaps(family):
    for pairs in ("vs_mean", "all"):
        bound = bind(ConstraintSpec(family, KAPPA, pairs=pairs), groups=GROUPS, y=Y)
        gaps = (bound.surrogate(SCORES).numpy() + KAPPA).reshape(-1, 2)
        np.testing.assert_allclose(gaps[:, 0], -gaps[:, 1], atol=1e-12)
        losses = bound.cell_losses(SCORES).numpy()
        expected = losses - losses.mean() if pairs == "vs_mean" else [losses[0] - losses[1]]
        np.testing.assert_allclose(gaps[:, 0], expected, atol=1e-12)


def test_models_and_objectives_offer_what_they_are():
    assert (
        model_offers(ModelSpec())
        == model_offers(ModelSpec(cross_terms=True))
        == {Capability.AFFINE_SCORES, Capability.GRADIENTS}
    )
    assert model_offers(ModelSpec("mlp")) == {Capability.GRADIENTS}
    assert model_kinds_offering(frozenset({Capability.AFFINE_SCORES})) == ["linear"]
    assert objective_offers(OBJECTIVE) == {
        Capability.SMOOTH,
        Capability.CONVEX,
        Capability.MINIBATCH_LOSS,
    }
    with pytest.raises(UserError, match="unknown objective 'hinge'"):
        objective_offers("hinge")
    assert family_offers(None) == frozenset()
    for offered, side in (
        (model_offers(ModelSpec()), Side.MODEL),
        (objective_offers(OBJECTIVE), Side.OBJECTIVE),
        *((family_offers(f), Side.FAMILY) for f in family_names()),
    ):
        assert all(c.side is side for c in offered)


def test_an_objective_without_a_capability_is_refused_in_words(monkeypatch):
    monkeypatch.setattr(capabilities, "OBJECTIVES", {"hinge": frozenset({Capability.CONVEX})})
    card = solver_card("unconstrained")
    assert card.refusal(ModelSpec(), None, "hinge") == (
        f"unconstrained needs {Capability.SMOOTH.words} ({card.needs[Capability.SMOOTH]}), "
        "which the hinge objective does not offer"
    )
    assert solver_card("idca").refusal(ModelSpec(), "pSP", "hinge") is None


@pytest.mark.parametrize("solver", solver_names())
def test_a_solver_is_refused_exactly_when_something_it_requires_is_not_offered(solver):
    card = solver_card(solver)
    for family, model in itertools.product([None, *family_names()], MODELS.values()):
        offered = card.requires <= offers_everything(model, family, card.default_objective)
        assert (card.refusal(model, family) is None) == offered, (family, model)


@pytest.mark.parametrize("solver", solver_names())
def test_a_refusal_says_in_words_what_is_missing(solver):
    card = solver_card(solver)
    for family, model in itertools.product([None, *family_names()], MODELS.values()):
        reason = card.refusal(model, family)
        offers = offers_everything(model, family, card.default_objective)
        missing = [c for c in card.needs if c not in offers]
        if reason is None:
            continue
        assert reason.startswith(f"{solver} ")
        first = missing[0]
        if first.side is Side.FAMILY and family is None:
            assert "trains under a constraint; choose a constraint family" in reason
            continue
        assert f"it needs {first.words} ({card.needs[first]})" in reason
        if first.side is Side.MODEL:
            assert reason.startswith(f"{solver} trains linear models only")
        else:
            families = ", ".join(card.families())
            assert reason.startswith(f"{solver} solves the constraint families {families} only")
            assert reason.endswith(f", not {family}") and family not in card.families()


def test_idca_accepts_every_family_with_dc_parts_on_a_linear_model():
    idca = solver_card("idca")
    with_dc = [f for f in family_names() if Capability.DC_PARTS in family_offers(f)]
    assert idca.families() == with_dc
    for family in with_dc:
        assert idca.refusal(MODELS["linear"], family) is None
        assert idca.refusal(MODELS["cross-terms"], family) is None
        assert idca.refusal(MODELS["mlp"], family).startswith("idca trains linear models only")


def test_the_stochastic_solvers_also_train_families_whose_batch_rows_are_biased():
    """pDP's clipped rates, the hinge's whole-batch mean and auc_gap's self-pairs make a balanced
    batch a biased estimate of their rows; the stochastic solvers still train them (stochastic
    ALM on partial fairness, pDP included, is what paper 000's methods add here), and the
    verdict judges the exact metric."""
    biased = [f for f in family_names() if Capability.MINIBATCH_ROWS not in family_offers(f)]
    assert biased == ["auc_gap", "intersectional_hinge", "pDP"]
    for solver, family in itertools.product(("ssw", "alm", "ssl_alm", "stochastic_ghost"), biased):
        assert solver_card(solver).refusal(MODELS["mlp"], family) is None
    assert solver_card("sgd_penalty").refusal(MODELS["mlp"], "pDP") is not None


def test_the_vocabulary_needs_no_torch():
    code = (
        "import sys, engine.capabilities, engine.fairness.families, engine.solvers.catalogue; "
        "print('torch' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
