"""The solver catalogue: every card names a loadable solver and constraint families that exist,
and checks model/family combinations the way its algorithm needs."""

from __future__ import annotations

import dataclasses

import pytest

from engine.errors import UserError
from engine.fairness.families import FAMILIES
from engine.models import ModelSpec
from engine.solvers import Solver, config_fields, solver_card, solver_names
from engine.solvers.catalogue import CARDS


@pytest.mark.parametrize("name", sorted(CARDS))
def test_each_card_loads_its_solver_and_builds_its_default_options(name):
    card = solver_card(name)
    assert card.name == name
    assert issubclass(card.load(), Solver)
    assert dataclasses.is_dataclass(card.Config) and card.Config() == card.Config()
    assert card.families is None or card.families <= set(FAMILIES)
    assert (card.families is None) == (card.families_why == "")


def test_every_option_has_a_kind_a_default_of_that_kind_and_help():
    for name in solver_names():
        for option in config_fields(solver_card(name).Config):
            assert option.help, (name, option.name)
            default = option.default
            if option.optional:
                assert default is None, (name, option.name)
            else:
                assert isinstance(default, option.kind) or (
                    option.kind is float and isinstance(default, int)
                ), option


def test_combinations_are_checked_as_the_cards_say():
    idca = solver_card("idca")
    idca.check_combination(ModelSpec(), "pSP")
    idca.check_combination(ModelSpec(cross_terms=True), "EO")
    with pytest.raises(UserError, match="linear models only: its difference-of-convex parts"):
        idca.check_combination(ModelSpec("mlp"), "pSP")
    with pytest.raises(UserError, match="difference-of-convex parts .*, not quad_inter"):
        idca.check_combination(ModelSpec(), "quad_inter")
    with pytest.raises(UserError, match="penalty solves the constraint families pDP, pSP only"):
        solver_card("penalty").check_combination(ModelSpec(), "DP")
    with pytest.raises(UserError, match="ssg trains under a constraint"):
        solver_card("ssg").check_combination(ModelSpec(), None)
    with pytest.raises(UserError, match="ssg trains linear models only: paper 003 states it"):
        solver_card("ssg").check_combination(ModelSpec("mlp"), "EO")
    solver_card("unconstrained").check_combination(ModelSpec("mlp"), None)  # any model, no family
    solver_card("unconstrained").check_combination(ModelSpec("mlp"), "EO")


def test_unknown_solver_names_the_known_ones():
    with pytest.raises(UserError, match="unknown solver 'nope'.*idca"):
        solver_card("nope")
    assert solver_names() == sorted(CARDS)
