"""Any bytes, any column choice: loading and preparing a CSV succeeds or raises UserError.

Tables are drawn with random column names (repeated, empty, spaced, quoted), cell types (whole
and real numbers, huge and infinite ones, text, booleans, gaps), labels with one to four values
and protected columns with tiny groups; their bytes are written in a random encoding, sometimes
cut short or sprinkled with junk, and some files are empty or pure noise. They go through the
path the app and the command line take: the column survey of the upload, then `load_prepared`
of a CSVSpec. A success must give finite arrays, and no number may overflow on the way.
`--hypothesis-show-statistics` shows how many were prepared and how many refused.
"""

import csv
import io
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.data.csv_source import CSVSpec, survey_csv
from engine.data.grouping import MODES, GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared
from engine.errors import UserError

CLEAN_NAMES = ["y", "g", "G", "sex", "id", "a,b", 'say "hi"', "年齢", "x"]
NAMES = [*CLEAN_NAMES, " sex", "", "x "]  # repeated once spaces are stripped, or empty
LABELS = [
    ["0", "1"],
    ["no", "yes"],
    ["true", "false"],
    ["bad", "good"],
    ["A", "B", "C"],
    ["1", "2", "3", "4"],
    ["only"],
]
WORDS = ["a", "A", "b", "yes", "no", "1", "0", "true", "Other", "other ", "n/a", "", " ", "é"]
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=40)
NUMBERS = st.one_of(
    st.integers(-5, 5),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, -1e308, 1e-310, 0.5]),
)


@st.composite
def columns(draw, rows: int, flavour: str | None = None) -> list[str]:
    """One column's cells as text, of one flavour (or of all of them mixed)."""
    flavours = ["few", "numbers", "ints", "bools", "text", "mixed", "empty"]
    flavour = flavour or draw(st.sampled_from(flavours))
    if flavour == "label":
        cell = st.sampled_from(draw(st.sampled_from(LABELS)))
    elif flavour == "few":  # 1 to 4 values: labels and protected columns with tiny groups
        values = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True))
        weights = draw(st.lists(st.integers(1, 20), min_size=len(values), max_size=len(values)))
        pool = [v for v, w in zip(values, weights, strict=True) for _ in range(w)]
        cell = st.sampled_from(pool)
    elif flavour == "numbers":
        cell = NUMBERS.map(repr)
    elif flavour == "ints":
        cell = st.integers(0, 3 * rows + 5).map(str)
    elif flavour == "bools":
        cell = st.sampled_from(["True", "False"])
    elif flavour == "text":
        cell = TEXT
    elif flavour == "mixed":
        cell = st.one_of(NUMBERS.map(repr), st.sampled_from(WORDS), TEXT)
    else:
        cell = st.just("")
    gaps = draw(st.sampled_from([0.0] * (8 if flavour == "label" else 3) + [0.05, 0.5]))
    cells = draw(st.lists(cell, min_size=rows, max_size=rows))
    holes = draw(st.lists(st.floats(0, 1), min_size=rows, max_size=rows))
    return [c if h >= gaps else "" for c, h in zip(cells, holes, strict=True)]


@st.composite
def csv_files(draw) -> tuple[bytes, list[str], list[str]]:
    """The bytes of a file, the header it was written with and the first column's values:
    mostly a label-like column, a protected-like column with tiny groups, and up to four more."""
    kind = draw(st.sampled_from(["table"] * 30 + ["empty", "noise"]))
    if kind == "empty":
        return b"", [], []
    if kind == "noise":
        return draw(st.binary(max_size=400)), [], []
    rows = draw(st.sampled_from([60, 200, 30, 20, 120] * 3 + [19, 5, 0]))
    shaped = draw(st.sampled_from([True, True, True, False]))
    names = st.sampled_from(CLEAN_NAMES if shaped else NAMES)
    header = draw(st.lists(names, min_size=2, max_size=6, unique=shaped))
    flavours = ["label", "few"] if shaped else []
    cells = [draw(columns(rows, f)) for f in (flavours + [None] * len(header))[: len(header)]]
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(header)
    writer.writerows(zip(*cells, strict=True))
    encodings = ["utf-8"] * 12 + ["utf-8-sig", "latin-1", "cp1252", "utf-16"]
    content = text.getvalue().encode(draw(st.sampled_from(encodings)), errors="replace")
    damage = draw(st.sampled_from(["none"] * 20 + ["cut", "junk", "nul"]))
    if damage == "cut":
        content = content[: draw(st.integers(0, len(content)))]
    elif damage in ("junk", "nul"):
        at = draw(st.integers(0, len(content)))
        junk = b"\x00" if damage == "nul" else draw(st.binary(min_size=1, max_size=8))
        content = content[:at] + junk + content[at:]
    return content, header, sorted(set(cells[0]))


@st.composite
def choices(draw, header: list[str], label_values: list[str]) -> dict:
    """Label, protected, positive, features and preparation options: usually sensible ones from
    the header, sometimes any names and settings."""
    usual = draw(st.sampled_from([True, True, True, False])) and len(header) > 1
    name = st.sampled_from(header[2:] or header) if usual else st.sampled_from(header + NAMES)
    label = header[0] if usual else draw(name)
    protected = (header[1] if usual else draw(name), *draw(st.lists(name, max_size=1)))
    positive = draw(st.sampled_from([None] * 3 + label_values * 3 + ([] if usual else WORDS)))
    features = draw(st.sampled_from([None, None, ()]) | st.lists(name, max_size=3).map(tuple))
    mode = draw(st.sampled_from(["auto", "all", "binary"] * 2 + list(MODES)))
    grouping = tuple(
        GroupingSpec(a, mode, k=draw(st.integers(1, 3)), bins=draw(st.sampled_from([(), (0.0,)])))
        for a in protected
    )
    options = PrepareOptions(
        grouping=grouping,
        split=draw(st.sampled_from([(0.6, 0.2, 0.2), (0.5, 0.5, 0.0), (0.9, 0.05, 0.05)])),
        seed=draw(st.integers(0, 3)),
        min_group_size=draw(st.sampled_from([1, 2, 5] if usual else [1, 5, 50])),
        small_groups=draw(st.sampled_from(["merge"] * 3 + ["refuse"])),
        cross_terms=draw(st.booleans()),
        drop_protected=draw(st.booleans()),
        min_category_count=draw(st.sampled_from([1, 5])),
    )
    return {
        "label": label,
        "protected": protected,
        "positive": positive,
        "features": features,
        "options": options,
    }


@pytest.mark.filterwarnings("error::RuntimeWarning")  # overflow in a number is a failure too
@settings(
    max_examples=500,
    deadline=None,
    database=None,  # nothing written into the project; a failure prints its example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
@pytest.mark.slow
def test_any_csv_is_prepared_or_explained(data):
    content, header, label_values = data.draw(csv_files())
    choice = data.draw(choices(header, label_values))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.csv"
        path.write_bytes(content)
        try:
            survey_csv(path)
        except UserError as error:
            assert str(error) and "\n" not in str(error)
        spec = CSVSpec(
            str(path), choice["label"], choice["protected"], choice["positive"], choice["features"]
        )
        try:
            prepared = load_prepared(spec, choice["options"], use_cache=False)
        except UserError as error:
            assert str(error) and "\n" not in str(error)
            event("refused")
            return
    event("prepared")
    for part in (prepared.train, prepared.val, prepared.test):
        assert np.isfinite(part.X).all()
    assert prepared.n_groups >= 2 and len(prepared.train) > 0
