"""Each constraint family's own options, declared with the same `option` vocabulary as a
solver's (`engine.options`): their defaults, help, choices and bounds, from which the command
line, the pages and the estimator render, parse and check them. A `ConstraintSpec` stores only
the options set to something other than their default, so one constraint has one spec (and one
run id)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.errors import UserError
from engine.options import Options, config_fields, config_from_dict, option

# paper 004, App. A: Ex. 1, 2, 3, Ex. 4 (positive and negative average equality gap), Ex. 5
AUC_GAP_VARIANTS = ("group", "inter", "intra", "average_positive", "average_negative", "bpsn")
LOSS_CONDITIONS = ("none", "positive", "odds")  # paper 000, Table 1
MEAN_METHODS = ("bucketed", "direct")  # how pSP's ramp means are computed (same values)


@dataclass(frozen=True)
class NoOptions(Options):
    """The options of a family that has none of its own."""


@dataclass(frozen=True)
class PSPOptions(Options):
    mean_method: str = option(
        "bucketed",
        "how pSP's ramp means are computed: by buckets of the sorted scores or directly (the "
        "same values; bucketed is faster on large data)",
        choices=MEAN_METHODS,
        label="pSP's ramp means",
        choice_words=(("bucketed", "by buckets (faster)"), ("direct", "directly")),
    )


@dataclass(frozen=True)
class GroupLossOptions(Options):
    condition: str = option(
        "none",
        "the losses compared (paper 000, Table 1): whole groups (accuracy equality), their "
        "positives (equal opportunity) or positives and negatives (equalised odds)",
        choices=LOSS_CONDITIONS,
        label="Losses compared",
        choice_words=(
            ("none", "whole groups: accuracy equality"),
            ("positive", "the positives: equal opportunity"),
            ("odds", "positives and negatives: equalised odds"),
        ),
    )


@dataclass(frozen=True)
class AUCGapOptions(Options):
    variant: str = option(
        "group",
        "the sets compared (paper 004, App. A): group, inter, intra (Ex. 1–3), "
        "average_positive, average_negative (Ex. 4), bpsn (Ex. 5, BPSN vs BNSP AUC)",
        choices=AUC_GAP_VARIANTS,
        label="AUC metric (paper 004, App. A)",
        choice_words=(
            ("group", "Ex. 1 group AUC"),
            ("inter", "Ex. 2 inter-group pairwise AUC (xAUC)"),
            ("intra", "Ex. 3 intra-group pairwise AUC"),
            ("average_positive", "Ex. 4 positive average equality gap"),
            ("average_negative", "Ex. 4 negative average equality gap"),
            ("bpsn", "Ex. 5 BPSN vs BNSP AUC"),
        ),
    )
    # c1 = 0.5 of the c1 ∈ {0.5, 1} paper 004 tunes (App. E.3): by its Lemma 2 the constant model
    # is strictly feasible iff 2 c1 c2² < 1 + κ, which c1 = 0.5, c2 = 1 meets for every κ > 0 and
    # c1 = 1 for none below 1 (spec 004 §5: the surrogate-feasible set may then be empty)
    c1: float = option(
        0.5,
        "c1 of the surrogate c1 (t − c2)² (paper 004 uses 0.5 or 1); with 0.5 the constant "
        "model is strictly feasible (paper 004, Lemma 2: 2 c1 c2² < 1 + κ)",
        above=0,
        label="Surrogate c1",
    )
    c2: float = option(
        1.0, "c2 of the surrogate c1 (t − c2)² (paper 004 uses 1)", above=0, label="Surrogate c2"
    )


def declared_options(declaration: type[Options], family: str, given: Mapping[str, Any]) -> Options:
    """The family's options with `given` (text or typed) set and the rest at their defaults;
    an option the family does not have, or a value it does not allow, is refused in words."""
    names = {f.name for f in config_fields(declaration)}
    unknown = sorted(set(given) - names)
    if unknown:
        has = f"its options are {', '.join(sorted(names))}" if names else "it has no options"
        raise UserError(f"the {family} constraint has no option {', '.join(unknown)}; {has}")
    return config_from_dict(declaration, dict(given))


def changed_options(options: Options) -> dict[str, Any]:
    """The options set to something other than their default: what a spec stores."""
    return {
        f.name: getattr(options, f.name)
        for f in config_fields(type(options))
        if getattr(options, f.name) != f.default
    }
