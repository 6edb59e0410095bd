"""Every solver by name, as cards (`SolverCard`): options and defaults, the paper, which models
and constraint families it solves. Importing this package loads no solver and no torch."""

from __future__ import annotations

from types import MappingProxyType

from engine.errors import UserError
from engine.solvers.catalogue import (
    fairlearn,
    p000_alm,
    p000_ghost,
    p000_penalties,
    p000_ssw,
    p001_baselines,
    p001_multiplier,
    p001_plada,
    p002_badr,
    p004_baselines,
    p004_postprocess,
    p004_sfls,
    paper000,
    paper003,
)
from engine.solvers.catalogue.card import SolverCard

CARDS: MappingProxyType[str, SolverCard] = MappingProxyType(
    {
        card.name: card
        for module in (
            paper003,
            paper000,
            p000_alm,
            p000_ssw,
            p000_penalties,
            p000_ghost,
            p001_plada,
            p001_baselines,
            p001_multiplier,
            p002_badr,
            p004_sfls,
            p004_baselines,
            p004_postprocess,
            fairlearn,
        )
        for card in module.CARDS
    }  # fmt: skip
)


# what each card's `paper` is about, in a few words a solver list can head its group with
PAPER_TOPICS: MappingProxyType[str, str] = MappingProxyType(
    {
        "000": "stochastic training of networks under constraints",
        "001": "perturbed Lagrangian, non-smooth constraints",
        "002": "Pareto-efficient group losses",
        "003": "partial fairness on a score interval",
        "004": "AUC and AUC-based fairness",
        "fairlearn": "reductions and thresholds",
        "reference": "no constraint",
    }
)


# what a new visitor's run uses: the core solver (paper 003) and the unconstrained reference
DEFAULT_SOLVERS: tuple[str, ...] = ("idca", "unconstrained")


def solver_card(name: str) -> SolverCard:
    if name not in CARDS:
        raise UserError(f"unknown solver '{name}'; the solvers are: {', '.join(solver_names())}")
    return CARDS[name]


def solver_names() -> list[str]:
    return sorted(CARDS)
