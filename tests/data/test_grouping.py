import numpy as np
import pandas as pd
import pytest

from engine.data.codes import RAC1P
from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec, make_groups
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
