"""Sidebar widgets that choose the data set, the protected attribute and its grouping."""

from __future__ import annotations

import streamlit as st

from engine.data.acs import ACSSpec, SyntheticACSSpec
from engine.data.acs_tasks import ALL_TASKS
from engine.data.adult import PROTECTED as ADULT_PROTECTED
from engine.data.adult import AdultSpec
from engine.data.classic import CLASSIC, ClassicSpec
from engine.data.csv_source import CSVSpec, Survey, survey
from engine.data.grouping import MODES, GroupingSpec
from engine.data.paths import acs_root
from engine.data.prepare import PrepareOptions
from engine.data.prepared import Prepared
from engine.data.sources import DataSpec, load_prepared
from engine.data.subgroups import SubgroupSpec
from engine.data.synthetic_pums import FULL_SIZE_PERSONS
from engine.data.uploads import find_upload, save_upload, upload_key
from engine.errors import UserError
from engine.task import Task
from pages.shared.state import initial, remember

ACS_PROTECTED = ("SEX", "RAC1P", "MAR", "AGEP")
SOURCES = {
    "Adult (bundled)": "adult",
    "COMPAS (recidivism)": "compas",
    "German credit (bundled)": "german",
    "Communities and Crime (bundled)": "crime",
    "Law school (bar passage)": "law",
    "ACS census files": "acs",
    "Synthetic ACS records": "synthetic",
    "Upload a CSV": "csv",
}
KEYS = (
    "source",
    "task",
    "year",
    "states",
    "acs_root",
    "download",
    "synthetic_state",
    "persons",
    "grouping",
    "top_k",
    "min_size",
    "seed",
)
UPLOAD, LABEL = "upload", "csv_label"  # the URL's names of an uploaded file and its label
GROUPING_DEFAULTS = {"grouping": "auto", "top_k": 3, "min_size": 50, "seed": 0}


def data_controls() -> tuple[DataSpec, PrepareOptions]:
    """The data spec and preparation the sidebar describes (raises UserError with a message)."""
    st.sidebar.header("Data")
    initial("source", "Adult (bundled)")
    kind = SOURCES[st.sidebar.radio("Data set", list(SOURCES), key="source")]
    spec, candidates = _source(kind)
    options = _grouping(candidates, kind)
    remember(*KEYS)
    return spec, options


def _source(kind: str) -> tuple[DataSpec, tuple[str, ...]]:
    if kind == "adult":
        return AdultSpec(), ADULT_PROTECTED
    if kind in CLASSIC:  # a missing file is explained when it is prepared
        return ClassicSpec(kind, _classic_label(kind)), CLASSIC[kind].protected
    if kind in ("acs", "synthetic"):
        initial("task", "income")
        initial("year", 2018, int)
        task = st.sidebar.selectbox(
            "Task", list(ALL_TASKS), key="task", format_func=lambda n: _marked(n, ALL_TASKS[n].task)
        )
        year = int(st.sidebar.number_input("Year", 2014, 2030, key="year"))
        if kind == "synthetic":
            initial("synthetic_state", "CT")
            initial("persons", 5000, int)
            state = st.sidebar.text_input(
                "State(s), comma-separated, or all", key="synthetic_state"
            )
            persons = int(
                st.sidebar.number_input(
                    "Persons",
                    100,
                    FULL_SIZE_PERSONS,
                    key="persons",
                    help="shared among several states by population",
                )
            )
            return SyntheticACSSpec(
                state=state, year=year, task=task, n_persons=persons
            ), ACS_PROTECTED
        initial("states", "CT")
        initial("acs_root", str(acs_root()))
        initial("download", False)
        states = st.sidebar.text_input("State(s), comma-separated, or all", key="states")
        root = st.sidebar.text_input("ACS folder", key="acs_root")
        download = st.sidebar.checkbox("Allow download from the census website", key="download")
        codes = tuple(s for s in (x.strip() for x in states.split(",")) if s)
        spec = ACSSpec(states=codes, year=year, task=task, root=root, allow_download=download)
        return spec, ACS_PROTECTED
    path = _uploaded_file()
    found = _survey(path)
    columns, unusable = found.columns, found.left_out
    label = _label(path, found)
    initial("positive", "")
    positive = st.sidebar.text_input("Positive label value (empty: 1 / yes / true)", key="positive")
    options = [c for c in columns if c != label]
    initial("protected", [])
    st.session_state["protected"] = [c for c in st.session_state["protected"] if c in options]
    protected = st.sidebar.multiselect("Protected column(s)", options, key="protected")
    remember("positive", "protected")
    if not protected:
        raise UserError("choose at least one protected column")
    features = _features(path, columns, unusable, label, tuple(protected))
    spec = CSVSpec(
        path=path,
        label=label,
        protected=tuple(protected),
        positive=positive or None,
        features=features,
    )
    return spec, tuple(protected)


