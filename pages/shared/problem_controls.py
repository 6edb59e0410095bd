"""Sidebar widgets for the problem (I, κ, constraint, model) and the solvers; they build the
RunSpecs of the current view."""

from __future__ import annotations

import dataclasses

import streamlit as st

from engine.data.prepare import PrepareOptions
from engine.data.sources import DataSpec
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec, OptionValue
from engine.fairness.families import family_entry, family_names
from engine.models import ACTIVATIONS, ModelSpec
from engine.objectives import LogisticLoss, Objective, objective_type
from engine.runs import RunSpec, sweep_specs
from engine.solvers.budget import Budget
from engine.solvers.honour_rules import (
    DEFAULT_HONOUR,
    HOLDING_WORDS,
    HONOUR_OFF,
    honour_refusal,
)
from engine.task import Task
from pages.shared.family_option_controls import KEYS as FAMILY_OPTION_KEYS
from pages.shared.family_option_controls import family_option_controls
from pages.shared.objective_controls import KEYS as OBJECTIVE_KEYS
from pages.shared.objective_controls import objective_controls
from pages.shared.solver_picker import solver_options, solver_picker
from pages.shared.state import initial, remember

DEFAULT_FAMILY = "pSP"
DEFAULT_KAPPA = 0.05
REGRESSION_FAIRNESS = (
    "A real-valued label: no constraint family is defined for one, so the runs train without a "
    "constraint and report the gap between the groups' mean predictions (mean gap, the exact "
    "demographic parity of paper 002's regressions)."
)
# a regression's (interval, κ, family, pairs, options): no family applies to it, and the
# default one only lets the solver list grey out the solvers that need a family
REGRESSION_CONSTRAINT = ((0.0, 1.0), DEFAULT_KAPPA, DEFAULT_FAMILY, "all", ())
KEYS = (
    "interval",
    "kappa",
    "family",
    "solvers",
    "cross_terms",
    "model",
    "hidden",
    "activation",
    "seconds",
    "pairs",
    "honour",
    "tune",
    *FAMILY_OPTION_KEYS,
    *OBJECTIVE_KEYS,
)
DEFAULT_HIDDEN = (64,)
HONOUR_CHOICES = {"train": "train", "val": "train + validation", HONOUR_OFF: "off"}


@dataclasses.dataclass(frozen=True)
class Problem:
    """What the sidebar chose, before it is tied to a data set."""

    interval: tuple[float, float]
    kappa: float
    family: str
    solvers: tuple[str, ...]
    configs: dict
    model: ModelSpec
    budget: Budget
    pairs: str = "all"
    options: tuple[tuple[str, OptionValue], ...] = ()
    objective: Objective = LogisticLoss()
    honour: str | None = None  # the split κ is honoured on (`engine.solvers.honour`), or None
    tune: bool = False  # tune each solver by its paper's protocol first (`engine.runs.tuning`)


# the group-loss gap's groups compared (paper 000); its losses compared are its own option
PAIRS_WORDS = {
    "all": "every pair of groups (Exp. 1)",
    "vs_mean": "each group against the mean over groups (eq. 4)",
}


def pairs_control() -> str:
    """For the group-loss gap: the groups compared (paper 000, eq. 4 and Exp. 1), as the
    constraint's `pairs`."""
    initial("pairs", "all")
    return st.sidebar.selectbox(
        "Groups compared", list(PAIRS_WORDS), key="pairs", format_func=PAIRS_WORDS.get
    )


def interval_words(interval: tuple[float, float]) -> str:
    alpha, beta = (round(100 * v) for v in interval)
    if alpha == 0 and beta == 100:
        return "all of each group's scores (full statistical parity)"
    if alpha == 0:
        return f"each group's top {beta} % of scores"
    return f"each group's top {alpha} %–{beta} % of scores"


def interval_control(key: str = "interval", family: str = DEFAULT_FAMILY) -> tuple[float, float]:
    """The interval slider; its caption says what I means for `family` (only pSP and pDP are
    defined on one; the others compare whole groups, and I then only sets the reported pSP)."""
    initial(key, (5, 30), int)
    low, high = st.sidebar.slider(
        "Interval I of ranks, % from the top of each group",
        0,
        100,
        key=key,
        step=1,
        help="I = [α, β): the scores ranked between α and β from the top, in each group separately",
    )
    if low >= high:
        raise UserError("the interval is empty: its start must be below its end (α < β)")
    words = f"I = [{low} %, {high} %): {interval_words((low / 100, high / 100))}"
    if not family_entry(family).uses_interval:
        words += f". {family} compares whole groups and does not use I; pSP on I is still reported"
    st.sidebar.caption(words)
    return low / 100, high / 100


