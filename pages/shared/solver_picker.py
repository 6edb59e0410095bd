"""The sidebar's solver picker and each chosen solver's option widgets.

Thirty-odd solvers do not fit a laptop's sidebar as one list of checkboxes, most of them greyed
out. The picker shows first the solvers the constraint family's paper proposes for it
(`engine.fairness.families.Family.proposed`) with the unconstrained reference, then the others
that can run, one collapsed group per paper, then, once, those that cannot, each with why.

A solver that needs another objective than the page's (paper 004's methods train the pairwise
AUC loss) is not refused for it: ticking it switches the page's objective to the one it needs,
as a sweep from the command line that names such a solver trains that objective for all its
runs (`engine.cli.runs_commands.grid_objective`), and unticking the last such solver switches
it back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import streamlit as st

from engine.fairness.families import family_entry
from engine.models import ModelSpec
from engine.objectives import DEFAULT_OBJECTIVE, LogisticLoss, objective_type
from engine.options import config_fields, config_from_dict
from engine.solvers.catalogue import DEFAULT_SOLVERS, PAPER_TOPICS, solver_card, solver_names
from pages.shared.option_widgets import option_widget
from pages.shared.state import initial

REFERENCE = "unconstrained"
SWITCHED = "objective_switched_by"  # the solver whose tick switched the page's objective


@dataclasses.dataclass(frozen=True)
class SolverChoice:
    """One solver in the picker: `refusal` says why it cannot run here (None: it can) and
    `objective` names the objective ticking it switches the page to (None: the page's own)."""

    name: str
    refusal: str | None
    objective: str | None = None

    @property
    def available(self) -> bool:
        return self.refusal is None


def solver_refusals(
    family: str,
    model: ModelSpec,
    objective: str = LogisticLoss.name,
    variant: str | None = None,
    n_groups: int | None = None,
) -> dict[str, str | None]:
    """Why each solver cannot solve `family` (of `variant`, for auc_gap) on `model` with the
    `objective`, on data of `n_groups` protected groups when that is known; None where it can.
    The unconstrained solver ignores the family, so it is never refused for it."""
    return {
        name: solver_card(name).refusal(model, family, objective, variant, n_groups)
        for name in solver_names()
    }


def solver_choices(
    family: str, model: ModelSpec, objective: str, variant: str | None, n_groups: int | None = None
) -> dict[str, SolverChoice]:
    """Every solver as the picker offers it: refused with the page's `objective`, unless the
    objective is the label's default and the solver's own default objective (the pairwise AUC
    loss, for the same kind of label) lets it run; then it is offered with that objective."""
    task = objective_type(objective).task
    choices = {}
    for name, refusal in solver_refusals(family, model, objective, variant, n_groups).items():
        own = solver_card(name).default_objective
        switches = (
            refusal is not None
            and objective == DEFAULT_OBJECTIVE[task] != own
            and objective_type(own).task is task
        )
        if switches:  # with the objective it needs: runs, or why it cannot even so
            refusal = solver_card(name).refusal(model, family, own, variant, n_groups)
            choices[name] = SolverChoice(name, refusal, None if refusal else own)
        else:
            choices[name] = SolverChoice(name, refusal)
    return choices


def chosen_solvers(wanted: list[str], refusals: dict[str, str | None]) -> list[str]:
    """The wanted solvers that can run now, in catalogue order (the wanted list itself is kept,
    so a solver refused for one family comes back with the next)."""
    return [name for name, refusal in refusals.items() if name in wanted and refusal is None]


@dataclasses.dataclass(frozen=True)
class PickerGroup:
    """A group of the picker: its title and solvers, whether it is shown open, and its key
    (the title changes with the count of chosen solvers; the key keeps it open meanwhile)."""

    title: str
    names: tuple[str, ...]
    open: bool = False
    key: str = ""


def picker_groups(
    subject: str, family: str | None, choices: dict[str, SolverChoice]
) -> list[PickerGroup]:
    """The picker's groups in order: the solvers `family`'s paper proposes for it with the
    reference (open), then the other available ones by paper, then the refused ones; `subject`
    names what the solvers are for (the family, or a real-valued label, which has none)."""
    proposed = family_entry(family).proposed if family is not None else ()
    first = tuple(n for n in (*proposed, REFERENCE) if choices[n].available)
    source = f" ({family_entry(family).source})" if family is not None and proposed else ""
    groups = [
        PickerGroup(
            f"Proposed for {subject}{source}" if proposed else "Reference", first, open=True
        )
    ]
    rest = [n for n, c in choices.items() if c.available and n not in first]
    for paper in _papers(rest):
        names = tuple(n for n in rest if solver_card(n).paper == paper)
        groups.append(PickerGroup(_paper_title(paper), names, key=f"solvers_of:{paper}"))
    refused = tuple(n for n, c in choices.items() if not c.available)
    groups.append(
        PickerGroup(
            f"Not for {subject} with this model, objective and grouping",
            refused,
            key="solvers_of:none",
        )
    )
    return [group for group in groups if group.names]


def solver_picker(
    family: str,
    model: ModelSpec,
    objective: str,
    variant: str | None,
    regression: bool,
    n_groups: int | None = None,
) -> list[str]:
    """The picker's widgets for data of `n_groups` protected groups (None: not known); returns
    the chosen solvers that can run, in catalogue order."""
    choices = solver_choices(family, model, objective, variant, n_groups)
    initial("solvers", list(DEFAULT_SOLVERS))
    st.session_state["solvers"] = [s for s in st.session_state["solvers"] if s in choices]
    subject = "a real-valued label" if regression else family
    for group in picker_groups(subject, None if regression else family, choices):
        if group.open:
            st.sidebar.caption(group.title)
            _checkboxes(st.sidebar, group.names, choices)
            continue
        chosen = sum(name in st.session_state["solvers"] for name in group.names)
        label = f"{group.title} ({len(group.names)}{f', {chosen} chosen' if chosen else ''})"
        with st.sidebar.expander(label, key=group.key):
            if not choices[group.names[0]].available:
                st.caption("Point at a name for why.")
            _checkboxes(st, group.names, choices)
    switched_by = st.session_state.get(SWITCHED, (None,))[0]
    if switched_by in st.session_state["solvers"]:
        words = objective_type(objective).words
        st.sidebar.caption(
            f"{switched_by} needs the {words}, so every run trains it; untick "
            f"{switched_by} for the objective before."
        )
    refusals = {name: choice.refusal for name, choice in choices.items()}
    return chosen_solvers(st.session_state["solvers"], refusals)


def _checkboxes(container: Any, names: tuple[str, ...], choices: dict[str, SolverChoice]) -> None:
    for name in names:
        choice = choices[name]
        key = f"solver:{name}"
        st.session_state[key] = choice.available and name in st.session_state["solvers"]
        help_text = choice.refusal or solver_card(name).summary
        if choice.objective:
            words = objective_type(choice.objective).words
            help_text = (
                f"{help_text.rstrip('.')}. Ticking it trains the {words} it needs for every run."
            )
        container.checkbox(
            name,
            key=key,
            disabled=not choice.available,
            help=help_text,
            on_change=_toggle_solver,
            args=(name, choice.objective),
        )


def _toggle_solver(name: str, objective: str | None) -> None:
    """A solver's checkbox changed: add it to or drop it from the wanted list; a solver that
    needs another objective switches the page's to it, and back when it was the one that did."""
    ticked = st.session_state[f"solver:{name}"]
    wanted = [s for s in st.session_state["solvers"] if s != name]
    if ticked:
        wanted.append(name)
    st.session_state["solvers"] = [s for s in solver_names() if s in wanted]
    if ticked and objective is not None:
        st.session_state[SWITCHED] = (name, st.session_state.get("objective"))
        st.session_state["objective"] = objective
    elif not ticked and st.session_state.get(SWITCHED, (None,))[0] == name:
        _, before = st.session_state.pop(SWITCHED)
        if before is not None:
            st.session_state["objective"] = before


def _papers(names: Iterable[str]) -> list[str]:
    """The papers of `names`, numbered ones first in order, then the others (fairlearn)."""
    papers = {solver_card(n).paper for n in names}
    return sorted(papers, key=lambda p: (not p.isdigit(), p))


def _paper_title(paper: str) -> str:
    """ "Paper 003 · partial fairness on a score interval"; the references and fairlearn by what
    they are."""
    name = f"Paper {paper}" if paper.isdigit() else {"reference": "References"}.get(paper, paper)
    topic = PAPER_TOPICS.get(paper)
    return f"{name} · {topic}" if topic and paper != "reference" else name


def option_values(solver: str) -> dict[str, Any]:
    """What the option widgets of `solver` show before they are touched: each default, and
    empty text for an option that is unset by default."""
    return {
        option.name: "" if option.optional else option.default
        for option in config_fields(solver_card(solver).Config)
    }


def solver_config(solver: str, values: dict[str, Any]) -> dict[str, Any]:
    """The config a run of `solver` gets from its option widgets' values (empty text: unset)."""
    return dataclasses.asdict(config_from_dict(solver_card(solver).Config, values))


def solver_options(solver: str) -> dict:
    """The option widgets of `solver` (in the current container) and the config they give."""
    st.markdown(f"**{solver}**")
    shown = option_values(solver)
    values = {
        option.name: option_widget(option, f"opt:{solver}:{option.name}", shown[option.name])
        for option in config_fields(solver_card(solver).Config)
    }
    return solver_config(solver, values)
