"""A constraint family's own options, declared once (`engine.fairness.family_options`): every
value outside the declaration is refused in the same words wherever it comes from, a spec stores
only what differs from the defaults, and the command line and the page draw their flags and
widgets from the declarations."""

from __future__ import annotations

import argparse

import pytest

from engine.cli import main
from engine.cli.family_flags import add_family_option_arguments, family_options_from_args
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import FAMILIES, check_constraint, options_of, set_options
from engine.options import config_fields
from pages.shared.family_option_controls import KEYS

DECLARED = [(f, o) for f, e in FAMILIES.items() for o in config_fields(e.options)]


def _refused_value(option):
    if option.choices:
        return "no-such-choice"
    if option.above is not None:
        return option.above
    return option.minimum - 1


@pytest.mark.parametrize(("family", "option"), DECLARED, ids=lambda v: getattr(v, "name", v))
def test_a_value_outside_the_declaration_is_refused_naming_the_option(family, option):
    interval = (0.0, 0.5) if FAMILIES[family].uses_interval else None
    spec = ConstraintSpec(family, 0.1, interval, options={option.name: _refused_value(option)})
    with pytest.raises(UserError, match=f"option {option.name} must be "):
        check_constraint(spec)
    default = ConstraintSpec(family, 0.1, interval)
    assert getattr(options_of(default), option.name) == option.default


def test_a_spec_stores_only_the_options_that_differ_from_the_defaults():
    assert set_options("auc_gap", {"variant": "group", "c1": 0.5, "c2": None}) == {}
    assert set_options("auc_gap", {"variant": "inter", "c1": "1"}) == {
        "variant": "inter",
        "c1": 1.0,
    }
    with pytest.raises(
        UserError,
        match="the auc_gap constraint has no option colour; its options are c1, c2, variant",
    ):
        set_options("auc_gap", {"colour": "red"})
    with pytest.raises(UserError, match="the DP constraint has no option c1; it has no options"):
        set_options("DP", {"c1": 1.0})


def test_every_family_with_options_names_its_flags_and_widgets_apart():
    assert all(FAMILIES[family].short for family, _ in DECLARED)
    parser = argparse.ArgumentParser()
    add_family_option_arguments(parser.add_argument_group())  # two equal flags would raise
    assert len(set(KEYS)) == len(KEYS) == len(DECLARED)
    args = parser.parse_args(["--loss-condition", "odds", "--auc-c1", "1"])
    assert family_options_from_args(
        parser.parse_args(["--loss-condition", "odds"]), "group_loss_gap"
    ) == {"condition": "odds"}
    with pytest.raises(UserError, match="--auc-variant, --auc-c1 and --auc-c2 set the auc_gap "):
        family_options_from_args(args, "group_loss_gap")


def test_the_command_line_refuses_a_bad_family_option_in_one_line(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("x,g,y\n" + "".join(f"{i},{'ab'[i % 2]},{i % 3 == 0:d}\n" for i in range(60)))
    flags = [
        "run",
        "--source",
        "csv",
        "--csv",
        str(table),
        "--label",
        "y",
        "--attribute",
        "g",
        "--min-group-size",
        "5",
        "--constraint",
        "psp",
        "--interval",
        "0",
        "0.5",
    ]
    with pytest.raises(SystemExit) as stopped:  # the choices are argparse's to refuse
        main([*flags, "--psp-mean-method", "fast"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "invalid choice: 'fast'" in err
    assert main([*flags, "--loss-condition", "odds"]) == 2
    assert capsys.readouterr().err.startswith(
        "error: --loss-condition sets the group_loss_gap constraint only"
    )
