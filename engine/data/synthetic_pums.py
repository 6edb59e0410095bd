"""Seeded synthetic person files in the US Census ACS PUMS CSV layout.

The files stand in for the real survey where it cannot be downloaded (tests, offline demos):
folktables' own reader loads them, and every stock folktables task runs on the result. Values come
from each variable's code domain, blanks follow the census universes (no class of worker for
children, no travel time for people who did not commute, ...), and the variables depend on each
other so that the tasks are learnable and show gaps between groups.

Nothing in a file describes real people. Every file gets a sidecar marker, `<csv>.synthetic.json`,
so that the app can label anything built from it as synthetic (see `is_synthetic`).
"""

from __future__ import annotations

import json
import os
import zipfile
from functools import reduce
from pathlib import Path

import numpy as np

from engine.data.acs_files import HORIZONS, check_state, check_year_horizon, state_file_name
from engine.data.synthetic_persons import STATES, draw_persons
from engine.errors import UserError

GENERATOR = "fairfront.synthetic_pums"
GENERATOR_VERSION = 1
MARKER_SUFFIX = ".synthetic.json"
MAX_PERSONS = 2_000_000  # in one state's file
# Persons of the 50 states and Puerto Rico that give about 1.66 M rows of the income task, the
# pooled ACSIncome 2018 of paper 003 (Table 2): the generator's records pass the income filter
# about 49 % of the time (the census files' 3.24 M persons about 51 %).
FULL_SIZE_PERSONS = 3_400_000

# Resident population on 1 July 2018 in thousands (US Census Bureau, Vintage 2018 estimates): how
# a number of persons is shared among several states.
_POPULATION_THOUSANDS: dict[str, int] = {
    "AL": 4888,
    "AK": 737,
    "AZ": 7172,
    "AR": 3014,
    "CA": 39557,
    "CO": 5696,
    "CT": 3573,
    "DE": 967,
    "FL": 21299,
    "GA": 10519,
    "HI": 1420,
    "ID": 1754,
    "IL": 12741,
    "IN": 6692,
    "IA": 3156,
    "KS": 2912,
    "KY": 4468,
    "LA": 4660,
    "ME": 1338,
    "MD": 6043,
    "MA": 6902,
    "MI": 9996,
    "MN": 5611,
    "MS": 2987,
    "MO": 6126,
    "MT": 1062,
    "NE": 1929,
    "NV": 3034,
    "NH": 1356,
    "NJ": 8909,
    "NM": 2095,
    "NY": 19542,
    "NC": 10384,
    "ND": 760,
    "OH": 11689,
    "OK": 3943,
    "OR": 4191,
    "PA": 12807,
    "RI": 1057,
    "SC": 5084,
    "SD": 882,
    "TN": 6770,
    "TX": 28702,
    "UT": 3161,
    "VT": 626,
    "VA": 8518,
    "WA": 7536,
    "WV": 1806,
    "WI": 5814,
    "WY": 578,
    "PR": 3195,
}
# Zero-padded widths of the code-like fields, as in the census data dictionary.
_TEXT = np.dtypes.StringDType()
_WIDTHS = {"ST": 2, "PUMA": 5, "POWPUMA": 5, "ADJINC": 7, "OCCP": 4, "POBP": 3}


def person_columns(year: int) -> list[str]:
    """The header of a synthetic person file for `year`, in the order of the census files.

    From 2019 on the census names the relationship RELSHIPP (codes 20-38) instead of RELP (0-17)
    and the means of transportation to work JWTRNS instead of JWTR.
    """
    relationship, transport = ("RELSHIPP", "JWTRNS") if year >= 2019 else ("RELP", "JWTR")
    return [
        "RT",
        "SERIALNO",
        "DIVISION",
        "SPORDER",
        "PUMA",
        "REGION",
        "ST",
        "ADJINC",
        "PWGTP",
        "AGEP",
        "CIT",
        "COW",
        "DEAR",
        "DEYE",
        "DREM",
        "FER",
        "GCL",
        "HINS2",
        "JWMNP",
        transport,
        "MAR",
        "MIG",
        "MIL",
        relationship,
        "SCHL",
        "SEX",
        "WKHP",
        "ANC",
        "DIS",
        "ESP",
        "ESR",
        "NATIVITY",
        "OCCP",
        "PINCP",
        "POBP",
        "POVPIP",
        "POWPUMA",
        "PUBCOV",
        "RAC1P",
        "RACAIAN",
        "RACASN",
        "RACBLK",
        "RACNH",
        "RACPI",
        "RACSOR",
        "RACWHT",
    ]


