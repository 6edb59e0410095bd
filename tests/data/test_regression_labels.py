"""Real-valued labels: the ACS tasks that keep their target as a number, and how a real-valued
label is prepared (float, split by group alone, leaks by correlation, summarised by its mean)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.cli.data_commands import format_summary
from engine.data.acs import SyntheticACSSpec
from engine.data.acs_tasks import REGRESSION_TASKS, TASKS, task_by_name
from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.data.prepared import group_table
from engine.data.sources import load_prepared
from engine.errors import UserError
from engine.task import Task

SEX = PrepareOptions(grouping=(GroupingSpec("SEX"),))


def real_valued(label: np.ndarray, extra: dict | None = None, seed: int = 0) -> Dataset:
    """400 rows, two groups, a real predictor x of `label` and the columns of `extra`."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "x": label + rng.normal(size=len(label)),
            "g": rng.choice(["a", "b"], len(label)),
            **(extra or {}),
        }
    )
    numeric = tuple(c for c in frame.columns if c != "g" and frame[c].dtype.kind == "f")
    categorical = tuple(c for c in frame.columns if c not in numeric)
    return Dataset(
        name="toy",
        frame=frame,
        label=label,
        numeric=numeric,
        categorical=categorical,
        protected=("g",),
        label_name="y",
        task=Task.REGRESSION,
    )


@pytest.mark.parametrize("name", sorted(REGRESSION_TASKS))
def test_a_real_valued_acs_task_keeps_its_target_as_a_number_and_not_as_a_feature(name):
    task = task_by_name(name)
    stock = TASKS[task.stock]
    assert task.task is Task.REGRESSION and stock.task is Task.CLASSIFICATION
    assert task.features == stock.features and task.target not in task.features
    dataset = SyntheticACSSpec(task=name, n_persons=3000).load()
    assert dataset.task is Task.REGRESSION and dataset.label.dtype == np.float64
    assert np.isfinite(dataset.label).all() and len(np.unique(dataset.label)) > 20
    assert task.target not in dataset.features


def test_travel_minutes_leave_out_the_workers_without_a_commute():
    minutes = SyntheticACSSpec(task="travel_time_minutes", n_persons=3000).load()
    binary = SyntheticACSSpec(task="travel_time", n_persons=3000).load()
    dropped = len(binary.label) - len(minutes.label)
    assert dropped > 0 and (minutes.label > 0).all()
    assert f"{dropped:,} rows without a JWMNP value are left out" in minutes.notes[0]
    # the binary label counts them as commutes of at most 20 minutes; the rest agree
    assert (minutes.label > 20).sum() == binary.label.sum()


def test_log_income_is_the_log_of_the_dollars_on_the_income_rows():
    log_income = SyntheticACSSpec(task="log_income", n_persons=3000).load()
    income = SyntheticACSSpec(task="income", n_persons=3000).load()
    assert len(log_income.label) == len(income.label)
    np.testing.assert_array_equal(log_income.label > np.log(50_000), income.label == 1)
    assert log_income.label.min() > np.log(100)  # the ACSIncome filter keeps PINCP > 100


def test_a_real_valued_label_is_prepared_as_floats_split_by_group_alone():
    rng = np.random.default_rng(1)
    label = rng.normal(size=400)
    options = PrepareOptions(grouping=(GroupingSpec("g"),), seed=3)
    rows = {"row": np.arange(400.0)}  # which row went where
    prepared = prepare(real_valued(label, rows), options)
    assert prepared.task is Task.REGRESSION
    for part in (prepared.train, prepared.val, prepared.test):
        assert part.y.dtype == np.float64
    assert not np.array_equal(prepared.train.y, np.round(prepared.train.y))
    np.testing.assert_allclose(
        np.sort(np.concatenate([prepared.train.y, prepared.val.y, prepared.test.y])), np.sort(label)
    )
    # the label does not enter the split: another label puts the same rows in each split
    other = prepare(real_valued(rng.normal(size=400), rows), options)
    for split in ("train", "val", "test"):
        row = prepared.feature_names.index("row")
        np.testing.assert_array_equal(other.split(split).X[:, row], prepared.split(split).X[:, row])
    sizes = [np.bincount(prepared.split(s).groups) for s in ("train", "val", "test")]
    np.testing.assert_allclose(sizes[0] / sum(sizes), 0.6, atol=0.01)  # each group 60/20/20


def test_a_blank_real_valued_label_is_refused():
    label = np.r_[np.nan, np.arange(399.0)]
    with pytest.raises(UserError, match="the label 'y' is blank or infinite in 1 rows"):
        prepare(real_valued(label), PrepareOptions(grouping=(GroupingSpec("g"),)))


def test_a_feature_that_copies_a_real_valued_label_is_reported():
    rng = np.random.default_rng(2)
    label = rng.choice([1.5, 2.0, 3.25, 4.0], 400) + 0.0
    extra = {
        "copy": np.exp(label),  # a monotone transform of the label
        "level": pd.Series(label).map("{:.2f}".format),  # the label spelled as a category
        "noise": rng.normal(size=400),
    }
    prepared = prepare(real_valued(label, extra), PrepareOptions(grouping=(GroupingSpec("g"),)))
    leaks = [w for w in prepared.warnings if "alone predicts the label" in w]
    assert leaks == [
        "column 'copy' alone predicts the label (correlation 1.00): it may leak the answer",
        "column 'level' alone predicts the label (correlation 1.00): it may leak the answer",
    ]


def test_the_summary_gives_each_group_its_mean_label(tmp_path):
    prepared = load_prepared(SyntheticACSSpec(task="log_income", n_persons=2000), SEX)
    cached = load_prepared(SyntheticACSSpec(task="log_income", n_persons=2000), SEX)
    assert cached.task is Task.REGRESSION and cached.train.y.dtype == np.float64
    np.testing.assert_array_equal(cached.train.y, prepared.train.y)
    summary = prepared.summary()
    assert summary["task"] == "regression"
    for g, group in enumerate(summary["groups"]):
        members = prepared.test.groups == g
        assert group["test"] == {
            "size": int(members.sum()),
            "label_mean": pytest.approx(prepared.test.y[members].mean()),
        }
    assert "test mean label" in group_table(summary)[0]
    assert "size  mean label" in format_summary(summary)