def problem_controls(
    solver_choice: bool = True,
    task: Task = Task.CLASSIFICATION,
    honour_choice: bool = False,
    tune_choice: bool = False,
    n_groups: int | None = None,
) -> Problem:
    """What the sidebar chose for data whose label is of `task`: a classifier's constraint with
    I and κ; a regression has no constraint family, so its runs train without one (the
    constraint kept here only says so to the solver list) and report the mean gap. With
    `honour_choice`, a classifier's runs honour κ on the split the user picks (train by
    default); with `tune_choice`, the user may have each solver tune first. A solver defined
    for another number of protected groups than the data's `n_groups` is refused."""
    st.sidebar.header("Fairness")
    if task is Task.CLASSIFICATION:
        interval, kappa, family, pairs, options = _fairness_controls()
    else:
        st.sidebar.caption(REGRESSION_FAIRNESS)
        interval, kappa, family, pairs, options = REGRESSION_CONSTRAINT
    model = _model_controls()
    objective = objective_controls(task)
    variant = dict(options).get("variant") if family == "auc_gap" else None
    honour_choice = honour_choice and task is Task.CLASSIFICATION
    solvers, configs, budget, honour = (
        _solver_controls(family, model, objective.name, variant, honour_choice, n_groups)
        if solver_choice
        else ((), {}, Budget(), None)
    )
    tune = _tune_control() if tune_choice and honour_choice and solver_choice else False
    remember(*KEYS)
    return Problem(
        interval,
        kappa,
        family,
        tuple(solvers),
        configs,
        model,
        budget,
        pairs,
        options,
        objective,
        honour,
        tune,
    )


def honour_control(solvers: list[str], family: str) -> str | None:
    """The "Hold κ on" control: train (the default), train and validation, or off, for the
    chosen `solvers`; the split, or None when off or when no chosen solver can hold κ (the
    control is then greyed out). The solvers that cannot are named under it, with why: their
    runs solve once."""
    refusals = {name: honour_refusal(name, family) for name in solvers}
    able = [name for name, refusal in refusals.items() if refusal is None]
    initial("honour", DEFAULT_HONOUR)
    choice = st.sidebar.radio(
        "Hold κ on",
        list(HONOUR_CHOICES),
        key="honour",
        format_func=HONOUR_CHOICES.get,
        horizontal=True,
        disabled=not able,
        help=f"train: κ {HOLDING_WORDS['train']}, each solve from the last model and within "
        f"the time budget. train + validation: κ {HOLDING_WORDS['val']}. off: the solver's "
        "paper's algorithm, solved once (its surrogate may hold while the exact value exceeds "
        "κ). The About page says why train is the default.",
    )
    for refusal in filter(None, refusals.values()):
        st.sidebar.caption(f"Not held: {refusal}.")
    return choice if able and choice != HONOUR_OFF else None


def _tune_control() -> bool:
    """The "Tune first" box: each chosen solver whose paper gives a grid runs one trial per
    setting within the time budget, and the run shown is the setting its rule picks."""
    initial("tune", False)
    return st.sidebar.checkbox(
        "Tune on validation first",
        key="tune",
        help="each solver whose paper gives a grid of settings (`python -m engine solvers` "
        "lists them) runs one trial per setting, each within the time budget, and the run "
        "shown is the setting its paper's rule picks on validation; the others run as they are",
    )


def _fairness_controls() -> tuple[
    tuple[float, float], float, str, str, tuple[tuple[str, OptionValue], ...]
]:
    """A classifier's constraint: its family, I, its options and κ."""
    families = family_names()
    initial("family", DEFAULT_FAMILY)
    family = st.sidebar.selectbox(
        "Constraint",
        families,
        key="family",
        help="pSP / pDP: partial statistical / demographic parity "
        "(paper 003); the others come from papers 000, 001 and 004",
    )
    entry = family_entry(family)
    st.sidebar.caption(f"{family}: {entry.quantity} ≤ κ ({entry.source})")
    interval = interval_control(family=family)
    pairs = pairs_control() if family == "group_loss_gap" else "all"
    options = family_option_controls(family)
    initial("kappa", DEFAULT_KAPPA, float)
    kappa = float(
        st.sidebar.number_input(
            "Tolerance κ",
            step=0.01,
            format="%g",
            key="kappa",
            help=f"{entry.quantity} ≤ κ: the largest allowed gap "
            "between groups" + (" within I" if entry.uses_interval else ""),
        )
    )
    return interval, kappa, family, pairs, options


