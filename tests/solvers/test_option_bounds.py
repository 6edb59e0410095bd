"""Every solver option's declared bounds and choices, checked generically: a config built
directly or from text refuses a value outside them, or a float that is not finite, in one
sentence that names the option and the bound; the defaults are inside them; the command line's
listing and the pages' number inputs show them."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from engine.cli import main
from engine.errors import UserError
from engine.options import OptionField, Options, config_fields, config_from_dict, option
from engine.solvers.catalogue import CARDS
from engine.solvers.paper003.cards import IDCAConfig
from pages.shared.option_widgets import number_limits

CONFIGS = sorted({card.Config for card in CARDS.values()}, key=lambda c: c.__name__)
OPTIONS = [(config, o) for config in CONFIGS for o in config_fields(config)]


def cases(keep: Callable[[OptionField], Any]) -> dict[str, Any]:
    """`parametrize` arguments: the (config, option) pairs `keep` takes, named Config.option."""
    kept = [(c, o) for c, o in OPTIONS if keep(o)]
    return {"argvalues": kept, "ids": [f"{c.__name__}.{o.name}" for c, o in kept]}


@dataclass(frozen=True)
class Bound:
    value: float
    closed: bool  # minimum or maximum: the value itself is allowed
    lower: bool


def bounds(o: OptionField) -> list[Bound]:
    found = [
        (o.minimum, True, True),
        (o.above, False, True),
        (o.maximum, True, False),
        (o.below, False, False),
    ]
    return [Bound(value, closed, lower) for value, closed, lower in found if value is not None]


BOUNDED = [(c, o, b) for c, o in OPTIONS for b in bounds(o)]


def outside(o: OptionField, bound: Bound) -> Any:
    """The nearest value of the option's type beyond `bound`."""
    if o.kind is int:
        return math.ceil(bound.value) - 1 if bound.lower else math.floor(bound.value) + 1
    return math.nextafter(float(bound.value), -math.inf if bound.lower else math.inf)


def refusal(config: type, **values: Any) -> str:
    with pytest.raises(UserError) as refused:
        config(**values)
    return str(refused.value)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.__name__)
def test_every_config_checks_its_options_and_its_defaults_pass(config):
    assert issubclass(config, Options)
    config()  # the defaults lie within their bounds and choices
    for o in config_fields(config):
        assert o.optional or o.refusal(o.default) is None, o.name


@pytest.mark.parametrize(
    ("config", "o", "bound"),
    BOUNDED,
    ids=[f"{c.__name__}.{o.name}-{b.value}" for c, o, b in BOUNDED],
)
def test_a_value_just_outside_a_bound_is_refused_naming_the_option_and_the_bound(config, o, bound):
    words = f"option {o.name} must be {o.range_words}, not "
    assert words in refusal(config, **{o.name: outside(o, bound)})
    boundary = o.kind(bound.value)
    if bound.closed:
        config(**{o.name: boundary})
    else:
        assert words in refusal(config, **{o.name: boundary})


@pytest.mark.parametrize(("config", "o"), **cases(lambda o: o.kind is float))
def test_a_float_that_is_not_finite_is_refused(config, o):
    for value in (math.nan, math.inf, -math.inf):
        assert f"option {o.name} must be a finite number" in refusal(config, **{o.name: value})


@pytest.mark.parametrize(("config", "o"), **cases(lambda o: o.choices))
def test_a_text_option_takes_only_its_choices(config, o):
    for choice in o.choices:
        config(**{o.name: choice})
    words = f"option {o.name} must be one of {', '.join(o.choices)}, not 'nope'"
    assert words in refusal(config, **{o.name: "nope"})


def test_bounds_read_as_ranges_in_the_refusals():
    @dataclass(frozen=True)
    class Made(Options):
        rate: float = option(0.5, "a rate", above=0, below=1)
        share: float = option(0.5, "a share", minimum=0, maximum=1)
        count: int = option(3, "a count", minimum=1)
        cap: float | None = option(None, "a cap", maximum=20)
        free: float = option(-2.0, "anything finite")

    words = {o.name: o.range_words for o in config_fields(Made)}
    assert words == {
        "rate": "in (0, 1)",
        "share": "in [0, 1]",
        "count": "≥ 1",
        "cap": "≤ 20",
        "free": "",
    }
    assert Made(cap=None).cap is None  # an unset option is not checked
    assert refusal(Made, cap=21.5) == "option cap must be ≤ 20, not 21.5"
    assert refusal(Made, count=0) == "option count must be ≥ 1, not 0"
    with pytest.raises(TypeError, match="one lower bound"):
        option(1.0, "two lower bounds", minimum=0, above=0)


def test_text_from_a_page_or_the_command_line_is_checked_as_a_direct_construction():
    with pytest.raises(UserError, match="^option epsilon must be > 0, not -1$"):
        IDCAConfig(epsilon=-1)
    with pytest.raises(UserError, match="^option epsilon must be > 0, not -1$"):
        config_from_dict(IDCAConfig, {"epsilon": "-1"})
    with pytest.raises(UserError, match="^option patience must be ≥ 0, not -3$"):
        config_from_dict(IDCAConfig, {"patience": -3})


def test_the_solver_listing_carries_each_options_bounds(capsys):
    assert main(["solvers", "--json"]) == 0
    solvers = json.loads(capsys.readouterr().out)
    listing = {s["name"]: {o["name"]: o for o in s["options"]} for s in solvers}
    epsilon = listing["idca"]["epsilon"]
    assert (epsilon["above"], epsilon["minimum"], epsilon["range"]) == (0, None, "> 0")
    p0 = listing["stochastic_ghost"]["p0"]
    assert (p0["above"], p0["below"], p0["range"]) == (0, 1, "in (0, 1)")
    assert listing["sfls"]["first_level_doublings"]["range"] == "in [0, 20]"


@pytest.mark.parametrize(("config", "o"), **cases(bounds))
def test_a_pages_number_input_offers_exactly_the_bounded_values(config, o):
    limits = number_limits(o)
    for name, value in limits.items():
        assert isinstance(value, o.kind), (name, value)  # Streamlit wants the value's type
        direction = -1 if name == "min_value" else 1
        past = value + direction if o.kind is int else math.nextafter(value, direction * math.inf)
        assert o.refusal(value) is None and o.refusal(past) is not None
    if not o.optional:
        low, high = limits.get("min_value", -math.inf), limits.get("max_value", math.inf)
        assert low <= o.default <= high
