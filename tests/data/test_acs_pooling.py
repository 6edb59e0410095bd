"""Pooling ACS state files one at a time: the same rows as folktables' all-at-once read, all 51
synthetic states, and a refusal with numbers when the job would not fit in memory."""

from dataclasses import replace

import folktables
import numpy as np
import pandas as pd
import pytest

import engine.data.memory as memory
from engine.data.acs import ACSSpec, SyntheticACSSpec, load_acs
from engine.data.acs_files import ALL_STATES, state_file
from engine.data.acs_tasks import RENAMED_FROM_2019, task_by_name
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.data.sources import spec_from_dict, spec_to_dict
from engine.data.synthetic_pums import is_synthetic, write_synthetic_pums
from engine.errors import UserError

STATES = ("CT", "NY", "VT")


def all_at_once(root, states, year: int, task_name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """What the pooled read gave before reading state by state: folktables reads every file
    into one table of all columns, then the task's filter, label and columns."""
    source = folktables.ACSDataSource(str(year), "1-Year", "person", root_dir=str(root))
    raw = source.get_data(states=list(states), download=False)
    raw = raw.rename(columns={new: old for new, old in RENAMED_FROM_2019.items() if new in raw})
    task = task_by_name(task_name)
    rows = task.select_rows(raw)
    return rows.reset_index(drop=True), task.label(rows).to_numpy()


@pytest.mark.parametrize(
    ("year", "task"),
    [(2018, "income"), (2018, "public_coverage"), (2019, "travel_time"), (2018, "log_income")],
)
def test_reading_state_by_state_gives_the_rows_of_the_all_at_once_read(tmp_path, year, task):
    for seed, state in enumerate(STATES):
        write_synthetic_pums(tmp_path, state, year, n_persons=700 + 100 * seed, seed=seed)
    pooled = load_acs(ACSSpec(states=STATES, year=year, task=task, root=str(tmp_path)))
    rows, label = all_at_once(tmp_path, STATES, year, task)
    if task_by_name(task).value is not None:
        rows, label = rows[~np.isnan(label)].reset_index(drop=True), label[~np.isnan(label)]
    pd.testing.assert_frame_equal(pooled.frame, rows[pooled.frame.columns], check_dtype=False)
    assert np.array_equal(pooled.label, label)
    assert len(pooled.frame) > 500 and not pooled.notes


@pytest.mark.parametrize(
    "grouping",
    [(GroupingSpec("AGEP", "all"),), (GroupingSpec("RAC1P", "top-k", k=3), GroupingSpec("SEX"))],
)
def test_the_compact_pooled_rows_prepare_as_the_wide_ones_did(tmp_path, grouping):
    for seed, state in enumerate(STATES[:2]):
        write_synthetic_pums(tmp_path, state, 2018, n_persons=1500, seed=seed)
    pooled = load_acs(ACSSpec(states=STATES[:2], task="income", root=str(tmp_path)))
    assert set(pooled.frame.dtypes) == {np.dtype(np.float32)}  # exact: codes, ages, dollars
    rows, _ = all_at_once(tmp_path, STATES[:2], 2018, "income")
    wide = replace(pooled, frame=rows[list(pooled.frame.columns)])
    assert np.dtype(np.int64) in set(wide.frame.dtypes)
    options = PrepareOptions(grouping=grouping, min_group_size=5)
    compact, before = prepare(pooled, options), prepare(wide, options)
    assert compact.group_names == before.group_names and compact.group_map == before.group_map
    assert compact.feature_names == before.feature_names and compact.encoder == before.encoder
    for split in ("train", "val", "test"):
        a, b = compact.split(split), before.split(split)
        assert np.array_equal(a.X, b.X) and np.array_equal(a.groups, b.groups)


def test_a_column_only_some_files_lack_is_left_out_of_all_before_reading(tmp_path):
    for state in STATES:
        write_synthetic_pums(tmp_path, state, 2018, n_persons=500)
    vt = state_file(tmp_path, "VT", 2018)
    pd.read_csv(vt).drop(columns=["POBP", "DIS"]).to_csv(vt, index=False)
    pooled = load_acs(ACSSpec(states=STATES, task="income", root=str(tmp_path)))
    assert pooled.missing_features == ("POBP",) and "POBP" not in pooled.frame
    assert pooled.notes[0].endswith("leaving out POBP")  # DIS: not a column the task reads
    pd.read_csv(vt).drop(columns=["WKHP"]).to_csv(vt, index=False)  # the income filter's
    with pytest.raises(UserError, match="lack WKHP, which the income task needs"):
        load_acs(ACSSpec(states=STATES, task="income", root=str(tmp_path)))


def test_all_stands_for_the_fifty_states_and_puerto_rico():
    spec = ACSSpec(states=("all",), root="unused")
    assert spec.states == ALL_STATES and len(ALL_STATES) == 51
    assert "PR" in ALL_STATES and "DC" not in ALL_STATES
    assert SyntheticACSSpec(state="ct, ny").states == ("CT", "NY")


def test_a_single_state_synthetic_spec_keeps_its_stored_form():
    """Run ids hash this dict: a spec written before several states existed must not change."""
    stored = {
        "state": "CT",
        "year": 2018,
        "task": "income",
        "n_persons": 3000,
        "seed": 0,
        "kind": "synthetic",
    }
    spec = spec_from_dict(stored)
    assert spec_to_dict(spec) == stored and spec.persons == {"CT": 3000}


def test_synthetic_all_states_writes_51_files_sized_by_population():
    spec = SyntheticACSSpec(state="all", n_persons=12_000, seed=2)
    paths = spec.files()
    assert len(paths) == 51 and all(p.is_file() and is_synthetic(p) for p in paths)
    persons = {
        state: p.read_text().count("\n") - 1 for state, p in zip(spec.states, paths, strict=True)
    }
    assert persons == spec.persons
    assert persons["CA"] > persons["TX"] > persons["NY"] > persons["CT"] > persons["WY"] == 100
    assert abs(persons["CA"] / 12_000 - 39557 / 330_400) < 0.005  # California's share of people
    dataset = spec.load()
    assert dataset.synthetic and "all states" in dataset.name
    assert len(dataset.frame) > 0.4 * sum(persons.values())


def test_a_job_that_does_not_fit_is_refused_with_the_numbers(tmp_path, monkeypatch):
    for state in STATES:
        write_synthetic_pums(tmp_path, state, 2018, n_persons=400)
    spec = ACSSpec(states=STATES, task="income", root=str(tmp_path))
    needed = memory.estimate_acs_load(spec.files(), 14)
    monkeypatch.setattr(memory, "available_bytes", lambda: needed // 2)
    with pytest.raises(UserError) as refused:
        load_acs(spec)
    text = str(refused.value)
    assert f"needs about {needed / 2**30:.1f} GB" in text
    assert f"{needed / 2 / 2**30:.1f} GB are available" in text and "fewer states" in text
    monkeypatch.setattr(memory, "available_bytes", lambda: None)  # nothing says: no refusal
    assert len(load_acs(spec).frame) > 0


def test_the_estimate_counts_rows_and_grows_with_the_data(tmp_path):
    small = write_synthetic_pums(tmp_path / "a", "CT", 2018, n_persons=3000)
    large = write_synthetic_pums(tmp_path / "b", "CA", 2018, n_persons=30_000)
    assert memory.estimated_rows(small) == pytest.approx(3000, rel=0.1)
    assert memory.estimated_rows(large) == pytest.approx(30_000, rel=0.1)
    one = memory.estimate_acs_load((small,), 14)
    assert memory.estimate_acs_load((small, large), 14) > one
    assert memory.estimate_acs_load((small,), 20) > one
