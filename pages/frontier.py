"""Frontier: sweep κ (and intervals) for the chosen solvers and seeds; accuracy against exact
fairness on held-out data, with confidence intervals; click a point to see that model."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import plots
from engine.errors import UserError
from engine.fairness.families import quantity_name
from engine.runs import Store, submit_sweep, sweep_specs
from engine.runs.frontier import frontier, frontier_table
from engine.runs.results import run_result
from engine.status import ACTIVE
from pages.shared.data_controls import data_controls, prepared_data
from pages.shared.problem_controls import base_spec, problem_controls
from pages.shared.state import initial, remember
from pages.shared.views import score_figures, show_group_problems


def parse_numbers(text: str, name: str) -> list[float]:
    try:
        values = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise UserError(
            f"{name}: write numbers separated by commas, e.g. 0.01, 0.05, 0.1"
        ) from None
    if not values:
        raise UserError(f"{name}: give at least one value")
    return values


def parse_intervals(text: str) -> list[tuple[float, float]]:
    intervals = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            low, high = (float(v) for v in part.replace("%", "").split("-"))
        except ValueError:
            raise UserError(
                f"intervals are written like 5-30, 5-50 (percent), not '{part}'"
            ) from None
        if not 0 <= low < high <= 100:
            raise UserError(f"interval {part}: needs 0 ≤ start < end ≤ 100")
        intervals.append((low / 100, high / 100))
    return intervals


def main() -> None:
    st.title("Accuracy–fairness frontier")
    store = Store()
    try:
        data_spec, prepare = data_controls()
        problem = problem_controls()
        st.sidebar.header("Sweep")
        initial("kappas", "0.28, 0.2, 0.1, 0.05, 0.01")
        initial("extra_intervals", "")
        initial("n_seeds", 1, int)
        kappas = parse_numbers(st.sidebar.text_input("κ values", key="kappas"), "κ values")
        extra = parse_intervals(st.sidebar.text_input("More intervals (%, e.g. 5-50, 5-90)",
                                                      key="extra_intervals"))  # fmt: skip
        seeds = list(range(int(st.sidebar.number_input("Seeds (splits)", 1, 10, key="n_seeds"))))
        remember("kappas", "extra_intervals", "n_seeds")
        base = base_spec(data_spec, prepare, problem)
        intervals = [problem.interval, *[i for i in extra if i != problem.interval]]
        specs = sweep_specs(base, kappas, intervals, list(problem.solvers), seeds,
                            configs=problem.configs)  # fmt: skip
        for spec in specs:
            spec.validate()
        prepared = prepared_data(data_spec, prepare)
    except UserError as error:
        st.error(str(error))
        return
    too_small = show_group_problems(prepared, problem.family, kappas, intervals)
    if st.sidebar.button(f"Run sweep ({len(specs)} runs)", type="primary", key="sweep",
                         disabled=too_small):  # fmt: skip
        grid = {"kappas": kappas, "intervals": intervals, "solvers": list(problem.solvers),
                "seeds": seeds}  # fmt: skip
        submit_sweep(f"{len(specs)} runs", specs, grid, store, workers=2)
    _view(store, [s.run_id for s in specs], prepared, problem)


def _view(store: Store, run_ids: list[str], prepared, problem) -> None:
    known = {r.id: r for r in store.runs() if r.id in set(run_ids)}
    if not known:
        st.info("Press **Run sweep**: points appear as runs finish; runs computed before for the "
                "same settings are reused.")  # fmt: skip
        return
    active = any(r.status in ACTIVE for r in known.values())
    names = {"constraint": quantity_name(problem.family), "psp": "pSP", "pdp": "pDP",
             "sp": "SP (pSP on all ranks)", "dp": "DP gap"}  # fmt: skip
    metric = st.selectbox("Fairness axis (exact, held-out)", list(names), key="metric",
                          format_func=lambda m: f"1 − {names[m]}"
                          + (" (the constrained quantity)" if m == "constraint" else ""))  # fmt: skip
    split = st.radio("Evaluated on", ["test", "val"], horizontal=True, key="split")

    @st.fragment(run_every=1.0 if active else None)
    def live() -> None:
        rows = {r.id: r for r in store.runs() if r.id in set(run_ids)}
        done = [r for r in rows.values() if r.has_model]
        st.progress(len(done) / len(run_ids), text=f"{len(done)} of {len(run_ids)} runs finished")
        result = frontier([run_result(r, store, problem.family) for r in done], metric=metric,
                          split=split)  # fmt: skip
        if not result.points:
            return
        event = st.plotly_chart(plots.frontier_figure(result, quantity_name(problem.family)),
                                on_select="rerun",
                                selection_mode="points", key="frontier", width="stretch")  # fmt: skip
        _table(result, quantity_name(problem.family))
        _selected(store, event, prepared, problem)

    live()


def _table(result, quantity: str) -> None:
    """The points as a compact table: κ, I, seeds, accuracy and fairness (with their intervals
    only when some point has several seeds), the realised constrained value and whether it
    meets κ."""
    frame = pd.DataFrame(frontier_table(result.points))
    frame["meets κ"] = frame["meets_kappa"].map({True: "✓", False: "✗ misses κ"}).fillna("—")
    frame["I"] = [f"[{a:.0%}, {b:.0%})" for a, b in zip(frame["alpha"], frame["beta"], strict=True)]
    columns = ["solver", "kappa", "I", "n", "accuracy", "accuracy_ci", "fairness", "fairness_ci",
               "constraint", "meets κ", "dominated"]  # fmt: skip
    if frame["accuracy_ci"].isna().all():
        columns = [c for c in columns if not c.endswith("_ci")]
    number = st.column_config.NumberColumn
    st.dataframe(frame[columns], hide_index=True, width="content", column_config={
        "solver": st.column_config.TextColumn(width="medium"),
        "kappa": number("κ", format="%g"),
        "n": number("seeds"),
        "accuracy": number(format="%.4f"),
        "accuracy_ci": number("± (95 %)", format="%.4f"),
        "fairness": number(f"1 − {quantity}" if result.metric == "constraint" else "fairness",
                           format="%.4f"),
        "fairness_ci": number("± (95 %)", format="%.4f"),
        "constraint": number(f"{quantity} ({result.split})", format="%.4f"),
    })  # fmt: skip


def _selected(store: Store, event, prepared, problem) -> None:
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    if not points:
        st.caption("Click a point to see that model's score distributions.")
        return
    run_ids = points[0].get("customdata") or []
    run_id = run_ids[0] if isinstance(run_ids, list) else run_ids
    spec = store.run(run_id).spec
    kappa = spec["constraint"]["kappa"] if spec.get("constraint") else problem.kappa
    figures = score_figures(store, run_id, None, prepared.group_names, tuple(spec["interval"]),
                            kappa)  # fmt: skip
    for view, (_, figure) in enumerate(figures):  # keyed by position: updated in place
        st.plotly_chart(figure, width="stretch", key=f"selected_view_{view}")


main()