def _uploaded_file() -> str:
    """The uploaded CSV's saved path: the file just uploaded, else the one a link names
    (`UPLOAD` in the URL) when this machine still keeps it; a link whose file is gone says
    which file to upload again."""
    upload = st.sidebar.file_uploader("CSV file", type=["csv"], key="csv")
    if upload is not None:
        path = save_upload(upload.getvalue(), upload.name)
        st.query_params[UPLOAD] = upload_key(path)
        return str(path)
    if UPLOAD not in st.query_params:
        raise UserError("upload a CSV file to continue")
    name, path = find_upload(st.query_params[UPLOAD])
    if path is None:
        raise UserError(
            f"this view was made from an uploaded file, {name}, which a link cannot "
            "carry and this server no longer keeps: upload it again to restore the "
            "view"
        )
    st.sidebar.caption(
        f"{name}, uploaded before and kept on this server; upload a file to replace it."
    )
    return str(path)


def _label(path: str, found: Survey) -> str:
    """The label column: the one named like a label preselected, else none until the user
    picks one (a file's last column is no more likely a label than any other)."""
    columns = found.columns
    linked = st.query_params.get(LABEL)  # the label of the view a link restores
    guess = linked if linked in columns else found.label
    index = None if guess is None else columns.index(guess)
    label = st.sidebar.selectbox(
        "Label column",
        columns,
        index=index,
        key=f"label_{path}",
        placeholder="Choose the label column",
        help="Preselected when a column is named like a label (label, target, y, class, "
        "outcome, default, income, …).",
    )
    if label is None:
        raise UserError(
            "choose the label column: no column of this file is named like a label "
            "(label, target, y, class, outcome, …)"
        )
    st.query_params[LABEL] = label
    return label


def _classic_label(kind: str) -> str:
    """The label of a classic data set that has several (e.g. Law school's bar passage or its
    real-valued undergraduate GPA); its only label otherwise."""
    labels = CLASSIC[kind].labels
    if len(labels) == 1:
        return next(iter(labels))
    key = f"label_{kind}"
    initial(key, next(iter(labels)))
    if st.session_state[key] not in labels:
        st.session_state[key] = next(iter(labels))
    name = st.sidebar.selectbox(
        "Label",
        list(labels),
        key=key,
        format_func=lambda n: _marked(labels[n].description, labels[n].task),
        help="a real-valued label trains a regression (paper 002's "
        "ridge regression); the others a classifier",
    )
    remember(key)
    return name


def _marked(text: str, task: Task) -> str:
    """A label's name in a select, marked when it is real-valued (a regression's)."""
    return text if task is Task.CLASSIFICATION else f"{text} (real-valued)"


def _features(
    path: str,
    columns: tuple[str, ...],
    unusable: dict[str, str],
    label: str,
    protected: tuple[str, ...],
) -> tuple[str, ...] | None:
    """The feature columns picked besides the protected ones; None when they are the suggested
    ones, so that the run is the same as one that names no features (as on the command line)."""
    candidates = [c for c in columns if c != label and c not in protected]
    suggested = [c for c in candidates if c not in unusable]
    left_out = [f"'{c}' ({unusable[c]})" for c in candidates if c in unusable]
    picked = st.sidebar.multiselect(
        "Feature columns (the protected ones are features too)",
        candidates,
        default=suggested,
        key="features_" + "|".join((path, label, *protected)),
    )
    if left_out:
        st.sidebar.caption("Left out by default: " + "; ".join(left_out) + ".")
    if set(picked) == set(suggested):
        return None
    return tuple(c for c in candidates if c in picked)


