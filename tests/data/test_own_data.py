"""A user's own CSV on first use: a 0/1 protected column's groups, the label found by its name,
every leaking column named, whole-number identifiers left out."""

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.data.csv_source import CSVSpec, from_frame, survey
from engine.data.encoding import fit_encoder
from engine.data.feature_columns import unusable_reason
from engine.data.grouping import GroupingSpec, make_groups
from engine.data.label_column import guess_label
from engine.data.leakage import LEAK_CORRELATION, column_aucs, column_correlations
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared


def write(tmp_path, frame: pd.DataFrame, name: str = "own.csv") -> str:
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return str(path)


def prepared(tmp_path, frame: pd.DataFrame, label: str, protected: str, **options):
    spec = CSVSpec(write(tmp_path, frame), label, (protected,))
    return load_prepared(
        spec, PrepareOptions(grouping=(GroupingSpec(protected),), **options), use_cache=False
    )


def people(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "hours": rng.normal(40, 8, n).round(1),
            "female": rng.integers(0, 2, n),
            "outcome": rng.integers(0, 2, n),
        }
    )


# a 0/1 protected column


def test_a_zero_one_protected_column_gives_groups_named_by_its_values(tmp_path):
    data = prepared(tmp_path, people(), "outcome", "female")
    assert data.group_names == ("0", "1")
    assert data.group_map.ids(pd.DataFrame({"female": [1, 0, 1.0, "0"]})).tolist() == [1, 0, 1, 0]


def test_a_two_valued_text_or_few_valued_number_is_named_by_its_values():
    frame = people().assign(
        sex=lambda f: np.where(f["female"] == 1, "F", "M"), children=lambda f: np.arange(len(f)) % 3
    )
    dataset = from_frame(frame, "outcome", ["sex", "children", "age"])
    assert make_groups(dataset, (GroupingSpec("sex"),)).names == ("F", "M")
    assert make_groups(dataset, (GroupingSpec("children"),)).names == ("0", "1", "2")
    assert make_groups(dataset, (GroupingSpec("age"),)).names[0].startswith("<")  # still bins


# the label found by its name


def test_a_label_named_target_in_the_middle_is_preselected(tmp_path):
    frame = people().rename(columns={"outcome": "Target"})
    frame = frame[["age", "Target", "hours", "female"]]  # the last column is not the label
    found = survey(write(tmp_path, frame))
    assert found.label == "Target"
    assert found.columns[-1] == "female"


@pytest.mark.parametrize(
    ("columns", "label"),
    [
        ({"a": [0, 1], "y": [0, 1], "b": [1, 0]}, "y"),
        ({"CLASS": ["a", "b"], "x": [1, 2]}, "CLASS"),
        ({"default payment next month": [0, 1], "LIMIT_BAL": [1, 2]}, "default payment next month"),
        ({"isFraud": [0, 1], "amount": [3, 4]}, "isFraud"),
        ({"income": [1, 0], "is_default": [0, 1]}, "income"),  # the whole name wins
        ({"household_income": [1.5, 2.5, 3.5], "age": [20, 30, 40]}, None),  # many values
        ({"age": [20, 30], "sex": ["F", "M"], "score": [0, 1]}, None),  # nothing named so
    ],
)
def test_the_label_is_guessed_by_name_or_not_at_all(columns, label):
    frame = pd.DataFrame({c: list(v) * 3 for c, v in columns.items()})
    assert guess_label(frame) == label


def test_a_file_without_a_label_name_gets_no_guess(tmp_path):
    frame = people().rename(columns={"outcome": "granted"})
    assert survey(write(tmp_path, frame)).label is None


# every leaking column named


