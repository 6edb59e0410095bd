"""A user's CSV: file problems in one sentence, encodings, label and feature columns, uploads,
the spec."""

import json

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.data.csv_source import CSVSpec, from_frame, load_csv, survey_csv
from engine.data.csv_text import MAX_BYTES
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared, spec_from_dict, spec_to_dict
from engine.data.uploads import safe_file_name, save_upload
from engine.errors import UserError


def table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "job": rng.choice(["clerk", "nurse", "driver"], n),
            "sex": rng.choice(["F", "M"], n),
            "approved": rng.choice(["yes", "no"], n),
        }
    )


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
            r"has 3 values \(0, 1, 2\), but a binary label is needed; give the positive value",
        ),
        (lambda f: f.assign(approved="yes"), "approved", ["sex"], None, "only the value 'yes'"),
        (lambda f: f, "approved", ["approved"], None, "cannot also be a protected column"),
        (
            lambda f: f.assign(age=f["age"].where(np.arange(len(f)) != 4, np.inf)),
            "approved",
            ["sex"],
            None,
            r"'age' holds numbers beyond ±1e\+100, such as inf",
        ),
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


def test_files_that_are_missing_or_too_large_are_explained(tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_csv(tmp_path / "missing.csv", "y", ["g"])
    path = write(tmp_path, table())
    with pytest.raises(UserError, match=r"t.csv is [\d,]+ bytes, over the limit of 100 bytes"):
        load_csv(path, "approved", ["sex"], max_bytes=100)


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


def csv_bytes(frame: pd.DataFrame, encoding: str = "utf-8") -> bytes:
    return frame.to_csv(index=False).encode(encoding)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "t.csv is empty"),
        (b"\n\n  \n", "t.csv holds no table"),
        (b"a,b\x00,c\n1,2,3\n", r"t.csv is not a text CSV \(it holds NUL bytes\)"),
        (bytes(range(1, 256)) * 40, "t.csv is not a text CSV"),
        (b"a;b;c\n" + b"1;2;3\n" * 30, "t.csv has a single column \\('a;b;c'\\)"),
        (b'a,b\n1,2,3,4\n"unterminated', "t.csv could not be read as CSV: "),
    ],
)
def test_file_problems_are_one_sentence(content, message):
    with pytest.raises(UserError, match=message) as caught:
        load_csv(content, "a", ["b"], name="t.csv")
    assert "\n" not in str(caught.value)


def test_the_size_limit_is_named_and_is_200_mb():
    assert MAX_BYTES == 200 * 2**20
    with pytest.raises(UserError, match=r"is 1,001 bytes, over the limit of 1,000 bytes"):
        load_csv(b"x" * 1001, "a", ["b"], max_bytes=1000)


def test_latin1_and_byte_order_marked_files_are_read():
    frame = table().assign(job=lambda f: f["job"].replace("nurse", "infirmière"))
    for content in (csv_bytes(frame, "latin-1"), "\ufeff".encode() + csv_bytes(frame)):
        dataset = load_csv(content, "approved", ["sex"])
        assert "infirmière" in set(dataset.frame["job"]) and "age" in dataset.numeric


def identifying_table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    frame = table()
    codes = rng.choice([f"code {i}" for i in range(150)], len(frame))
    words = np.array(["late", "paid", "owner", "renter", "steady", "new", "job", "loan"])
    return frame.assign(
        row_number=np.arange(len(frame)) + 1000,
        name=[f"person {i:04d}" for i in rng.permutation(len(frame))],
        comment=[" ".join(rng.choice(words, 8)) for _ in range(len(frame))],
        code=codes,
        income=rng.normal(50_000, 10_000, len(frame)).round(2),  # distinct numbers, a feature
    )


def test_identifier_and_free_text_columns_are_left_out_with_a_note():
    frame = identifying_table()
    dataset = from_frame(frame, "approved", ["sex"])
    assert set(dataset.features) == {"age", "job", "sex", "income"}
    (note,) = dataset.notes
    assert "'row_number' (a different number in every row, like an identifier)" in note
    assert "'name' (a different text value in every row, like an identifier)" in note
    assert "'comment' (200 distinct long text values, like free text)" in note
    assert f"'code' ({frame['code'].nunique()} distinct text values, too many to encode" in note


