"""Synthetic ACS PUMS person files: read by folktables, usable by every stock task, reproducible."""

from __future__ import annotations

import importlib
import json
import zipfile
from pathlib import Path

import folktables
import numpy as np
import pandas as pd
import pytest

from engine.data.synthetic_pums import is_synthetic, write_census_zip, write_synthetic_pums
from engine.errors import UserError

STOCK_TASKS = (
    "ACSIncome",
    "ACSEmployment",
    "ACSPublicCoverage",
    "ACSHealthInsurance",
    "ACSTravelTime",
    "ACSMobility",
    "ACSEmploymentFiltered",
    "ACSIncomePovertyRatio",
)
RENAMED_IN_2019 = {"RELSHIPP": "RELP", "JWTRNS": "JWTR"}
# Columns the stock tasks read besides features, target and group: their row filters.
FILTER_COLUMNS = {"AGEP", "PINCP", "WKHP", "PWGTP", "ESR"}
N_PERSONS = 4000
FOLKTABLES_LOADER = importlib.import_module("folktables.load_acs")


def read_with_folktables(root: Path, state: str, year: int, horizon: str = "1-Year"):
    source = folktables.ACSDataSource(
        survey_year=str(year), horizon=horizon, survey="person", root_dir=str(root)
    )
    return source.get_data(states=[state], download=False)


def header_of(csv_path: Path) -> list[str]:
    with open(csv_path) as handle:
        return handle.readline().rstrip("\n").split(",")


def columns_the_tasks_use() -> set[str]:
    used = set(FILTER_COLUMNS)
    for name in STOCK_TASKS:
        task = getattr(folktables, name)
        used |= set(task.features) | {task.target, task.group}
    return used


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[int, tuple[Path, pd.DataFrame]]:
    """Connecticut files for a year before 2017, one with the old names, one with the new."""
    root = tmp_path_factory.mktemp("pums")
    files = {}
    for year in (2016, 2018, 2019):
        path = write_synthetic_pums(root, "CT", year, n_persons=N_PERSONS, seed=7)
        files[year] = (path, read_with_folktables(root, "CT", year))
    return files


@pytest.mark.parametrize("year", [2016, 2018, 2019])
def test_folktables_reads_every_person(written, year):
    _, frame = written[year]
    assert len(frame) == N_PERSONS
    assert (frame["RT"] == "P").all()
    assert frame["SERIALNO"].str.fullmatch(rf"{year}(GQ|HU)\d{{7}}").all()


@pytest.mark.parametrize("year", [2018, 2019])
@pytest.mark.parametrize("task_name", STOCK_TASKS)
def test_every_stock_task_gets_features_and_both_label_classes(written, year, task_name):
    task = getattr(folktables, task_name)
    frame = written[year][1].rename(columns=RENAMED_IN_2019)
    features, label, group = task.df_to_numpy(frame)
    assert len(label) >= 500
    assert features.shape == (len(label), len(task.features))
    assert 0.02 < label.mean() < 0.98
    assert len(np.unique(group)) > 1


def test_header_holds_what_the_tasks_need_with_the_names_of_the_year(written):
    before, after = header_of(written[2018][0]), header_of(written[2019][0])
    for header in (before, after):
        assert header[:9] == [
            "RT",
            "SERIALNO",
            "DIVISION",
            "SPORDER",
            "PUMA",
            "REGION",
            "ST",
            "ADJINC",
            "PWGTP",
        ]
        assert len(header) == len(set(header))
    assert columns_the_tasks_use() <= set(before)
    assert {"RELP", "JWTR"} <= set(before) and not {"RELSHIPP", "JWTRNS"} & set(before)
    assert {"RELSHIPP", "JWTRNS"} <= set(after) and not {"RELP", "JWTR"} & set(after)
    renamed = [RENAMED_IN_2019.get(c, c) for c in after]
    assert renamed == before


def test_years_before_2017_also_have_every_task_column(written):
    assert columns_the_tasks_use() <= set(header_of(written[2016][0]))


def test_relationship_codes_follow_the_year(written):
    assert set(written[2018][1]["RELP"]) <= set(range(0, 18))
    assert set(written[2019][1]["RELSHIPP"]) <= set(range(20, 39))
    assert (written[2019][1].groupby("SERIALNO")["RELSHIPP"].first().isin([20, 37, 38])).all()


