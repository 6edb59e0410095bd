"""FairFront — choose a data set and a protected attribute, and see how its groups look."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import streamlit as st

from engine.data.acs import ACSSpec, SyntheticACSSpec
from engine.data.acs_tasks import TASKS
from engine.data.adult import PROTECTED as ADULT_PROTECTED
from engine.data.adult import AdultSpec
from engine.data.csv_source import CSVSpec
from engine.data.grouping import MODES, GroupingSpec
from engine.data.paths import acs_root, cache_root
from engine.data.prepare import PrepareOptions
from engine.data.prepared import group_table
from engine.data.sources import load_prepared
from engine.errors import UserError

ACS_PROTECTED = ("SEX", "RAC1P", "MAR", "AGEP")
SOURCES = {
    "Adult (bundled)": "adult",
    "ACS census files": "acs",
    "Synthetic ACS records": "synthetic",
    "Upload a CSV": "csv",
}


def choose_source():
    """Sidebar widgets for the data source; returns (spec, candidate protected attributes)."""
    kind = SOURCES[st.sidebar.radio("Data set", list(SOURCES), key="source")]
    if kind == "adult":
        return AdultSpec(), ADULT_PROTECTED
    if kind in ("acs", "synthetic"):
        task = st.sidebar.selectbox("Task", list(TASKS), key="task")
        year = int(st.sidebar.number_input("Year", 2014, 2030, 2018, key="year"))
        if kind == "synthetic":
            state = st.sidebar.text_input("State", "CT", key="synthetic_state")
            persons = int(st.sidebar.number_input("Persons", 100, 200_000, 5000, key="persons"))
            return SyntheticACSSpec(
                state=state, year=year, task=task, n_persons=persons
            ), ACS_PROTECTED
        states = st.sidebar.text_input("State(s), comma-separated", "CT", key="states")
        root = st.sidebar.text_input("ACS folder", str(acs_root()), key="acs_root")
        download = st.sidebar.checkbox("Allow download from the census website", key="download")
        codes = tuple(s for s in (x.strip() for x in states.split(",")) if s)
        return ACSSpec(
            states=codes, year=year, task=task, root=root, allow_download=download
        ), ACS_PROTECTED
    upload = st.sidebar.file_uploader("CSV file", type=["csv"], key="csv")
    if upload is None:
        raise UserError("upload a CSV file to continue")
    path = save_upload(upload.getvalue())
    columns = pd.read_csv(path, nrows=0).columns.tolist()
    label = st.sidebar.selectbox("Label column", columns, index=len(columns) - 1, key="label")
    positive = st.sidebar.text_input("Positive label value (empty: 1 / yes / true)", key="positive")
    protected = st.sidebar.multiselect(
        "Protected column(s)", [c for c in columns if c != label], key="protected"
    )
    if not protected:
        raise UserError("choose at least one protected column")
    spec = CSVSpec(
        path=str(path), label=label, protected=tuple(protected), positive=positive or None
    )
    return spec, tuple(protected)


def save_upload(content: bytes) -> Path:
    folder = cache_root() / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(content).hexdigest()[:24]}.csv"
    if not path.exists():
        path.write_bytes(content)
    return path


def choose_grouping(candidates: tuple[str, ...]) -> PrepareOptions:
    attributes = st.sidebar.multiselect(
        "Protected attribute (two give their intersection)", candidates,
        default=[candidates[0]], max_selections=2, key=f"attribute:{','.join(candidates)}",
    )  # fmt: skip
    mode = st.sidebar.selectbox("Grouping", MODES, key="grouping")
    k = int(st.sidebar.number_input("Groups kept (top-k)", 1, 20, 3, key="top_k"))
    min_size = int(st.sidebar.number_input("Minimum group size", 1, 10_000, 50, key="min_size"))
    seed = int(st.sidebar.number_input("Split seed", 0, 10_000, 0, key="seed"))
    return PrepareOptions(
        grouping=tuple(GroupingSpec(a, mode, k=k) for a in attributes),
        min_group_size=min_size,
        seed=seed,
    )


def show_summary(summary: dict) -> None:
    st.subheader(summary["dataset"])
    if summary["synthetic"]:
        st.warning("Synthetic data: generated records in the census layout, not real people.")
    if summary["reduced"]:
        st.info("Reduced task: these files lack " + ", ".join(summary["missing_features"]))
    rows = summary["rows"]
    cols = st.columns(4)
    cols[0].metric("Training rows", f"{rows['train']:,}")
    cols[1].metric("Validation rows", f"{rows['val']:,}")
    cols[2].metric("Test rows", f"{rows['test']:,}")
    cols[3].metric("Encoded features", summary["features"])
    st.caption(f"Label: {summary['label']}")
    st.dataframe(pd.DataFrame(group_table(summary)), hide_index=True, width="stretch")
    for warning in summary["warnings"]:
        st.warning(warning)
    for note in summary["notes"]:
        st.caption(note)


def main() -> None:
    st.set_page_config(page_title="FairFront", layout="wide")
    st.title("FairFront")
    st.caption("Train classifiers under fairness constraints and explore the trade-off.")
    try:
        spec, candidates = choose_source()
        options = choose_grouping(candidates)
        if not options.grouping:
            raise UserError("choose a protected attribute")
        progress = st.progress(0.0, text="Preparing data")

        def on_download(received: int, total: int | None) -> None:
            fraction = min(received / total, 1.0) if total else 0.0
            progress.progress(fraction, text=f"Downloading: {received / 2**20:.1f} MB")

        prepared = load_prepared(spec, options, progress=on_download)
        progress.empty()
        show_summary(prepared.summary())
    except UserError as error:
        st.error(str(error))


main()