def write_synthetic_pums(
    root: Path,
    state: str,
    year: int,
    n_persons: int = 2000,
    seed: int = 0,
    horizon: str = "1-Year",
) -> Path:
    """Write a synthetic ACS PUMS person file where folktables looks for the real one.

    The file is `root/{year}/{horizon}/psam_p{fips}.csv` (`ss{yy}p{st}.csv` before 2017), so
    `folktables.ACSDataSource(str(year), horizon, "person", root_dir=root)
    .get_data(states=[state], download=False)` reads it. Next to it goes the marker
    `<csv>.synthetic.json` with the seed, the size and the generator version.

    The same arguments always give a byte-identical file. Raises `UserError` for an unknown state
    (folktables has no DC), a year before 2014, an unknown horizon, or a bad size or seed.
    """
    code = check_state(state)
    _check_arguments(year, n_persons, seed, horizon)
    fips, division = STATES[code]
    rng = np.random.default_rng([seed, fips, year, HORIZONS.index(horizon)])
    columns = draw_persons(rng, n_persons, fips, division, year, horizon)

    csv_path = Path(root) / str(year) / horizon / state_file_name(code, year)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    partial = csv_path.with_name(f"{csv_path.name}.{os.getpid()}.part")
    partial.write_text(_csv_text(columns, person_columns(year)), encoding="ascii", newline="\n")
    marker = {
        "generator": GENERATOR,
        "generator_version": GENERATOR_VERSION,
        "horizon": horizon,
        "n_persons": n_persons,
        "seed": seed,
        "state": code,
        "synthetic": True,
        "year": year,
    }
    marker_path(csv_path).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n")
    partial.replace(csv_path)  # last: a reader never finds half a file, nor one without its marker
    return csv_path


def persons_per_state(states: tuple[str, ...], n_persons: int, at_least: int = 1) -> dict[str, int]:
    """`n_persons` shared among `states` in proportion to their populations (largest remainders,
    so the shares add up to `n_persons`), then raised to `at_least` where smaller."""
    weights = np.array([_POPULATION_THOUSANDS[check_state(s)] for s in states], dtype=float)
    exact = n_persons * weights / weights.sum()
    counts = np.floor(exact).astype(np.int64)
    counts[np.argsort(counts - exact, kind="stable")[: n_persons - counts.sum()]] += 1
    return {s: max(int(c), at_least) for s, c in zip(states, counts, strict=True)}


def marker_path(csv_path: Path) -> Path:
    """The sidecar file that marks `csv_path` as synthetic."""
    csv_path = Path(csv_path)
    return csv_path.with_name(csv_path.name + MARKER_SUFFIX)


def is_synthetic(csv_path: Path) -> bool:
    """Whether `csv_path` was written by `write_synthetic_pums` (its sidecar marker exists)."""
    return marker_path(csv_path).is_file()


def write_census_zip(csv_path: Path, zip_path: Path) -> Path:
    """Package a PUMS CSV the way the census distributes it: the CSV alone at the zip's top level.

    The census names the zip after the state (`csv_pct.zip` holds `psam_p09.csv`); the caller
    chooses `zip_path`. Entries get a fixed timestamp, so the same CSV gives the same zip bytes.
    """
    csv_path, zip_path = Path(csv_path), Path(zip_path)
    if not csv_path.is_file():
        raise UserError(f"Cannot package {csv_path}: there is no such file.")
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    entry = zipfile.ZipInfo(csv_path.name, date_time=(1980, 1, 1, 0, 0, 0))
    entry.compress_type = zipfile.ZIP_DEFLATED
    entry.external_attr = 0o644 << 16
    with zipfile.ZipFile(zip_path, "w") as archive:
        archive.writestr(entry, csv_path.read_bytes())
    return zip_path


def _check_arguments(year: int, n_persons: int, seed: int, horizon: str) -> None:
    if not isinstance(year, int):
        raise UserError(f"the year must be a whole number, not {year!r}")
    check_year_horizon(year, horizon)
    if not isinstance(n_persons, int) or not 1 <= n_persons <= MAX_PERSONS:
        raise UserError(
            f"Number of persons must be between 1 and {MAX_PERSONS:,}, not {n_persons!r}."
        )
    if not isinstance(seed, int) or seed < 0:
        raise UserError(f"Seed must be a whole number of 0 or more, not {seed!r}.")


def _csv_text(cols: dict[str, np.ndarray], header: list[str]) -> str:
    fields = [_format_column(name, cols[name]) for name in header]
    rows = reduce(_join_fields, fields[1:], fields[0])
    return ",".join(header) + "\n" + "\n".join(rows.tolist()) + "\n"


def _join_fields(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return np.strings.add(np.strings.add(left, ","), right)


def _format_column(name: str, values: np.ndarray) -> np.ndarray:
    """Digits as the census writes them (code-like fields zero-padded), blanks as empty fields."""
    if values.dtype.kind in "US":
        return values.astype(_TEXT)
    blank = np.isnan(values)
    digits = np.where(blank, 0, values).astype(np.int64).astype(_TEXT)
    if name in _WIDTHS:
        digits = np.strings.zfill(digits, _WIDTHS[name])
    digits[blank] = ""
    return digits
