"""ACS through folktables: real Connecticut records, synthetic files, pooling, renames, errors."""

import numpy as np
import pandas as pd
import pytest

from engine.data.acs import ACSSpec, SyntheticACSSpec, load_acs
from engine.data.acs_files import offline_files
from engine.data.acs_tasks import TASKS
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.data.synthetic_pums import write_synthetic_pums
from engine.errors import UserError


def ct_raw(root) -> pd.DataFrame:
    return pd.read_csv(root / "2018" / "1-Year" / "psam_p09.csv")


def test_connecticut_income_runs_reduced_on_the_columns_present(ct_acs_root):
    dataset = load_acs(ACSSpec(states=("CT",), year=2018, task="income", root=str(ct_acs_root)))
    assert dataset.reduced and set(dataset.missing_features) == {"OCCP", "POBP", "RELP"}
    assert "(reduced)" in dataset.name and not dataset.synthetic
    assert set(dataset.features) == {"AGEP", "COW", "SCHL", "MAR", "WKHP", "SEX", "RAC1P"}
    raw = ct_raw(ct_acs_root)  # folktables' adult_filter, written out again
    kept = raw[(raw.AGEP > 16) & (raw.PINCP > 100) & (raw.WKHP > 0) & (raw.PWGTP >= 1)]
    assert len(dataset.frame) == len(kept) == 19_785
    assert dataset.label.sum() == (kept.PINCP > 50_000).sum()


def test_connecticut_race_groups_match_the_raw_file(ct_acs_root):
    dataset = load_acs(ACSSpec(states=("CT",), root=str(ct_acs_root)))
    prepared = prepare(dataset, PrepareOptions(grouping=(GroupingSpec("RAC1P", "binary"),)))
    assert prepared.group_names == ("White", "not White")
    sizes = sum(
        np.bincount(prepared.split(s).groups, minlength=2) for s in ("train", "val", "test")
    )
    raw = ct_raw(ct_acs_root)
    kept = raw[(raw.AGEP > 16) & (raw.PINCP > 100) & (raw.WKHP > 0) & (raw.PWGTP >= 1)]
    assert sizes.tolist() == [(kept.RAC1P == 1).sum(), (kept.RAC1P != 1).sum()]


def test_tasks_without_their_target_are_refused(ct_acs_root):
    with pytest.raises(UserError, match="lack HINS2, which the health_insurance task needs"):
        load_acs(ACSSpec(states=("CT",), task="health_insurance", root=str(ct_acs_root)))


def test_offline_listing_finds_the_state_files(ct_acs_root, tmp_path):
    assert [(y, h, s) for y, h, s, _ in offline_files(ct_acs_root)] == [(2018, "1-Year", "CT")]
    write_synthetic_pums(tmp_path, "NY", 2016, n_persons=100)
    assert [(y, s) for y, _, s, _ in offline_files(tmp_path)] == [(2016, "NY")]


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_stock_task_runs_on_synthetic_files(task):
    dataset = SyntheticACSSpec(state="CT", year=2018, task=task, n_persons=3000).load()
    assert dataset.synthetic and "(synthetic)" in dataset.name and not dataset.reduced
    assert set(dataset.features) == set(TASKS[task].features)
    assert 0 < dataset.label.mean() < 1


def test_2019_files_have_their_renamed_columns_mapped_back(tmp_path):
    write_synthetic_pums(tmp_path, "CT", 2019, n_persons=2000)
    header = (tmp_path / "2019/1-Year/psam_p09.csv").read_text().splitlines()[0].split(",")
    assert "RELSHIPP" in header and "RELP" not in header
    dataset = load_acs(ACSSpec(states=("CT",), year=2019, task="travel_time", root=str(tmp_path)))
    assert not dataset.reduced
    assert {"RELP", "JWTR"} <= set(dataset.features)


def test_states_are_pooled_by_column_name_not_position(tmp_path):
    ct = write_synthetic_pums(tmp_path, "CT", 2018, n_persons=800, seed=1)
    ny = write_synthetic_pums(tmp_path, "NY", 2018, n_persons=900, seed=2)
    ny_frame = pd.read_csv(ny)
    ny_frame[ny_frame.columns[::-1]].to_csv(ny, index=False)  # same columns, other order
    pooled = load_acs(ACSSpec(states=("CT", "NY"), task="employment", root=str(tmp_path)))
    alone = [
        load_acs(ACSSpec(states=(s,), task="employment", root=str(tmp_path))) for s in ("CT", "NY")
    ]
    assert len(pooled.frame) == sum(len(d.frame) for d in alone)
    expected = pd.concat([d.frame for d in alone], ignore_index=True)
    pd.testing.assert_frame_equal(pooled.frame, expected[pooled.frame.columns], check_dtype=False)
    assert np.array_equal(pooled.label, np.concatenate([d.label for d in alone]))
    assert pd.read_csv(ct).shape[1] == ny_frame.shape[1]


def test_pooling_files_with_different_columns_keeps_the_shared_ones_and_says_so(tmp_path):
    write_synthetic_pums(tmp_path, "CT", 2018, n_persons=500)
    ny = write_synthetic_pums(tmp_path, "NY", 2018, n_persons=500)
    pd.read_csv(ny).drop(columns=["OCCP"]).to_csv(ny, index=False)
    pooled = load_acs(ACSSpec(states=("CT", "NY"), task="income", root=str(tmp_path)))
    assert pooled.missing_features == ("OCCP",)
    assert any("leaving out OCCP" in note for note in pooled.notes)


def test_missing_file_message_says_where_and_how(tmp_path):
    with pytest.raises(UserError) as error:
        ACSSpec(states=("CT",), year=2018, root=str(tmp_path)).files()
    text = str(error.value)
    assert str(tmp_path / "2018" / "1-Year" / "psam_p09.csv") in text
    assert "csv_pct.zip" in text and "allow the download" in text and "--" not in text
    assert error.value.command_line == "On the command line: --acs-root FOLDER, or --download."


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"states": ("DC",)}, "District of Columbia"),
        ({"states": ("XX",)}, "unknown state 'XX'"),
        ({"states": ()}, "at least one state"),
        ({"states": ("CT",), "year": 2012}, "year 2012 is not supported"),
        ({"states": ("CT",), "task": "happiness"}, "unknown ACS task 'happiness'"),
        ({"states": ("CT",), "horizon": "3-Year"}, "horizon must be"),
    ],
)
def test_bad_acs_choices_are_explained(kwargs, message):
    with pytest.raises(UserError, match=message):
        ACSSpec(**kwargs)
