import csv
import gzip

import numpy as np

from engine.data.adult import ADULT_DIR, AdultSpec, load_adult
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare


def raw_rows(name: str) -> list[list[str]]:
    """The bundled file read with the csv module alone, as an independent count."""
    with gzip.open(ADULT_DIR / name, "rt") as handle:
        rows = [[cell.strip() for cell in row] for row in csv.reader(handle)]
    return [r for r in rows if len(r) == 15]


def test_adult_has_the_standard_split_sizes_and_labels():
    dataset = load_adult()
    train, test = raw_rows("adult.data.gz"), raw_rows("adult.test.gz")
    assert (len(train), len(test)) == (32_561, 16_281)
    assert len(dataset.frame) == len(train) + len(test)
    assert dataset.fixed_test.sum() == len(test)
    positives = sum(r[14].rstrip(".") == ">50K" for r in train + test)
    assert dataset.label.sum() == positives
    assert set(np.unique(dataset.label)) == {0, 1}


def test_adult_test_split_is_adult_test_and_groups_match_raw_counts():
    prepared = prepare(load_adult(), PrepareOptions(grouping=(GroupingSpec("sex"),)))
    train, test = raw_rows("adult.data.gz"), raw_rows("adult.test.gz")
    assert len(prepared.test) == len(test)
    assert len(prepared.train) + len(prepared.val) == len(train)
    female = prepared.group_names.index("Female")
    assert (prepared.test.groups == female).sum() == sum(r[9] == "Female" for r in test)
    in_pool = (prepared.train.groups == female).sum() + (prepared.val.groups == female).sum()
    assert in_pool == sum(r[9] == "Female" for r in train)
    test_positive = sum(r[14] == ">50K." for r in test)
    assert prepared.test.y.sum() == test_positive


def test_adult_spec_names_its_bundled_files():
    assert all(p.is_file() for p in AdultSpec().files())
