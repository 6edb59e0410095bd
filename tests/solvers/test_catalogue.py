"""The solver catalogue: every card names a loadable solver and constraint families that exist,
and checks model/family combinations the way its algorithm needs."""

from __future__ import annotations

import dataclasses

import pytest

from engine.errors import UserError
from engine.fairness.families import FAMILIES
from engine.models import ModelSpec
from engine.solvers import Solver, solver_card, solver_names
from engine.solvers.catalogue import CARDS


@pytest.mark.parametrize("name", sorted(CARDS))
def test_each_card_loads_its_solver_and_builds_its_default_options(name):
    card = solver_card(name)
    assert card.name == name
    assert issubclass(card.load(), Solver)
    assert dataclasses.is_dataclass(card.Config) and card.Config() == card.Config()
    assert card.families is None or card.families <= set(FAMILIES)
    assert card.requires <= {"affine_model", "dc"}


def test_combinations_are_checked_as_the_cards_say():
    idca = solver_card("idca")
    idca.check_combination(ModelSpec(), "pSP")
    with pytest.raises(UserError, match="linear model"):
        idca.check_combination(ModelSpec("mlp"), "pSP")
    with pytest.raises(UserError, match="families pDP, pSP, not DP"):
        idca.check_combination(ModelSpec(), "DP")
    solver_card("unconstrained").check_combination(ModelSpec("mlp"), None)  # any model, no family


def test_unknown_solver_names_the_known_ones():
    with pytest.raises(UserError, match="unknown solver 'nope'.*idca"):
        solver_card("nope")
    assert solver_names() == sorted(CARDS)