def test_chosen_features_are_kept_and_the_rest_dropped():
    frame = identifying_table()
    dataset = from_frame(frame, "approved", ["sex"], features=["row_number", "job"])
    assert dataset.numeric == ("row_number",) and set(dataset.categorical) == {"job", "sex"}
    assert dataset.notes == () and list(dataset.frame.columns) == ["job", "sex", "row_number"]
    with pytest.raises(UserError, match="'comment' has 200 distinct text values, more than"):
        from_frame(frame, "approved", ["sex"], features=["comment"])
    with pytest.raises(UserError, match="no column 'salary'"):
        from_frame(frame, "approved", ["sex"], features=["salary"])
    with pytest.raises(UserError, match="'approved' cannot also be a feature"):
        from_frame(frame, "approved", ["sex"], features=["approved"])


def test_repeated_column_names_are_refused():
    frame = table().rename(columns={"job": "age "})
    with pytest.raises(UserError, match="more than one column named 'age'"):
        from_frame(frame, "approved", ["sex"])


def test_an_exact_column_name_wins_over_one_differing_in_case():
    frame = table().assign(Sex=lambda f: np.where(f["sex"] == "F", "A", "B"))
    dataset = from_frame(frame, "approved", ["Sex", "sex"])
    assert dataset.column("Sex") == "Sex" and dataset.column("sex") == "sex"


def test_the_survey_names_the_columns_and_those_left_out(tmp_path):
    path = tmp_path / "t.csv"
    identifying_table().to_csv(path, index=False)
    columns, left_out = survey_csv(path)
    assert columns == tuple(identifying_table().columns)
    assert set(left_out) == {"row_number", "name", "comment", "code"}


def test_the_spec_names_its_features_and_round_trips(tmp_path):
    path = tmp_path / "t.csv"
    identifying_table().to_csv(path, index=False)
    spec = CSVSpec(str(path), "approved", ["sex"], features=["job"])
    assert spec.features == ("job",) and spec.protected == ("sex",)
    again = spec_from_dict(json.loads(json.dumps(spec_to_dict(spec))))
    assert again == spec and hash(again) == hash(spec)
    default = CSVSpec(str(path), "approved", ("sex",))
    assert spec_from_dict(json.loads(json.dumps(spec_to_dict(default)))) == default
    options = PrepareOptions(grouping=(GroupingSpec("sex"),))
    assert load_prepared(spec, options).feature_names == (
        "job=clerk",
        "job=driver",
        "job=nurse",
        "sex=F",
        "sex=M",
    )
    assert load_prepared(default, options).n_features == 7  # age, income, job ×3, sex ×2


def test_uploads_keep_their_name_in_a_content_folder(tmp_path):
    content = csv_bytes(table())
    path = save_upload(content, "Loans 2024.csv", root=tmp_path)
    assert path.name == "Loans 2024.csv" and path.read_bytes() == content
    assert save_upload(content, "../../etc/passwd", root=tmp_path).parent == path.parent
    assert safe_file_name("..\\..\\x:y.csv") == "x_y.csv" and safe_file_name("..") == "upload.csv"
    prepared = load_prepared(
        CSVSpec(str(path), "approved", ("sex",)), PrepareOptions(grouping=(GroupingSpec("sex"),))
    )
    assert prepared.dataset_name == "Loans 2024.csv"
    with pytest.raises(UserError, match="is empty"):
        save_upload(b"", "empty.csv", root=tmp_path)


def test_the_command_line_takes_feature_columns(tmp_path, capsys):
    path = tmp_path / "t.csv"
    identifying_table().to_csv(path, index=False)
    base = [
        "data",
        "show",
        "--source",
        "csv",
        "--csv",
        str(path),
        "--label",
        "approved",
        "--attribute",
        "sex",
        "--json",
    ]
    assert main([*base, "--features", "age"]) == 0
    assert json.loads(capsys.readouterr().out)["features"] == 3  # age, sex=F, sex=M
    assert main(base) == 0
    assert "left out of the features" in json.loads(capsys.readouterr().out)["notes"][0]
