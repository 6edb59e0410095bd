"""The group map reproduces the grouping decided at preparation, on the preparing rows and on
new ones, and survives JSON and the cache."""

import json

import numpy as np
import pandas as pd
import pytest

from engine.data.adult import AdultSpec
from engine.data.codes import RAC1P
from engine.data.dataset import Dataset
from engine.data.group_map import GroupMap
from engine.data.grouping import GroupingSpec, make_groups
from engine.data.prepare import PrepareOptions, prepare
from engine.data.sources import load_prepared
from engine.errors import UserError

RACES = [1] * 300 + [2] * 120 + [6] * 80 + [8] * 30 + [3] * 5
RNG = np.random.default_rng(0)
N = len(RACES)


def dataset(columns: dict) -> Dataset:
    frame = pd.DataFrame(columns)
    numeric = tuple(c for c in frame.columns if c in ("AGEP", "income"))
    return Dataset(
        name="toy",
        frame=frame,
        label=np.arange(len(frame)) % 2,
        numeric=numeric,
        categorical=tuple(c for c in frame.columns if c not in numeric),
        protected=tuple(frame.columns),
        label_name="y",
        value_labels={"RAC1P": RAC1P, "SEX": {1: "Male", 2: "Female"}},
    )


DATA = dataset(
    {
        "RAC1P": RACES,
        "SEX": RNG.integers(1, 3, N),
        "AGEP": RNG.integers(16, 90, N),
        "income": RNG.lognormal(10, 1, N),
        "race": RNG.choice(["Black", "Other", "other ", "White", "white"], N),
    }
)

GROUPINGS = {
    "all": ((GroupingSpec("RAC1P", "all"),), 1),
    "all, small ones merged": ((GroupingSpec("RAC1P", "all"),), 35),
    "binary": ((GroupingSpec("RAC1P", "binary"),), 1),
    "top-k": ((GroupingSpec("RAC1P", "top-k", k=2),), 10),
    "age stages": ((GroupingSpec("AGEP"),), 1),
    "bins given": ((GroupingSpec("AGEP", "bins", bins=(40, 60)),), 1),
    "quartiles": ((GroupingSpec("income", "bins"),), 1),
    "merged spellings": ((GroupingSpec("race"),), 1),
    "intersection": ((GroupingSpec("SEX"), GroupingSpec("RAC1P", "binary")), 1),
    "intersection, small ones merged": ((GroupingSpec("SEX"), GroupingSpec("RAC1P")), 40),
}


@pytest.mark.parametrize("name", GROUPINGS)
def test_the_map_gives_the_prepared_ids_on_the_preparing_rows(name):
    specs, min_size = GROUPINGS[name]
    groups = make_groups(DATA, specs, min_size)
    assert groups.map.names == groups.names
    assert np.array_equal(groups.map.ids(DATA.frame), groups.ids)
    again = GroupMap.from_dict(json.loads(json.dumps(groups.map.to_dict())))
    assert again == groups.map
    shuffled = DATA.frame.sample(frac=1.0, random_state=1)  # row by row, not by position
    assert np.array_equal(again.ids(shuffled), groups.ids[shuffled.index])


def ids_of(name: str, **columns) -> list[str]:
    specs, min_size = GROUPINGS[name]
    groups = make_groups(DATA, specs, min_size)
    return [groups.names[i] for i in groups.map.ids(pd.DataFrame(columns))]


def test_new_values_get_the_group_their_grouping_implies():
    assert ids_of("binary", RAC1P=[1, 9, 2]) == ["White", "not White", "not White"]
    assert ids_of("top-k", RAC1P=[2, 9, 6]) == ["Black", "other", "other"]
    assert ids_of("age stages", AGEP=[3, 44.5, 101]) == ["<25", "25–44", "65+"]
    assert ids_of("quartiles", income=[0.0, 1e12]) == [
        *make_groups(DATA, GROUPINGS["quartiles"][0], 1).names[:1],
        make_groups(DATA, GROUPINGS["quartiles"][0], 1).names[3],
    ]


def test_a_value_is_found_as_text_or_by_another_spelling_of_its_name():
    assert ids_of("all", RAC1P=["1", "2.0", " white ", "BLACK"]) == [
        "White",
        "Black",
        "White",
        "Black",
    ]
    other, white, white_again = ids_of("merged spellings", race=["OTHER", "White ", "white"])
    assert other.casefold() == "other" and white.casefold() == "white" and white == white_again
    assert ids_of("all, small ones merged", RAC1P=[3, 8, 6]) == ["other", "other", "Asian"]


def test_a_value_never_seen_has_no_group_unless_its_grouping_gives_one():
    with pytest.raises(UserError) as error:
        ids_of("all", RAC1P=[1, 4])
    said = str(error.value)
    assert "'RAC1P' has the value '4', never seen" in said and "White, Black" in said
    with pytest.raises(UserError, match="group '\\(missing\\)' of AGEP, which no row had"):
        ids_of("age stages", AGEP=[30, None])  # no age was missing in training


def test_a_combination_never_seen_joins_other_or_is_refused():
    frame = DATA.frame.assign(SEX=np.where(DATA.frame["RAC1P"] == 1, 1, 2))  # no White women
    groups = make_groups(
        dataset(frame.to_dict("list")), (GroupingSpec("SEX"), GroupingSpec("RAC1P", "binary")), 1
    )
    assert set(groups.names) == {"Male × White", "Female × not White"}
    new = pd.DataFrame({"SEX": [2], "RAC1P": [1]})
    with pytest.raises(UserError, match="the group 'Female × White' of SEX, RAC1P, which no row"):
        groups.map.ids(new)
    merged = make_groups(DATA, *GROUPINGS["intersection, small ones merged"])
    assert "other" in merged.names
    rare = pd.DataFrame({"SEX": [1], "RAC1P": [3]})
    assert merged.names[merged.map.ids(rare)[0]] == "other"


def test_a_missing_column_is_named():
    groups = make_groups(DATA, *GROUPINGS["intersection"])
    with pytest.raises(UserError, match="no column 'RAC1P'"):
        groups.map.ids(pd.DataFrame({"sex": [1]}))
    assert groups.map.ids(pd.DataFrame({"sex": [1], "rac1p": [1]})).shape == (1,)


def test_a_damaged_map_is_refused_with_a_sentence():
    document = make_groups(DATA, *GROUPINGS["binary"]).map.to_dict()
    with pytest.raises(UserError, match="group id outside"):
        GroupMap.from_dict(document | {"label_ids": {"White": 7}})
    with pytest.raises(UserError, match="'names' of the group map is not a list"):
        GroupMap.from_dict(document | {"names": "White"})


def test_prepare_keeps_the_map_and_the_cache_restores_it(isolated_cache):
    options = PrepareOptions(grouping=(GroupingSpec("race", "top-k", k=2), GroupingSpec("age")))
    first = load_prepared(AdultSpec(), options)
    again = load_prepared(AdultSpec(), options)  # from the cache
    assert list((isolated_cache / "prepared").glob(f"{first.key}.json"))
    assert again.group_map == first.group_map and again.group_map is not first.group_map
    raw = AdultSpec().load()
    test_rows = raw.frame[raw.fixed_test]
    assert np.array_equal(again.group_map.ids(test_rows), first.test.groups)


def test_prepare_of_a_dataset_fills_the_map():
    prepared = prepare(DATA, PrepareOptions(grouping=(GroupingSpec("SEX"),), min_group_size=1))
    assert prepared.group_map.columns == ("SEX",)
    assert prepared.group_map.names == prepared.group_names
