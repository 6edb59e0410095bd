"""Which runs can honour κ, and on which split (no solver code: run specs, sweeps and the pages
check it)."""

from __future__ import annotations

from engine.errors import UserError
from engine.solvers.catalogue import solver_card
from engine.solvers.records import HONOUR

__all__ = ["HONOUR", "HONOUR_SPLITS", "SPLIT_WORDS", "check_honour", "honour_refusal"]

HONOUR_SPLITS = ("val", "train")  # validation first: what generalises
SPLIT_WORDS = {"val": "validation", "train": "train"}


def honour_refusal(solver: str, has_constraint: bool) -> str | None:
    """Why a run of `solver` (with a constraint or not) cannot honour κ; None when it can."""
    card = solver_card(solver)
    if not has_constraint or not card.constrained:
        return f"{solver} runs without a constraint: there is no κ to honour"
    if card.front_words:
        return (f"{solver} yields a front of models, each judged against κ on its own; "
                "honouring κ applies to a run of one model")  # fmt: skip
    return None


def check_honour(solver: str, has_constraint: bool, on: str) -> None:
    """Whether κ can be honoured on split `on` for `solver` (refused in words otherwise)."""
    if on not in HONOUR_SPLITS:
        raise UserError(f"κ is honoured on 'val' (validation) or 'train', not {on!r}")
    refusal = honour_refusal(solver, has_constraint)
    if refusal is not None:
        raise UserError(refusal)