def _model_controls() -> ModelSpec:
    """The model: linear (with or without group cross-terms) or an MLP of chosen widths and
    activation; widths that cannot be read are said, and the default widths used."""
    initial("model", "linear")
    initial("cross_terms", True)
    initial("hidden", " ".join(map(str, DEFAULT_HIDDEN)))
    initial("activation", "relu")
    with st.sidebar.expander("Model"):
        kind = st.selectbox("Model", ["linear", "mlp"], key="model")
        if kind == "linear":
            cross = st.checkbox("Group cross-terms (1, x, γ, γ·x)", key="cross_terms")
            return ModelSpec(kind=kind, cross_terms=cross)
        text = st.text_input(
            "Hidden layer widths",
            key="hidden",
            help="widths of the hidden layers, first to last, e.g. 64 32",
        )
        activation = st.selectbox("Activation", list(ACTIVATIONS), key="activation")
        try:
            return ModelSpec(kind=kind, hidden=hidden_widths(text), activation=activation)
        except UserError as error:
            st.error(f"{error}; using {' '.join(map(str, DEFAULT_HIDDEN))}")
            return ModelSpec(kind=kind, hidden=DEFAULT_HIDDEN, activation=activation)


def hidden_widths(text: str) -> tuple[int, ...]:
    """Layer widths from text such as "64 32" or "64, 32"."""
    parts = text.replace(",", " ").split()
    if not parts or not all(p.isdigit() for p in parts):
        raise UserError(f"hidden layer widths are whole numbers such as 64 32, not {text!r}")
    return tuple(int(p) for p in parts)


def _solver_controls(
    family: str,
    model: ModelSpec,
    objective: str,
    variant: str | None,
    honour_choice: bool,
    n_groups: int | None,
):
    st.sidebar.header("Solvers")
    regression = objective_type(objective).task is Task.REGRESSION
    solvers = solver_picker(family, model, objective, variant, regression, n_groups)
    initial("seconds", 60.0, float)
    seconds = float(
        st.sidebar.number_input(
            "Time budget per run (s)",
            1.0,
            3600.0,
            key="seconds",
            help="wall time: the run's records, its evaluations and holding κ spend it too, and the "
            "run ends within it (a benchmark study's is the solvers' own time instead)",
        )
    )
    honour = honour_control(solvers, family) if honour_choice else None
    configs = {}
    with st.sidebar.expander("Advanced solver settings"):
        for name in solvers:
            configs[name] = solver_options(name)
    if not solvers:
        raise UserError("choose at least one solver")
    return solvers, configs, Budget(max_seconds=seconds), honour


def base_spec(data: DataSpec, prepare: PrepareOptions, problem: Problem) -> RunSpec:
    """The run the controls describe, with its constraint, for the first chosen solver: what a
    sweep's grid varies (a reference solver's points drop the constraint there, and a point
    whose solver cannot honour κ its honoured split)."""
    constraint = ConstraintSpec(
        problem.family,
        problem.kappa,
        problem.interval,
        pairs=problem.pairs,
        options=problem.options,
    )
    return RunSpec(
        data=data,
        prepare=prepare,
        model=problem.model,
        constraint=constraint,
        interval=problem.interval,
        solver=problem.solvers[0],
        budget=problem.budget,
        seed=prepare.seed,
        objective=problem.objective,
        honour=problem.honour,
    )


def run_specs(data: DataSpec, prepare: PrepareOptions, problem: Problem) -> list[RunSpec]:
    """One RunSpec per chosen solver (the unconstrained one without a constraint)."""
    base = base_spec(data, prepare, problem)
    specs = sweep_specs(
        base,
        [problem.kappa],
        [problem.interval],
        list(problem.solvers),
        [prepare.seed],
        configs=problem.configs,
    )
    for spec in specs:
        spec.validate()
    return specs
