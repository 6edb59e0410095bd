"""UCI Adult, bundled in data/adult/ (see data/adult/ATTRIBUTION.md): the offline default."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.paths import BUNDLED_DATA
from engine.task import Task

ADULT_DIR = BUNDLED_DATA / "adult"
TRAIN_FILE = "adult.data.gz"
TEST_FILE = "adult.test.gz"

COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
CATEGORICAL = (
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
)
PROTECTED = ("sex", "race", "age", "marital-status")


@dataclass(frozen=True)
class AdultSpec:
    """The bundled Adult data: adult.data is the training pool, adult.test the fixed test split."""

    kind: str = "adult"

    @property
    def label_task(self) -> Task:
        return Task.CLASSIFICATION  # income above $50,000

    def files(self, progress: object = None) -> tuple[Path, ...]:
        return (ADULT_DIR / TRAIN_FILE, ADULT_DIR / TEST_FILE)

    def load(self, progress: object = None) -> Dataset:
        return load_adult()


def _read(path: Path, skip_first_line: bool) -> pd.DataFrame:
    frame = pd.read_csv(
        path,
        names=list(COLUMNS),
        skiprows=1 if skip_first_line else 0,
        skipinitialspace=True,
        na_values=["?"],
        dtype={c: "string" for c in CATEGORICAL + ("income",)},
    )
    return frame.dropna(subset=["income"])  # the files end with blank lines


def load_adult(directory: Path = ADULT_DIR) -> Dataset:
    """Adult with adult.test kept as the test split (labels there end with '.')."""
    train = _read(directory / TRAIN_FILE, skip_first_line=False)
    test = _read(directory / TEST_FILE, skip_first_line=True)  # "|1x3 Cross validator"
    frame = pd.concat([train, test], ignore_index=True)
    income = frame.pop("income").str.rstrip(".")
    fixed_test = np.zeros(len(frame), dtype=bool)
    fixed_test[len(train) :] = True
    return Dataset(
        name="Adult (UCI)",
        frame=frame,
        label=(income == ">50K").to_numpy(dtype=np.int8),
        numeric=NUMERIC,
        categorical=CATEGORICAL,
        protected=PROTECTED,
        label_name="income > $50K",
        fixed_test=fixed_test,
    )