@st.cache_data(max_entries=8, show_spinner=False)
def _survey(path: str) -> Survey:
    """Column names, the columns left out of the default features and the label by name (the
    file never changes: its folder is named by its content)."""
    return survey(path)


def _grouping(candidates: tuple[str, ...], kind: str) -> PrepareOptions:
    key = f"attribute_{kind}"
    initial(key, [candidates[0]])
    if any(a not in candidates for a in st.session_state[key]):
        st.session_state[key] = [candidates[0]]
    attributes = st.sidebar.multiselect(
        "Protected attribute (two: their intersection)", candidates, max_selections=2, key=key
    )
    remember(key)
    initial("grouping", GROUPING_DEFAULTS["grouping"])
    for name in ("top_k", "min_size", "seed"):
        initial(name, GROUPING_DEFAULTS[name], int)
    with st.sidebar.expander("Grouping and split"):
        mode = st.selectbox(
            "Grouping",
            MODES,
            key="grouping",
            help="auto: every value (numbers: bins); binary: largest vs rest",
        )
        k = int(st.number_input("Groups kept (top-k)", 1, 20, key="top_k"))
        min_size = int(st.number_input("Minimum group size", 1, 10_000, key="min_size"))
        seed = int(st.number_input("Split seed", 0, 10_000, key="seed"))
        subgroups = _subgroups(candidates, kind)
    if not attributes:
        raise UserError("choose a protected attribute")
    return _options(attributes, mode, k, min_size, seed, subgroups)


def _subgroups(candidates: tuple[str, ...], kind: str) -> SubgroupSpec | None:
    """Overlapping subgroups for the intersectional hinge (paper 001 §5.3): thresholds on
    numeric protected columns, e.g. Communities and Crime's shares of residents."""
    key = f"subgroups_{kind}"
    initial(key, [])
    initial("subgroup_thresholds", 10, int)
    columns = st.multiselect(
        "Overlapping subgroups (intersectional hinge)",
        candidates,
        key=key,
        help="Rows whose every chosen numeric column is at least one of its quantile thresholds, "
        "kept above 1 % of the training rows: one constraint row each (paper 001, §5.3).",
    )
    thresholds = int(
        st.number_input("Thresholds per subgroup column", 2, 20, key="subgroup_thresholds")
    )
    remember(key, "subgroup_thresholds")
    return SubgroupSpec(tuple(columns), thresholds) if columns else None


def _options(
    attributes, mode: str, k: int, min_size: int, seed: int, subgroups: SubgroupSpec | None = None
) -> PrepareOptions:
    return PrepareOptions(
        grouping=tuple(GroupingSpec(a, mode, k=k) for a in attributes),
        min_group_size=min_size,
        seed=seed,
        subgroups=subgroups,
    )


def default_data() -> tuple[DataSpec, PrepareOptions]:
    """What the sidebar chooses before anyone changes it: Adult, its first protected attribute."""
    defaults = GROUPING_DEFAULTS
    options = _options(
        (ADULT_PROTECTED[0],),
        defaults["grouping"],
        defaults["top_k"],
        defaults["min_size"],
        defaults["seed"],
    )
    return AdultSpec(), options


def prepared_data(spec: DataSpec, options: PrepareOptions, progress=None) -> Prepared:
    """The prepared arrays, shared by every session and rerun (they never change once made);
    missing census files are downloaded first, with progress, when that is allowed."""
    spec.files(progress)
    return _prepared(spec, options)


@st.cache_resource(max_entries=8, show_spinner=False)
def _prepared(spec: DataSpec, options: PrepareOptions) -> Prepared:
    return load_prepared(spec, options)