def test_values_come_from_the_census_code_domains(written):
    frame = written[2018][1]
    domains = {
        "SEX": range(1, 3),
        "RAC1P": range(1, 10),
        "MAR": range(1, 6),
        "SCHL": range(1, 25),
        "COW": range(1, 10),
        "ESR": range(1, 7),
        "CIT": range(1, 6),
        "NATIVITY": range(1, 3),
        "MIG": range(1, 4),
        "MIL": range(1, 5),
        "ANC": (1, 2, 3, 4, 8),
        "DIS": range(1, 3),
        "DEAR": range(1, 3),
        "DEYE": range(1, 3),
        "DREM": range(1, 3),
        "ESP": range(1, 9),
        "GCL": range(1, 3),
        "FER": range(1, 3),
        "HINS2": range(1, 3),
        "PUBCOV": range(1, 3),
        "JWTR": range(1, 13),
        "POVPIP": range(0, 502),
        "AGEP": range(0, 100),
    }
    for column, allowed in domains.items():
        values = frame[column].dropna()
        assert len(values) > 0, column
        assert values.isin(allowed).all(), column
    for flag in ("RACAIAN", "RACASN", "RACBLK", "RACNH", "RACPI", "RACSOR", "RACWHT"):
        assert set(frame[flag]) <= {0, 1}, flag
    assert frame["OCCP"].dropna().between(10, 9920).all()
    assert frame["POBP"].between(1, 554).all()
    assert frame["JWMNP"].dropna().between(1, 200).all()
    assert frame["WKHP"].dropna().between(1, 99).all()
    assert (frame["PWGTP"] >= 1).all() and frame["PINCP"].dropna().ge(-19_998).all()


def test_race_flags_agree_with_the_race_code(written):
    frame = written[2018][1]
    assert (frame.loc[frame["RAC1P"] == 1, "RACWHT"] == 1).all()
    assert (frame.loc[frame["RAC1P"] == 2, "RACBLK"] == 1).all()
    assert (frame.loc[frame["RAC1P"] == 6, "RACASN"] == 1).all()
    flags = frame[["RACAIAN", "RACASN", "RACBLK", "RACNH", "RACPI", "RACSOR", "RACWHT"]].sum(axis=1)
    assert (flags[frame["RAC1P"] == 9] >= 2).all()
    assert (flags[frame["RAC1P"].isin([1, 2, 6, 8])] == 1).all()


def test_blanks_follow_the_census_universes(written):
    frame = written[2018][1]
    under_16, under_15, under_3 = frame["AGEP"] < 16, frame["AGEP"] < 15, frame["AGEP"] < 3
    for column in ("COW", "OCCP", "WKHP", "ESR"):
        assert frame.loc[under_16, column].isna().all(), column
    assert frame.loc[under_15, "PINCP"].isna().all() and frame.loc[~under_15, "PINCP"].notna().all()
    assert frame.loc[under_3, "SCHL"].isna().all() and frame.loc[~under_3, "SCHL"].notna().all()
    not_at_work = ~frame["ESR"].isin([1, 4])
    for column in ("JWMNP", "JWTR", "POWPUMA"):
        assert frame.loc[not_at_work, column].isna().all(), column
    assert frame.loc[frame["SEX"] == 1, "FER"].isna().all()
    employed = frame["ESR"].isin([1, 2])
    assert frame.loc[employed, ["COW", "OCCP", "WKHP"]].notna().all().all()


def test_people_of_a_sample_unit_are_numbered_in_order(written):
    frame = written[2018][1]
    numbers = frame.groupby("SERIALNO", sort=False)["SPORDER"].agg(list)
    assert all(order == list(range(1, len(order) + 1)) for order in numbers)
    group_quarters = numbers[numbers.index.str.contains("GQ")]
    assert len(group_quarters) > 0 and all(order == [1] for order in group_quarters)
    assert list(frame["SERIALNO"]) == sorted(frame["SERIALNO"])


def test_income_depends_on_schooling_hours_and_shows_group_gaps(written):
    frame = written[2018][1]
    workers = frame[(frame["AGEP"] >= 25) & (frame["WKHP"] >= 35)]
    high = workers["PINCP"] > 50_000
    assert high[workers["SCHL"] >= 21].mean() > high[workers["SCHL"] <= 16].mean() + 0.15
    assert high[workers["SEX"] == 1].mean() > high[workers["SEX"] == 2].mean() + 0.03
    adults = frame[frame["AGEP"].between(25, 60)]
    assert (
        adults.loc[adults["WKHP"] >= 35, "PINCP"].median()
        > adults.loc[adults["WKHP"] < 35, "PINCP"].median()
    )


def test_same_seed_gives_the_same_bytes_and_other_seeds_differ(tmp_path):
    first = write_synthetic_pums(tmp_path / "a", "CT", 2018, n_persons=1000, seed=3)
    again = write_synthetic_pums(tmp_path / "b", "CT", 2018, n_persons=1000, seed=3)
    other = write_synthetic_pums(tmp_path / "c", "CT", 2018, n_persons=1000, seed=4)
    assert first.read_bytes() == again.read_bytes()
    assert first.read_bytes() != other.read_bytes()


