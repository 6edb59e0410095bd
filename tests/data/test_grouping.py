import numpy as np
import pandas as pd
import pytest

from engine.data.codes import RAC1P
from engine.data.csv_source import CSVSpec
from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec, make_groups
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared
from engine.errors import UserError


def dataset(columns: dict) -> Dataset:
    frame = pd.DataFrame(columns)
    n = len(frame)
    numeric = tuple(c for c in frame.columns if c == "AGEP")
    return Dataset(
        name="toy",
        frame=frame,
        label=np.arange(n) % 2,
        numeric=numeric,
        categorical=tuple(c for c in frame.columns if c not in numeric),
        protected=tuple(frame.columns),
        label_name="y",
        value_labels={"RAC1P": RAC1P, "SEX": {1: "Male", 2: "Female"}},
    )


RACES = [1] * 300 + [2] * 120 + [6] * 80 + [8] * 30 + [3] * 5


def test_all_groups_carry_readable_names_in_code_order():
    groups = make_groups(dataset({"RAC1P": RACES}), (GroupingSpec("RAC1P", "all"),), 1)
    assert groups.names == ("White", "Black", "American Indian", "Asian", "Some other race")
    assert np.bincount(groups.ids).tolist() == [300, 120, 5, 80, 30]


def test_binary_is_the_largest_group_against_the_rest():
    groups = make_groups(dataset({"RAC1P": RACES}), (GroupingSpec("rac1p", "binary"),))
    assert groups.names == ("White", "not White")
    assert np.bincount(groups.ids).tolist() == [300, len(RACES) - 300]


def test_top_k_pools_the_rest_as_other():
    groups = make_groups(dataset({"RAC1P": RACES}), (GroupingSpec("RAC1P", "top-k", k=2),), 10)
    assert groups.names == ("White", "Black", "other")
    assert np.bincount(groups.ids).tolist() == [300, 120, 115]


def test_small_groups_are_merged_with_a_warning_or_refused():
    data = dataset({"RAC1P": RACES})
    merged = make_groups(data, (GroupingSpec("RAC1P", "all"),), min_group_size=35)
    assert merged.names == ("White", "Black", "Asian", "other")
    assert np.bincount(merged.ids).tolist() == [300, 120, 80, 35]
    assert (
        "Some other race (30)" in merged.warnings[0] and "American Indian (5)" in merged.warnings[0]
    )
    with pytest.raises(UserError, match="fewer than 35 rows: American Indian"):
        make_groups(data, (GroupingSpec("RAC1P", "all"),), 35, small_groups="refuse")
    with pytest.raises(UserError, match="'other' group has only 35"):
        make_groups(data, (GroupingSpec("RAC1P", "all"),), min_group_size=60)


def test_age_bins_default_to_life_stages():
    ages = [18, 24, 25, 44, 45, 64, 65, 90] * 20
    groups = make_groups(dataset({"AGEP": ages}), (GroupingSpec("AGEP"),), 1)
    assert groups.names == ("<25", "25–44", "45–64", "65+")
    assert np.bincount(groups.ids).tolist() == [40, 40, 40, 40]
    custom = make_groups(dataset({"AGEP": ages}), (GroupingSpec("AGEP", "bins", bins=(50,)),), 1)
    assert custom.names == ("<50", "50+")


def test_intersection_crosses_the_groups_of_two_attributes():
    sexes = [1, 2] * (len(RACES) // 2) + [1]
    data = dataset({"SEX": sexes, "RAC1P": RACES})
    groups = make_groups(
        data, (GroupingSpec("SEX"), GroupingSpec("RAC1P", "binary")), min_group_size=1
    )
    assert set(groups.names) == {
        "Male × White",
        "Male × not White",
        "Female × White",
        "Female × not White",
    }
    frame = data.frame
    for g, name in enumerate(groups.names):
        sex, race = name.split(" × ")
        expected = (frame["SEX"].map({1: "Male", 2: "Female"}) == sex) & (
            (frame["RAC1P"] == 1) == (race == "White")
        )
        assert np.array_equal(groups.ids == g, expected.to_numpy())


def test_unknown_attribute_and_single_group_are_clear_errors():
    with pytest.raises(UserError, match="column 'income' is not in data set 'toy'"):
        make_groups(dataset({"SEX": [1, 2] * 50}), (GroupingSpec("income"),))
    with pytest.raises(UserError, match="single group"):
        make_groups(dataset({"SEX": [1] * 100}), (GroupingSpec("SEX"),))


def test_names_differing_only_in_case_or_spacing_are_one_group():
    values = ["Black"] * 100 + ["Other"] * 60 + ["other "] * 25 + [" OTHER"] * 5 + ["White"] * 90
    values[-30:] = ["White\nnon-Hispanic"] * 10 + ["white  non-Hispanic"] * 20
    groups = make_groups(dataset({"race": values}), (GroupingSpec("race"),), min_group_size=1)
    assert groups.names == ("Black", "Other", "White", "white non-Hispanic")
    assert np.bincount(groups.ids).tolist() == [100, 90, 60, 30]
    assert groups.notes == (
        "the group names 'Other', 'other', 'OTHER' differ only in case or spacing and are one "
        "group, 'Other'",
        "the group names 'white non-Hispanic', 'White non-Hispanic' differ only in case or "
        "spacing and are one group, 'white non-Hispanic'",
    )
    binary = make_groups(dataset({"race": values}), (GroupingSpec("race", "binary"),))
    assert binary.names == ("Black", "not Black") and binary.notes == groups.notes


def test_a_value_spelled_like_the_pool_of_small_groups_joins_it():
    values = ["A"] * 200 + ["Other"] * 120 + ["tiny"] * 10 + ["rare"] * 5
    groups = make_groups(dataset({"g": values}), (GroupingSpec("g"),), min_group_size=50)
    assert groups.names == ("A", "Other") and np.bincount(groups.ids).tolist() == [200, 135]
    assert "'Other', 'other'" in groups.notes[0] and "tiny (10)" in groups.warnings[0]


def test_compas_race_has_one_other_group(shared_data):
    path = shared_data / "classic" / "compas-scores-two-years.csv"
    if not path.is_file():
        pytest.skip(f"needs {path}, which is absent")
    spec = CSVSpec(str(path), "two_year_recid", ("race",))
    prepared = load_prepared(spec, PrepareOptions(grouping=(GroupingSpec("race"),)))
    assert prepared.group_names == ("African-American", "Caucasian", "Hispanic", "Other")
    raw = pd.read_csv(path)
    sizes = sum(np.bincount(prepared.split(s).groups) for s in ("train", "val", "test"))
    pooled = raw["race"].isin(["Other", "Asian", "Native American"]).sum()
    assert sizes.tolist()[-1] == pooled
    assert any("'Other', 'other'" in note for note in prepared.notes)
    assert any("left out of the features: 'id'" in note for note in prepared.notes)
