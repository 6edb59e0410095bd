"""Which runs can honour κ, and on which split (no solver code: run specs, sweeps and the pages
check it)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.errors import UserError
from engine.fairness.families import family_entry
from engine.solvers.catalogue import solver_card

__all__ = [
    "DEFAULT_HONOUR",
    "HOLDING_WORDS",
    "HONOUR_OFF",
    "HONOUR_SPLITS",
    "SPLIT_WORDS",
    "check_honour",
    "honour_refusal",
    "run_honour",
]

HONOUR_SPLITS = ("train", "val")
HONOUR_OFF = "off"  # solve once, as the solver's paper does
DEFAULT_HONOUR = "train"  # what the app, the command line and the estimator do unless told
SPLIT_WORDS = {"val": "validation", "train": "train"}
# what a run does on each split, as a clause after "κ": for its spec in words, the frontier's
# captions and the pages' control
HOLDING_WORDS = {
    "train": "held on the training data (its surrogate refined, then a tighter inner κ′, until "
    "the exact value there is ≤ κ)",
    "val": "held on the training data and honoured on validation (a tighter inner κ′ while the "
    "exact value on validation exceeds κ)",
}


def honour_refusal(solver: str, family: str | None) -> str | None:
    """Why a run of `solver` under the constraint `family` (None: without one) cannot hold or
    honour κ; None when it can."""
    card = solver_card(solver)
    if family is None or not card.constrained:
        return f"{solver} runs without a constraint: there is no κ to honour"
    if card.front_words:
        return (
            f"{solver} yields a front of models, each judged against κ on its own; "
            "honouring κ applies to a run of one model"
        )
    if card.kappa_free:
        return f"{solver} is not held to κ: {card.kappa_free}"
    scale = family_entry(family).kappa_scale
    if scale:
        return f"under {family}, {scale}"
    return None


def run_honour(choice: str | None, solvers: Sequence[str], family: str | None) -> str | None:
    """The split runs of `solvers` under `family` hold κ on, from a user's `choice`: "train" or
    "val" as given (a run that cannot is refused when its spec is checked), None for "off";
    and for no choice (None), `DEFAULT_HONOUR` where one of `solvers` can hold κ, else None."""
    if choice == HONOUR_OFF:
        return None
    if choice is not None:
        return choice
    able = any(honour_refusal(solver, family) is None for solver in solvers)
    return DEFAULT_HONOUR if able else None


def check_honour(solver: str, family: str | None, on: str) -> None:
    """Whether κ can be honoured on split `on` for `solver` under `family` (refused in words
    otherwise)."""
    if on not in HONOUR_SPLITS:
        raise UserError(f"κ is honoured on 'val' (validation) or 'train', not {on!r}")
    refusal = honour_refusal(solver, family)
    if refusal is not None:
        raise UserError(refusal)