def test_the_file_holds_exactly_the_persons_asked_for(tmp_path):
    for n_persons in (1, 2, 37):
        write_synthetic_pums(tmp_path / str(n_persons), "RI", 2018, n_persons=n_persons)
        assert len(read_with_folktables(tmp_path / str(n_persons), "RI", 2018)) == n_persons


def test_sidecar_marks_the_file_as_synthetic(tmp_path):
    path = write_synthetic_pums(tmp_path, "CT", 2018, n_persons=300, seed=11)
    marker = path.with_name(path.name + ".synthetic.json")
    content = json.loads(marker.read_text())
    assert content["seed"] == 11 and content["n_persons"] == 300
    assert isinstance(content["generator_version"], int)
    assert is_synthetic(path)
    real_looking = tmp_path / "psam_p09.csv"
    real_looking.write_bytes(path.read_bytes())
    assert not is_synthetic(real_looking)


@pytest.mark.parametrize(
    ("state", "year", "file_name", "fips"),
    [
        ("CT", 2018, "psam_p09.csv", 9),
        ("CA", 2019, "psam_p06.csv", 6),
        ("PR", 2021, "psam_p72.csv", 72),
        ("TX", 2016, "ss16ptx.csv", 48),
        ("AK", 2014, "ss14pak.csv", 2),
    ],
)
def test_file_name_and_state_column_carry_the_state(tmp_path, state, year, file_name, fips):
    path = write_synthetic_pums(tmp_path, state, year, n_persons=200)
    assert path == tmp_path / str(year) / "1-Year" / file_name
    frame = read_with_folktables(tmp_path, state, year)
    assert (frame["ST"] == fips).all()
    assert frame["POBP"].eq(fips).mean() > 0.3


def test_five_year_files_span_five_survey_years(tmp_path):
    path = write_synthetic_pums(tmp_path, "VT", 2018, n_persons=3000, horizon="5-Year")
    assert path == tmp_path / "2018" / "5-Year" / "psam_p50.csv"
    frame = read_with_folktables(tmp_path, "VT", 2018, horizon="5-Year")
    assert set(frame["SERIALNO"].str[:4].astype(int)) == {2014, 2015, 2016, 2017, 2018}


def test_lower_case_state_codes_are_accepted(tmp_path):
    lower = write_synthetic_pums(tmp_path / "a", "ct", 2018, n_persons=100)
    upper = write_synthetic_pums(tmp_path / "b", "CT", 2018, n_persons=100)
    assert lower.name == "psam_p09.csv" and lower.read_bytes() == upper.read_bytes()


def test_census_zip_holds_only_the_csv_and_folktables_unpacks_it(tmp_path, monkeypatch):
    source = write_synthetic_pums(tmp_path / "made", "CT", 2018, n_persons=500)
    archive = write_census_zip(source, tmp_path / "census" / "csv_pct.zip")
    assert archive == tmp_path / "census" / "csv_pct.zip"
    with zipfile.ZipFile(archive) as bundle:
        assert bundle.namelist() == ["psam_p09.csv"]
        assert bundle.read("psam_p09.csv") == source.read_bytes()
    again = write_census_zip(source, tmp_path / "again" / "csv_pct.zip")
    assert again.read_bytes() == archive.read_bytes()

    class Response:
        content = archive.read_bytes()

    requested = []
    monkeypatch.setattr(
        FOLKTABLES_LOADER.requests, "get", lambda url: requested.append(url) or Response()
    )
    source_dir = tmp_path / "downloaded"
    frame = folktables.ACSDataSource("2018", "1-Year", "person", root_dir=str(source_dir)).get_data(
        states=["CT"], download=True
    )
    assert requested and requested[0].endswith("/2018/1-Year/csv_pct.zip")
    assert len(frame) == 500


def test_packaging_a_missing_file_is_refused(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        write_census_zip(tmp_path / "psam_p09.csv", tmp_path / "csv_pct.zip")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"state": "DC"}, r"District of Columbia \(DC\) is not supported"),
        ({"state": "XX"}, r"unknown state 'XX'"),
        ({"year": 2013}, r"year 2013 is not supported; folktables reads 2014 and later"),
        ({"horizon": "3-Year"}, r"horizon must be one of 1-Year, 5-Year, not '3-Year'"),
        ({"n_persons": 0}, r"Number of persons.*not 0"),
        ({"seed": -1}, r"Seed.*not -1"),
    ],
)
def test_bad_arguments_are_refused_in_plain_words(tmp_path, arguments, message):
    call = {"state": "CT", "year": 2018, "n_persons": 100, "seed": 0} | arguments
    with pytest.raises(UserError, match=message):
        write_synthetic_pums(tmp_path, **call)
    assert not any(tmp_path.rglob("*.csv"))
