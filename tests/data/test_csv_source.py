import numpy as np
import pandas as pd
import pytest

from engine.data.csv_source import CSVSpec, from_frame, load_csv
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared
from engine.errors import UserError


def table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "job": rng.choice(["clerk", "nurse", "driver"], n),
        "sex": rng.choice(["F", "M"], n),
        "approved": rng.choice(["yes", "no"], n),
    })  # fmt: skip


def write(tmp_path, frame: pd.DataFrame, name: str = "t.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_a_valid_table_becomes_a_dataset(tmp_path):
    frame = table()
    dataset = load_csv(write(tmp_path, frame), "approved", ["sex"])
    assert dataset.numeric == ("age",)
    assert set(dataset.categorical) == {"job", "sex"}
    assert np.array_equal(dataset.label, (frame["approved"] == "yes").to_numpy())


def test_positive_value_turns_a_multi_valued_label_into_yes_no(tmp_path):
    frame = table()
    frame["grade"] = np.random.default_rng(1).choice(["A", "B", "C"], len(frame))
    dataset = from_frame(frame.drop(columns="approved"), "grade", ["sex"], positive="A")
    assert np.array_equal(dataset.label, (frame["grade"] == "A").to_numpy())


@pytest.mark.parametrize(
    ("change", "label", "protected", "positive", "message"),
    [
        (lambda f: f, "outcome", ["sex"], None, "no column 'outcome'"),
        (lambda f: f, "approved", ["gender"], None, "no column 'gender'"),
        (
            lambda f: f.assign(approved=np.arange(len(f)) % 3),
            "approved",
            ["sex"],
            None,
            "must have two values, it has 3",
        ),
        (lambda f: f.assign(approved="yes"), "approved", ["sex"], None, "must have two values"),
        (lambda f: f, "approved", ["sex"], "maybe", "'maybe' does not occur"),
        (
            lambda f: f.assign(approved=np.where(np.arange(len(f)) % 2, "good", "bad")),
            "approved",
            ["sex"],
            None,
            "name which one is the positive",
        ),
        (
            lambda f: f.assign(sex=np.nan),
            "approved",
            ["sex"],
            None,
            "protected column 'sex' is empty",
        ),
        (
            lambda f: f.assign(age=f["age"].astype(str).where(np.arange(len(f)) != 5, "n/a")),
            "approved",
            ["sex"],
            None,
            "'age' is numeric but has 1 non-numeric values such as 'n/a'",
        ),
        (
            lambda f: f.assign(name=[f"person {i}" for i in range(len(f))]),
            "approved",
            ["sex"],
            None,
            "'name' has 200 distinct text values",
        ),
        (lambda f: f.head(5), "approved", ["sex"], None, "has 5 rows"),
        (
            lambda f: f.assign(approved=f["approved"].where(np.arange(len(f)) != 3)),
            "approved",
            ["sex"],
            None,
            "1 empty values",
        ),
    ],
)
def test_bad_tables_are_explained(change, label, protected, positive, message):
    with pytest.raises(UserError, match=message):
        from_frame(change(table()), label, protected, positive)


def test_file_level_problems_are_explained(tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_csv(tmp_path / "missing.csv", "y", ["g"])
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(UserError, match="is empty"):
        load_csv(empty, "y", ["g"])
    with pytest.raises(UserError, match="the limit is"):
        load_csv(write(tmp_path, table()), "approved", ["sex"], max_bytes=100)
    with pytest.raises(UserError, match="could not be read as CSV"):
        load_csv(b'a,b\n1,2,3,4\n"unterminated', "a", ["b"])


def test_tiny_groups_are_refused_at_preparation(tmp_path):
    frame = table()
    frame.loc[:2, "sex"] = "X"
    spec = CSVSpec(path=str(write(tmp_path, frame)), label="approved", protected=("sex",))
    options = PrepareOptions(
        grouping=(GroupingSpec("sex"),), min_group_size=10, small_groups="refuse"
    )
    with pytest.raises(UserError, match="X \\(3\\)"):
        load_prepared(spec, options)


def test_uploaded_bytes_and_file_give_the_same_data(tmp_path):
    path = write(tmp_path, table())
    from_file = load_csv(path, "approved", ["sex"])
    from_bytes = load_csv(path.read_bytes(), "approved", ["sex"])
    pd.testing.assert_frame_equal(from_file.frame, from_bytes.frame)