def five_leaks(n: int = 4000, seed: int = 1) -> pd.DataFrame:
    """Five columns that each give the label away, each of another kind, and honest ones."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "sex": rng.choice(["F", "M"], n),
            "paid_copy": 1 - y,  # a 0/1 copy
            "status": np.where(y == 1, "charged off", "fully paid"),  # spelled out
            "recovered": np.where(y == 1, rng.uniform(10, 900, n).round(2), np.nan),  # blank for no
            "status_code": np.where(
                y == 1, rng.choice([1, 3], n), rng.choice([2, 4], n)
            ),  # no order
            "days_late": np.where(
                y == 1, rng.integers(90, 400, n), rng.integers(0, 30, n)
            ),  # by value
            "train_row": rng.integers(0, 2, n),  # the file's own split flag: no leak
            "label": y,
        }
    )


def test_every_leaking_column_is_named(tmp_path):
    data = prepared(tmp_path, five_leaks(), "label", "sex")
    named = [w.split("'")[1] for w in data.warnings if "alone predicts the label" in w]
    assert named == ["paid_copy", "recovered", "status_code", "days_late", "status"]
    assert "train_row" in data.encoder.feature_names  # not a leak: left as a feature


def test_every_leaking_column_is_named_in_a_sparse_design(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.data.prepare.SPARSE_FROM_BYTES", 1)
    data = prepared(tmp_path, five_leaks(), "label", "sex")
    assert not isinstance(data.train.X, np.ndarray)
    assert len([w for w in data.warnings if "alone predicts the label" in w]) == 5


def test_a_real_valued_label_with_a_blank_leak_is_named():
    """A sale price known except for the cheapest tenth: blank there, a copy elsewhere."""
    rng = np.random.default_rng(2)
    price = rng.normal(100, 20, 1000)
    sold_for = np.where(price > np.quantile(price, 0.1), price + rng.normal(0, 0.1, 1000), np.nan)
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], 1000),
            "rooms": rng.integers(1, 6, 1000),
            "sold_for": sold_for,
        }
    )
    encoder = fit_encoder(frame, ("rooms", "sold_for"), ("sex",), {}, 5)
    X = encoder.transform(frame)
    scores = column_correlations(X, price, encoder, frame)
    assert scores["sold_for"] >= LEAK_CORRELATION > max(scores["rooms"], scores["sex"])
    assert column_correlations(X, price, encoder)["sold_for"] < LEAK_CORRELATION  # blanks lost


def test_rare_values_of_a_few_valued_number_do_not_look_like_a_leak():
    """A value seen in a row or two would predict its rows perfectly; such values are pooled."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 40)
    frame = pd.DataFrame({"code": np.arange(40) % 15})  # 15 values, two or three rows each
    encoder = fit_encoder(frame, ("code",), (), {}, 5)
    assert column_aucs(encoder.transform(frame), y, encoder, frame)["code"] < 0.9


# whole-number identifiers


def test_an_integer_id_with_one_value_per_row_is_left_out_and_said(tmp_path, capsys):
    rng = np.random.default_rng(4)  # member numbers of eight digits, in no order
    frame = people().assign(member=lambda f: rng.choice(9 * 10**7, len(f), replace=False) + 10**7)
    data = prepared(tmp_path, frame, "outcome", "female")
    assert "member" not in data.encoder.feature_names
    note = "'member' (a different number in every row, like an identifier)"
    assert any(note in n for n in data.notes)
    path = write(tmp_path, frame)
    assert (
        main(
            [
                "data",
                "show",
                "--source",
                "csv",
                "--csv",
                path,
                "--label",
                "outcome",
                "--attribute",
                "female",
            ]
        )
        == 0
    )
    assert note in capsys.readouterr().out


@pytest.mark.parametrize("name", ["member_id", "MemberID", "memberNo", "account number"])
def test_a_repeated_member_number_named_so_is_an_identifier(name):
    rng = np.random.default_rng(5)
    ids = rng.choice(10**6, 1100, replace=False) + 1
    members = rng.permutation(np.concatenate([ids, rng.choice(ids, 900)]))  # 55 % distinct
    reason = unusable_reason(pd.Series(members), name)
    assert reason is not None and "whole numbers in 2,000 rows, like an identifier" in reason
    assert unusable_reason(pd.Series(members), "balance") is None  # amounts look alike


def test_member_numbers_of_one_width_or_numbered_one_by_one_are_identifiers():
    rng = np.random.default_rng(6)
    wide = rng.integers(10_000_000, 99_999_999, 3000)
    wide = np.concatenate([wide, wide[:2000]])  # 3,000 members in 5,000 rows
    assert "like an identifier" in unusable_reason(pd.Series(wide), "member")
    numbered = np.concatenate([np.arange(1, 3001), rng.integers(1, 3001, 2000)])
    assert "like an identifier" in unusable_reason(pd.Series(numbered), "member")


@pytest.mark.parametrize(
    "values",
    [
        np.random.default_rng(7).integers(-50_000, 900_000, 2000),  # an amount
        np.random.default_rng(8).integers(0, 1500, 2000),  # a count: few values per row
        np.random.default_rng(9).normal(0, 1, 2000),  # real numbers
    ],
)
def test_amounts_and_counts_stay_features(values):
    assert unusable_reason(pd.Series(values), "value") is None
