import numpy as np
import pandas as pd
import pytest

from engine.data.adult import AdultSpec
from engine.data.csv_source import CSVSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import cache_key, load_prepared, spec_from_dict, spec_to_dict

SEX = PrepareOptions(grouping=(GroupingSpec("sex"),))


def same(a, b) -> bool:
    return (
        all(
            np.array_equal(getattr(a.split(s), f), getattr(b.split(s), f))
            for s in ("train", "val", "test")
            for f in ("X", "y", "groups")
        )
        and a.feature_names == b.feature_names
        and a.group_names == b.group_names
    )


def test_second_preparation_is_read_from_the_cache(isolated_cache, monkeypatch):
    first = load_prepared(AdultSpec(), SEX)
    assert list((isolated_cache / "prepared").glob(f"{first.key}.*"))

    def no_loading(self, progress=None):
        raise AssertionError("the raw data was loaded again")

    monkeypatch.setattr(AdultSpec, "load", no_loading)
    again = load_prepared(AdultSpec(), SEX)
    assert same(first, again) and again.key == first.key
    assert again.encoder == first.encoder and again.notes == first.notes


def test_anything_that_changes_the_arrays_changes_the_key():
    files = AdultSpec().files()
    keys = {
        cache_key(AdultSpec(), options, files)
        for options in (
            SEX,
            PrepareOptions(grouping=(GroupingSpec("sex"),), seed=1),
            PrepareOptions(grouping=(GroupingSpec("race", "binary"),)),
            PrepareOptions(grouping=(GroupingSpec("sex"),), cross_terms=True),
            PrepareOptions(grouping=(GroupingSpec("sex"),), split=(0.8, 0.1, 0.1)),
        )
    }
    assert len(keys) == 5


def test_csv_files_are_keyed_by_content_and_name(tmp_path):
    frame = pd.DataFrame({"x": range(100), "g": ["a", "b"] * 50, "y": [0, 1, 1, 0] * 25})
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one, two = tmp_path / "one" / "t.csv", tmp_path / "two" / "t.csv"
    frame.to_csv(one, index=False)
    frame.to_csv(two, index=False)
    options = PrepareOptions(grouping=(GroupingSpec("g"),), min_group_size=1)

    def key(path):
        spec = CSVSpec(path=str(path), label="y", protected=("g",))
        return cache_key(spec, options, spec.files())

    assert key(one) == key(two)
    renamed = two.rename(two.with_name("shown by another name.csv"))
    assert key(one) != key(renamed)  # the name is shown with the prepared data
    frame.assign(x=frame.x + 1).to_csv(two, index=False)
    assert key(one) != key(two)


def test_a_damaged_entry_is_rebuilt(isolated_cache):
    first = load_prepared(AdultSpec(), SEX)
    (isolated_cache / "prepared" / f"{first.key}.npz").write_bytes(b"garbage")
    assert same(load_prepared(AdultSpec(), SEX), first)


def test_without_cache_nothing_is_written(isolated_cache):
    load_prepared(AdultSpec(), SEX, use_cache=False)
    assert not (isolated_cache / "prepared").exists()


@pytest.mark.parametrize(
    "spec",
    [AdultSpec(), CSVSpec(path="t.csv", label="y", protected=("g", "h"), positive="1")],
)
def test_specs_round_trip_through_plain_dicts(spec):
    assert spec_from_dict(spec_to_dict(spec)) == spec
