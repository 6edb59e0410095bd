"""Explore's tuned runs (`engine.runs.tuning`): which runs the Run button queues when solvers
tune first, the tuned run each shows once its trials have ended, and a line per tuning with its
trials' table."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from engine.runs.describe import run_label
from engine.runs.quantities import held_quantity
from engine.runs.spec import RunSpec
from engine.runs.store import Store
from engine.runs.submit import submit
from engine.runs.tuning import TuningProgress, tunes, tuning_progress
from engine.status import RETRYABLE
from pages.shared.layout import MISSING

POLL_SECONDS = 1.0  # how often the tuning lines refresh while trials run


@dataclass(frozen=True)
class TunedView:
    """The view's runs: `plain` run as they are; each of `tunings` first runs its trials."""

    plain: tuple[RunSpec, ...]
    tunings: tuple[TuningProgress, ...]

    def queued_by_run(self) -> list[RunSpec]:
        """What the Run button queues: the plain runs and every trial."""
        return [*self.plain, *(trial for t in self.tunings for trial in t.trials)]

    def shown(self) -> list[str]:
        """The runs the view shows: the plain ones, then each tuned run once it is chosen."""
        tuned = [t.tuned.final.run_id for t in self.tunings if t.tuned and t.tuned.final]
        return [*(spec.run_id for spec in self.plain), *tuned]


def tuned_view(store: Store, specs: list[RunSpec], tune: bool) -> TunedView:
    """The view's runs; with `tune`, each solver that can tune (`tunes`) runs its trials first."""
    tuned = [spec for spec in specs if tune and tunes(spec)]
    plain = tuple(spec for spec in specs if spec not in tuned)
    return TunedView(plain, tuple(tuning_progress(store, spec) for spec in tuned))


def queue_chosen(store: Store, view: TunedView, idle_exit: float) -> None:
    """Queue each tuned run whose trials have all ended and that is not in the store yet (or
    ended without a result it can keep)."""
    chosen = [t.tuned.final for t in view.tunings if t.tuned and t.tuned.final]
    statuses = store.statuses([spec.run_id for spec in chosen])
    waiting = [spec for spec in chosen if statuses.get(spec.run_id) in (None, *RETRYABLE)]
    if waiting:
        submit(waiting, store, idle_exit=idle_exit)


def tuning_lines(store: Store, view: TunedView) -> None:
    """A line per tuning: its trials' progress while they run (refreshed; the page reruns when
    one ends, so that the chosen run is queued and shown), then the choice, its trials' table
    folded beneath."""
    if not view.tunings:
        return
    running = any(t.ended < len(t.trials) for t in view.tunings if t.stored)

    @st.fragment(run_every=POLL_SECONDS if running else None)
    def lines() -> None:
        for before in view.tunings:
            now = tuning_progress(store, before.spec)
            if now.ended != before.ended:
                st.rerun()
            _tuning_line(now)

    lines()


def _tuning_line(progress: TuningProgress) -> None:
    name = run_label(progress.spec)
    total = len(progress.trials)
    if progress.tuned is None:
        if progress.stored == 0:
            st.caption(f"{name} tunes first: {total} trials, one per setting of its paper's grid.")
        else:
            st.caption(f"Tuning {name}: {progress.ended} of {total} trials ended.")
        return
    choice = progress.tuned.choice
    title = f"Tuned {name} on {total} trials: {choice.headline()}"
    with st.expander(title, key=f"tuning:{progress.spec.run_id}"):
        st.caption(f"{choice.words()} Grid: {choice.plan.words()}.")
        held = held_quantity(progress.spec)
        frame = pd.DataFrame(choice.rows(held.name if held is not None else "value"))
        number = st.column_config.NumberColumn
        config = {
            column: number(format="%.4f") for column in frame.columns if column.startswith("val ")
        }
        st.dataframe(frame, hide_index=True, placeholder=MISSING, column_config=config)
