"""The solver catalogue: every card names a loadable solver and says why it requires each
capability, and checks model/family combinations the way its algorithm needs."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from engine.capabilities import Side
from engine.cli import main
from engine.errors import UserError
from engine.models import ModelSpec
from engine.solvers import Solver, config_fields, solver_card, solver_names
from engine.solvers.catalogue import CARDS

PROJECT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(CARDS))
def test_each_card_loads_its_solver_and_builds_its_default_options(name):
    card = solver_card(name)
    assert card.name == name
    assert issubclass(card.load(), Solver)
    assert dataclasses.is_dataclass(card.Config) and card.Config() == card.Config()
    assert card.needs and all(why.strip() for why in card.needs.values())
    assert card.model_kinds() and card.families()  # it can train some combination
    assert card.constrained == bool(card.requires_of(Side.FAMILY))


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
    with pytest.raises(
        UserError,
        match="idca trains linear models only: it needs scores affine "
        "in the model's parameters .*choose the linear model",
    ):
        idca.check_combination(ModelSpec("mlp"), "pSP")
    with pytest.raises(
        UserError,
        match="idca solves the constraint families DP, .* only: it "
        "needs difference-of-convex parts .*, not quad_inter$",
    ):
        idca.check_combination(ModelSpec(), "quad_inter")
    with pytest.raises(
        UserError,
        match="penalty solves the constraint families pDP, pSP only: "
        "it needs a penalty term .*, not DP$",
    ):
        solver_card("penalty").check_combination(ModelSpec(), "DP")
    with pytest.raises(UserError, match="ssg trains under a constraint"):
        solver_card("ssg").check_combination(ModelSpec(), None)
    with pytest.raises(UserError, match="ssg trains linear models only: .*paper 003 states it"):
        solver_card("ssg").check_combination(ModelSpec("mlp"), "EO")
    with pytest.raises(
        UserError,
        match="sgd_penalty .* it needs constraint rows whose value "
        "on a minibatch .* is an unbiased estimate .*, not pDP$",
    ):
        solver_card("sgd_penalty").check_combination(ModelSpec("mlp"), "pDP")
    with pytest.raises(UserError, match="unknown objective"):
        solver_card("ssw").check_combination(ModelSpec("mlp"), "pSP", objective="hinge")
    solver_card("ssw").check_combination(ModelSpec("mlp"), "pSP")
    solver_card("unconstrained").check_combination(ModelSpec("mlp"), None)  # any model, no family
    solver_card("unconstrained").check_combination(ModelSpec("mlp"), "EO")


def test_the_solver_listing_says_what_each_solver_needs_in_words(capsys):
    assert main(["solvers"]) == 0
    printed = capsys.readouterr().out
    assert (
        "idca  (paper 003; constraints: DP, EO, EOpp, auc_gap, group_loss_gap, "
        "intersectional_hinge, pDP, pSP; linear models)"
    ) in printed
    assert (
        "    needs of the constraint family: difference-of-convex parts f⁺ − f⁻ of the "
        "constraint rows (paper 003, eq. 27)"
    ) in printed
    assert (
        "unconstrained  (paper reference; constraints: any (only reported); linear and mlp"
        in printed
    )
    # each option with its default and, where it has them, its bounds
    assert "    --option outer_iterations=200 (> 0)  K, outer iterations" in printed
    assert "    --option proximal=0.0 (≥ 0)  μ, proximal weight" in printed


def test_unknown_solver_names_the_known_ones():
    with pytest.raises(UserError, match="unknown solver 'nope'.*idca"):
        solver_card("nope")
    assert solver_names() == sorted(CARDS)


def test_a_card_limited_to_some_auc_gap_variants_refuses_the_others_saying_why():
    card = dataclasses.replace(
        solver_card("sfls"), auc_variants=("group", "inter"), auc_variants_why="a reason"
    )
    refusal = card.refusal(ModelSpec(), "auc_gap", None, "intra")
    assert refusal is not None and "group and inter only (a reason), not intra" in refusal
    assert card.refusal(ModelSpec(), "auc_gap", None, "inter") is None
    assert card.refusal(ModelSpec(), "auc_gap") is None  # the default variant: group
    with pytest.raises(UserError, match="not intra"):
        card.check_combination(ModelSpec(), "auc_gap", None, "intra")


@pytest.mark.parametrize("first", ["engine.solvers.paper003.cards", "engine.solvers.paper004.sfls"])
def test_the_catalogue_has_every_card_whatever_module_is_imported_first(first):
    """A card module, or an implementation (which imports its card module), imported before the
    catalogue leaves it no card short."""
    code = f"import {first}; from engine.solvers.catalogue import CARDS; print(sorted(CARDS))"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == str(sorted(CARDS))
