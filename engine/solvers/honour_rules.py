"""Which runs can honour κ, and on which split (no solver code: run specs, sweeps and the pages
check it)."""

from __future__ import annotations

from engine.errors import UserError
from engine.fairness.families import family_entry
from engine.solvers.catalogue import solver_card
from engine.solvers.records import HONOUR

__all__ = ["HONOUR", "HONOUR_SPLITS", "SPLIT_WORDS", "check_honour", "honour_refusal"]

HONOUR_SPLITS = ("val", "train")  # validation first: what generalises
SPLIT_WORDS = {"val": "validation", "train": "train"}


def honour_refusal(solver: str, family: str | None) -> str | None:
    """Why a run of `solver` under the constraint `family` (None: without one) cannot hold or
    honour κ; None when it can."""
    card = solver_card(solver)
    if family is None or not card.constrained:
        return f"{solver} runs without a constraint: there is no κ to honour"
    if card.front_words:
        return (f"{solver} yields a front of models, each judged against κ on its own; "
                "honouring κ applies to a run of one model")  # fmt: skip
    if card.kappa_free:
        return f"{solver} is not held to κ: {card.kappa_free}"
    scale = family_entry(family).kappa_scale
    if scale:
        return f"under {family}, {scale}"
    return None


def check_honour(solver: str, family: str | None, on: str) -> None:
    """Whether κ can be honoured on split `on` for `solver` under `family` (refused in words
    otherwise)."""
    if on not in HONOUR_SPLITS:
        raise UserError(f"κ is honoured on 'val' (validation) or 'train', not {on!r}")
    refusal = honour_refusal(solver, family)
    if refusal is not None:
        raise UserError(refusal)
