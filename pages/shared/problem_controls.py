"""Sidebar widgets for the problem (I, κ, constraint, model) and the solvers; they build the
RunSpecs of the current view."""

from __future__ import annotations

import dataclasses

import streamlit as st

from engine.data.prepare import PrepareOptions
from engine.data.sources import DataSpec
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import family_entry, family_names
from engine.models import ModelSpec
from engine.runs import RunSpec, sweep_specs
from engine.solvers.catalogue import solver_card, solver_names
from engine.solvers.options import Budget, config_fields, config_from_dict
from pages.shared.state import initial, remember

DEFAULT_FAMILY = "pSP"
DEFAULT_SOLVERS = ["idca", "unconstrained"]
KEYS = ("interval", "kappa", "family", "solvers", "cross_terms", "model", "seconds")


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


def interval_words(interval: tuple[float, float]) -> str:
    alpha, beta = (round(100 * v) for v in interval)
    if alpha == 0 and beta == 100:
        return "all of each group's scores (full statistical parity)"
    if alpha == 0:
        return f"each group's top {beta} % of scores"
    return f"each group's top {alpha} %–{beta} % of scores"


def interval_control(key: str = "interval") -> tuple[float, float]:
    initial(key, (5, 30), int)
    low, high = st.sidebar.slider(
        "Interval I of ranks, % from the top of each group", 0, 100, key=key, step=1,
        help="I = [α, β): the scores ranked between α and β from the top, in each group separately",
    )  # fmt: skip
    if low >= high:
        raise UserError("the interval is empty: its start must be below its end (α < β)")
    st.sidebar.caption(f"I = [{low} %, {high} %): {interval_words((low / 100, high / 100))}")
    return low / 100, high / 100


def problem_controls(solver_choice: bool = True) -> Problem:
    st.sidebar.header("Fairness")
    interval = interval_control()
    initial("kappa", 0.05, float)
    kappa = float(st.sidebar.number_input("Tolerance κ", step=0.01, format="%.3f", key="kappa",
                                          help="pSP ≤ κ: the largest allowed gap between groups "
                                          "within I, on a 0–1 scale"))  # fmt: skip
    families = family_names()
    initial("family", DEFAULT_FAMILY)
    family = st.sidebar.selectbox("Constraint", families, key="family",
                                  help="pSP / pDP: partial statistical / demographic parity "
                                  "(paper 003); the others come from papers 000, 001 and 004")  # fmt: skip
    st.sidebar.caption(f"{family}: {family_entry(family).source}")
    initial("model", "linear")
    initial("cross_terms", True)
    with st.sidebar.expander("Model"):
        kind = st.selectbox("Model", ["linear", "mlp"], key="model")
        cross = st.checkbox("Group cross-terms (1, x, γ, γ·x)", key="cross_terms")
    model = ModelSpec(kind=kind, cross_terms=cross)
    solvers, configs, budget = (
        _solver_controls(family, model) if solver_choice else ((), {}, Budget())
    )
    remember(*KEYS)
    return Problem(interval, kappa, family, tuple(solvers), configs, model, budget)


def _solver_controls(family: str, model: ModelSpec):
    st.sidebar.header("Solvers")
    usable, refused = [], []
    for name in solver_names():
        try:
            solver_card(name).check_combination(model, None if name == "unconstrained" else family)
            usable.append(name)
        except UserError:
            refused.append(name)
    initial("solvers", DEFAULT_SOLVERS)
    st.session_state["solvers"] = [s for s in st.session_state["solvers"] if s in usable]
    solvers = st.sidebar.multiselect("Solvers", usable, key="solvers")
    if refused:
        st.sidebar.caption(f"Not for {family} with this model: {', '.join(refused)}")
    initial("seconds", 60.0, float)
    seconds = float(st.sidebar.number_input("Time budget per run (s)", 1.0, 3600.0, key="seconds"))
    configs = {}
    with st.sidebar.expander("Advanced solver settings"):
        for name in solvers:
            configs[name] = _options(name)
    if not solvers:
        raise UserError("choose at least one solver")
    return solvers, configs, Budget(max_seconds=seconds)


def _options(solver: str) -> dict:
    st.markdown(f"**{solver}**")
    card = solver_card(solver)
    values = {}
    for field in config_fields(card.Config):
        key = f"opt:{solver}:{field['name']}"
        default = field["default"]
        if isinstance(default, bool):
            values[field["name"]] = st.checkbox(
                field["name"], value=default, key=key, help=field["help"]
            )
        elif isinstance(default, int | float):
            values[field["name"]] = st.number_input(field["name"], value=default, key=key,
                                                    help=field["help"], format=None)  # fmt: skip
        else:
            values[field["name"]] = st.text_input(field["name"], value=str(default), key=key,
                                                  help=field["help"])  # fmt: skip
    return dataclasses.asdict(config_from_dict(card.Config, values))


def run_specs(data: DataSpec, prepare: PrepareOptions, problem: Problem) -> list[RunSpec]:
    """One RunSpec per chosen solver (the unconstrained one without a constraint)."""
    constraint = ConstraintSpec(problem.family, problem.kappa, problem.interval)
    base = RunSpec(data=data, prepare=prepare, model=problem.model, constraint=constraint,
                   interval=problem.interval, solver=problem.solvers[0],
                   budget=problem.budget, seed=prepare.seed)  # fmt: skip
    specs = sweep_specs(base, [problem.kappa], [problem.interval], list(problem.solvers),
                        [prepare.seed], configs=problem.configs)  # fmt: skip
    for spec in specs:
        spec.validate()
    return specs
