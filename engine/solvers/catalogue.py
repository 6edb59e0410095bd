"""Every solver by name, as cards (`SolverCard`, `engine.solvers.card`): options and defaults,
the paper, which models and constraint families it solves. Importing this module loads no solver
and no torch.

Each source of algorithms is a package of `engine.solvers` (`paper000` … `paper004`,
`fairlearn`, `baselines`, `reference`) that holds its implementations and, beside them, its card
modules, `cards` or `cards_<topic>`, each declaring its `CARDS`; this module collects them. A
card module imports no implementation (a card names its own by a string), and takes
`SolverCard` from `engine.solvers.card`, not from here, so that a card module imported before
the catalogue is still collected whole."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from types import MappingProxyType

from engine.errors import UserError
from engine.solvers.card import SolverCard


def _card_modules() -> list[str]:
    """The card modules of every package of `engine.solvers`, by name."""
    solvers = __name__.rpartition(".")[0]
    names = []
    for package in _sorted(pkgutil.iter_modules(importlib.import_module(solvers).__path__)):
        if package.ispkg:
            path = importlib.import_module(f"{solvers}.{package.name}").__path__
            names += [
                f"{solvers}.{package.name}.{module.name}"
                for module in _sorted(pkgutil.iter_modules(path))
                if module.name == "cards" or module.name.startswith("cards_")
            ]
    return names


def _sorted(modules: Iterable[pkgutil.ModuleInfo]) -> list[pkgutil.ModuleInfo]:
    return sorted(modules, key=lambda m: m.name)


def _declared_cards() -> dict[str, SolverCard]:
    """Every card of the card modules (each declares its `CARDS`), so that a solver is added by
    its implementation module and its card module alone; two cards of one name are refused."""
    cards: dict[str, SolverCard] = {}
    for name in _card_modules():
        module = importlib.import_module(name)
        for card in getattr(module, "CARDS", ()):
            if card.name in cards:
                raise ValueError(f"two solver cards are named {card.name!r}")
            cards[card.name] = card
    return cards


CARDS: MappingProxyType[str, SolverCard] = MappingProxyType(_declared_cards())


# what each card's `paper` is about, in a few words a solver list can head its group with
PAPER_TOPICS: MappingProxyType[str, str] = MappingProxyType(
    {
        "000": "stochastic training of networks under constraints",
        "001": "perturbed Lagrangian, non-smooth constraints",
        "002": "Pareto-efficient group losses",
        "003": "partial fairness on a score interval",
        "004": "AUC and AUC-based fairness",
        "fairlearn": "reductions and thresholds",
        "baselines": "classic pre- and post-processing",
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
