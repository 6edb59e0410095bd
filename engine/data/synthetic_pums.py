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
from dataclasses import dataclass
from functools import reduce
from pathlib import Path

import numpy as np

from engine.data.acs_files import HORIZONS, check_state, check_year_horizon, state_file_name
from engine.errors import UserError

GENERATOR = "fairfront.synthetic_pums"
GENERATOR_VERSION = 1
MARKER_SUFFIX = ".synthetic.json"
MAX_PERSONS = 2_000_000  # in one state's file
# Persons of the 50 states and Puerto Rico that give about 1.66 M rows of the income task, the
# pooled ACSIncome 2018 of paper 003 (Table 2): the generator's records pass the income filter
# about 49 % of the time (the census files' 3.24 M persons about 51 %).
FULL_SIZE_PERSONS = 3_400_000

# State or Puerto Rico: (FIPS code, census division). Folktables has no file for DC.
_STATES: dict[str, tuple[int, int]] = {
    "AL": (1, 6),
    "AK": (2, 9),
    "AZ": (4, 8),
    "AR": (5, 7),
    "CA": (6, 9),
    "CO": (8, 8),
    "CT": (9, 1),
    "DE": (10, 5),
    "FL": (12, 5),
    "GA": (13, 5),
    "HI": (15, 9),
    "ID": (16, 8),
    "IL": (17, 3),
    "IN": (18, 3),
    "IA": (19, 4),
    "KS": (20, 4),
    "KY": (21, 6),
    "LA": (22, 7),
    "ME": (23, 1),
    "MD": (24, 5),
    "MA": (25, 1),
    "MI": (26, 3),
    "MN": (27, 4),
    "MS": (28, 6),
    "MO": (29, 4),
    "MT": (30, 8),
    "NE": (31, 4),
    "NV": (32, 8),
    "NH": (33, 1),
    "NJ": (34, 2),
    "NM": (35, 8),
    "NY": (36, 2),
    "NC": (37, 5),
    "ND": (38, 4),
    "OH": (39, 3),
    "OK": (40, 7),
    "OR": (41, 9),
    "PA": (42, 2),
    "RI": (44, 1),
    "SC": (45, 5),
    "SD": (46, 4),
    "TN": (47, 6),
    "TX": (48, 7),
    "UT": (49, 8),
    "VT": (50, 1),
    "VA": (51, 5),
    "WA": (53, 9),
    "WV": (54, 5),
    "WI": (55, 3),
    "WY": (56, 8),
    "PR": (72, 0),
}
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
_REGION_OF_DIVISION = np.array([9, 1, 1, 2, 2, 3, 3, 3, 4, 4])
_FIPS_CODES = np.array(sorted(fips for fips, _ in _STATES.values()))

# Incomes are written in survey-year dollars, so the adjustment factor (six implied decimals) is 1.
_ADJINC = 1_000_000
_PUMAS_PER_STATE = 12
_URBAN_PUMAS = 4
_GQ_SHARE = 0.03
_HOUSEHOLD_SIZES = (1, 2, 3, 4, 5, 6, 7)
_HOUSEHOLD_SIZE_SHARES = (0.28, 0.34, 0.15, 0.13, 0.06, 0.025, 0.015)

# Zero-padded widths of the code-like fields, as in the census data dictionary.
_TEXT = np.dtypes.StringDType()
_WIDTHS = {"ST": 2, "PUMA": 5, "POWPUMA": 5, "ADJINC": 7, "OCCP": 4, "POBP": 3}

# Relationship to the reference person, as roles; RELP (to 2018) and RELSHIPP (2019 on) code them.
(
    REF,
    SPOUSE,
    PARTNER,
    BIO_CHILD,
    ADOPTED,
    STEPCHILD,
    SIBLING,
    PARENT,
    GRANDCHILD,
    PARENT_IN_LAW,
    CHILD_IN_LAW,
    OTHER_RELATIVE,
    ROOMMATE,
    FOSTER_CHILD,
    OTHER_NONRELATIVE,
    GQ_INSTITUTIONAL,
    GQ_NONINSTITUTIONAL,
) = range(17)
_RELP = np.array([0, 1, 13, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16, 17])
_RELSHIPP = np.array([20, 21, 22, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38])
_RELSHIPP_SAME_SEX = {SPOUSE: 23, PARTNER: 24}
_OWN_CHILD = (BIO_CHILD, ADOPTED, STEPCHILD)
_ADULT_ROLES = (
    REF,
    SPOUSE,
    PARTNER,
    PARENT,
    PARENT_IN_LAW,
    CHILD_IN_LAW,
    ROOMMATE,
    OTHER_NONRELATIVE,
    GQ_INSTITUTIONAL,
    GQ_NONINSTITUTIONAL,
)
_UNRELATED = (PARTNER, ROOMMATE, FOSTER_CHILD, OTHER_NONRELATIVE)

# RAC1P 1-9 and the shares of each among residents.
_RACE_SHARES = (0.72, 0.12, 0.008, 0.001, 0.003, 0.058, 0.002, 0.048, 0.04)
_RACE_FOREIGN_BORN = np.array([0, 0.05, 0.09, 0.03, 0.01, 0.03, 0.62, 0.25, 0.38, 0.12])
_RACE_EDUCATION_SHIFT = np.array([0, 0, -0.3, -0.4, -0.4, -0.4, 0.4, -0.2, -0.5, 0])
_RACE_PAY_SHIFT = np.array([0, 0, -0.18, -0.15, -0.15, -0.15, 0.05, -0.1, -0.15, -0.05])

# POBP codes of a few frequent birthplaces abroad.
_BORN_IN_ASIA = (207, 210, 217, 233, 247)
_BORN_IN_THE_AMERICAS = (301, 303, 312, 313, 327, 329)
_BORN_IN_EUROPE = (110, 120, 128)

# Adult educational attainment (SCHL) and its shares.
_ADULT_SCHL = (1, 8, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24)
_ADULT_SCHL_SHARES = (
    0.012,
    0.01,
    0.02,
    0.015,
    0.015,
    0.02,
    0.235,
    0.04,
    0.06,
    0.13,
    0.09,
    0.21,
    0.1,
    0.025,
    0.018,
)

# Occupations (OCCP), by the schooling they usually take, each with a pay level (log scale).
_OCCUPATIONS_BY_TIER = (
    (
        (4720, -0.6),
        (4760, -0.35),
        (4110, -0.55),
        (4020, -0.5),
        (4220, -0.4),
        (9130, 0.0),
        (9620, -0.3),
        (6260, -0.2),
    ),
    ((5000, 0.05), (5240, -0.15), (4700, 0.0), (7200, 0.0), (6230, -0.05)),
    ((10, 0.9), (800, 0.35), (1010, 0.45), (2100, 0.8), (2200, 0.3), (2310, 0.0), (3255, 0.35)),
)
_MILITARY_OCCP = 9830
_LONG_UNEMPLOYED_OCCP = 9920

# Means of transportation to work: car, bus, subway, train, bicycle, walked, worked at home, other.
_CAR, _BUS, _SUBWAY, _TRAIN, _BICYCLE, _WALKED, _AT_HOME, _OTHER = range(8)
_JWTR = np.array([1, 2, 4, 5, 9, 10, 11, 12])
_JWTRNS = np.array([1, 2, 3, 4, 9, 10, 11, 12])
_MODE_MINUTES_SHIFT = np.array([0.0, 0.6, 0.55, 0.8, -0.3, -0.5, 0.0, 0.1])


@dataclass(frozen=True)
class _Households:
    """Where each person lives: sample unit, position in it, and the unit's reference person."""

    serial: np.ndarray
    unit: np.ndarray
    head: np.ndarray
    sporder: np.ndarray
    in_gq: np.ndarray

    def any(self, mask: np.ndarray) -> np.ndarray:
        """Per person: whether anyone in the person's unit satisfies `mask`."""
        counts = np.bincount(self.unit, weights=mask.astype(float), minlength=self.unit[-1] + 1)
        return counts[self.unit] > 0

    def total(self, values: np.ndarray) -> np.ndarray:
        """Per person: the sum of `values` over the person's unit."""
        return np.bincount(self.unit, weights=values, minlength=self.unit[-1] + 1)[self.unit]


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
    fips, division = _STATES[code]
    rng = np.random.default_rng([seed, fips, year, HORIZONS.index(horizon)])
    columns = _draw_persons(rng, n_persons, fips, division, year, horizon)

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


def _draw_persons(
    rng: np.random.Generator, n: int, fips: int, division: int, year: int, horizon: str
) -> dict[str, np.ndarray]:
    """All columns of the file, numeric with NaN for blanks except RT and SERIALNO."""
    homes = _draw_households(rng, n, year, horizon)
    role = _draw_roles(rng, homes)
    cols = {"SEX": _partner_sexes(rng, rng.integers(1, 3, n).astype(float), role, homes)}
    cols["AGEP"] = _draw_ages(rng, role, homes)
    cols.update(_relationship(role, cols["SEX"], homes, year))
    cols.update(_race(rng, homes))
    cols.update(_birth(rng, cols["AGEP"], cols["RAC1P"], fips))
    cols["ANC"] = _choose(rng, (1, 2, 3, 4), (0.52, 0.17, 0.04, 0.27), n)
    cols["SCHL"] = _schooling(rng, cols["AGEP"], cols["RAC1P"])
    cols["MAR"] = _marital_status(rng, cols["AGEP"], role, homes)
    cols.update(_disabilities(rng, cols["AGEP"]))
    cols["MIL"] = _military(rng, cols["AGEP"], cols["SEX"])
    cols["ESR"] = _employment(rng, cols)
    work, pay = _work(rng, cols)
    cols.update(work)
    cols["PINCP"] = _income(rng, cols, pay)
    cols["POVPIP"] = _poverty_ratio(cols["PINCP"], cols["AGEP"], role, homes)
    cols["FER"] = _fertility(rng, cols, role, homes)
    cols.update(_insurance(rng, cols, role))
    cols.update(_commute(rng, cols, homes, year))
    cols["MIG"] = _migration(rng, cols, role, homes)
    cols["ESP"] = _parents_employment(cols, role, homes)
    cols["GCL"] = _grandparent_status(cols["AGEP"], role, homes)
    cols["PWGTP"] = np.maximum(1, np.round(rng.lognormal(np.log(95), 0.55, n)))
    cols.update(
        RT=np.full(n, "P"),
        SERIALNO=homes.serial,
        SPORDER=homes.sporder.astype(float),
        ST=np.full(n, float(fips)),
        DIVISION=np.full(n, float(division)),
        REGION=np.full(n, float(_REGION_OF_DIVISION[division])),
        ADJINC=np.full(n, float(_ADJINC)),
    )
    return cols


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _chance(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    return rng.random(np.shape(p)) < p


def _choose(rng: np.random.Generator, codes: tuple, shares: tuple, n: int) -> np.ndarray:
    p = np.asarray(shares, dtype=float)
    return np.asarray(codes, dtype=float)[rng.choice(len(codes), size=n, p=p / p.sum())]


def _choose_rows(rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """One column index per row of `weights`, drawn in proportion to the row's weights."""
    cumulative = np.cumsum(weights, axis=1)
    u = rng.random(len(weights)) * cumulative[:, -1]
    return (u[:, None] >= cumulative).sum(axis=1)


def _blank_unless(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.where(mask, values, np.nan)


def _draw_households(rng: np.random.Generator, n: int, year: int, horizon: str) -> _Households:
    n_gq = int(rng.binomial(n, _GQ_SHARE))
    sizes = np.concatenate([np.ones(n_gq, dtype=np.int64), _household_sizes(rng, n - n_gq)])
    gq_unit = np.arange(len(sizes)) < n_gq
    serials = _serial_numbers(rng, gq_unit, year, horizon)
    order = np.argsort(serials, kind="stable")
    sizes, gq_unit, serials = sizes[order], gq_unit[order], serials[order]
    unit = np.repeat(np.arange(len(sizes)), sizes)
    head = (np.cumsum(sizes) - sizes)[unit]
    return _Households(
        serial=serials[unit],
        unit=unit,
        head=head,
        sporder=np.arange(n) - head + 1,
        in_gq=gq_unit[unit],
    )


def _household_sizes(rng: np.random.Generator, n: int) -> np.ndarray:
    """Sizes of households that hold exactly `n` persons."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    sizes = rng.choice(_HOUSEHOLD_SIZES, size=n, p=_HOUSEHOLD_SIZE_SHARES)
    ends = np.cumsum(sizes)
    last = int(np.searchsorted(ends, n))
    sizes = sizes[: last + 1].copy()
    sizes[last] -= ends[last] - n
    return sizes


def _serial_numbers(
    rng: np.random.Generator, gq_unit: np.ndarray, year: int, horizon: str
) -> np.ndarray:
    """SERIALNO per unit, like 2018GQ0000049; a 5-year file spans five survey years."""
    n = len(gq_unit)
    years = np.full(n, year) if horizon == "1-Year" else rng.integers(year - 4, year + 1, n)
    numbers = rng.choice(9_999_999, size=n, replace=False) + 1
    prefix = np.strings.add(years.astype(str), np.where(gq_unit, "GQ", "HU"))
    return np.strings.add(prefix, np.strings.zfill(numbers.astype(str), 7))


def _draw_roles(rng: np.random.Generator, homes: _Households) -> np.ndarray:
    n = len(homes.unit)
    second = _choose(
        rng,
        (SPOUSE, PARTNER, BIO_CHILD, OTHER_RELATIVE, ROOMMATE),
        (0.56, 0.1, 0.24, 0.05, 0.05),
        n,
    )
    later = _choose(
        rng,
        (
            BIO_CHILD,
            ADOPTED,
            STEPCHILD,
            GRANDCHILD,
            SIBLING,
            PARENT,
            PARENT_IN_LAW,
            CHILD_IN_LAW,
            OTHER_RELATIVE,
            FOSTER_CHILD,
            OTHER_NONRELATIVE,
            ROOMMATE,
        ),
        (0.72, 0.02, 0.05, 0.07, 0.025, 0.03, 0.01, 0.015, 0.03, 0.005, 0.01, 0.015),
        n,
    )
    gq = np.where(rng.random(n) < 0.4, GQ_INSTITUTIONAL, GQ_NONINSTITUTIONAL)
    position = [homes.in_gq, homes.sporder == 1, homes.sporder == 2]
    role = np.select(position, [gq, REF, second], later)
    return role.astype(np.int64)


def _partner_sexes(
    rng: np.random.Generator, sex: np.ndarray, role: np.ndarray, homes: _Households
) -> np.ndarray:
    """Spouses and partners are mostly of the other sex than the reference person."""
    couple = np.isin(role, (SPOUSE, PARTNER))
    other_sex = 3 - sex[homes.head]
    return np.where(couple & (rng.random(len(sex)) < 0.96), other_sex, sex)


def _draw_ages(rng: np.random.Generator, role: np.ndarray, homes: _Households) -> np.ndarray:
    n = len(role)
    own = 18 + 77 * rng.beta(2.0, 2.6, n)
    ref_age = own[homes.head]
    u, v = rng.random(n), rng.random(n)
    child = u * np.clip(ref_age - 17, 1, 30)
    near_ref = ref_age + rng.normal(-1, 6, n)
    by_role = {
        REF: own,
        SPOUSE: near_ref,
        PARTNER: near_ref,
        BIO_CHILD: child,
        ADOPTED: child,
        STEPCHILD: child,
        SIBLING: near_ref,
        PARENT: ref_age + 20 + 15 * u,
        GRANDCHILD: u * np.clip(ref_age - 36, 1, 20),
        PARENT_IN_LAW: ref_age + 20 + 15 * u,
        CHILD_IN_LAW: ref_age - 20 - 10 * u,
        OTHER_RELATIVE: 80 * u,
        ROOMMATE: near_ref,
        FOSTER_CHILD: 18 * u,
        OTHER_NONRELATIVE: near_ref,
        GQ_INSTITUTIONAL: np.where(u < 0.5, 20 + 40 * v, 70 + 25 * v),
        GQ_NONINSTITUTIONAL: np.where(u < 0.7, 18 + 6 * v, 18 + 50 * v),
    }
    age = np.select([role == r for r in by_role], list(by_role.values()))
    lowest = np.where(np.isin(role, _ADULT_ROLES), 18, 0)
    return np.floor(np.clip(age, lowest, 95))


def _relationship(
    role: np.ndarray, sex: np.ndarray, homes: _Households, year: int
) -> dict[str, np.ndarray]:
    if year < 2019:
        return {"RELP": _RELP[role].astype(float)}
    codes = _RELSHIPP[role]
    same_sex = sex == sex[homes.head]
    for couple_role, code in _RELSHIPP_SAME_SEX.items():
        codes = np.where((role == couple_role) & same_sex, code, codes)
    return {"RELSHIPP": codes.astype(float)}


def _race(rng: np.random.Generator, homes: _Households) -> dict[str, np.ndarray]:
    """RAC1P, mostly shared within a household, and the race flags that follow from it."""
    n = len(homes.unit)
    drawn = _choose(rng, tuple(range(1, 10)), _RACE_SHARES, n)
    race = np.where(rng.random(n) < 0.9, drawn[homes.head], drawn)
    flag_names = ("RACWHT", "RACBLK", "RACAIAN", "RACASN", "RACNH", "RACPI", "RACSOR")
    single_flag = np.select(
        [race == 1, race == 2, np.isin(race, (3, 4, 5)), race == 6, race == 7, race == 8],
        [0, 1, 2, 3, np.where(rng.random(n) < 0.5, 4, 5), 6],
        -1,
    )
    first = np.where(rng.random(n) < 0.7, 0, rng.integers(1, 7, n))
    second = (first + rng.integers(1, 7, n)) % 7
    multiracial = race == 9
    flags = {}
    for index, name in enumerate(flag_names):
        marked = (single_flag == index) | (multiracial & ((first == index) | (second == index)))
        flags[name] = marked.astype(float)
    return {"RAC1P": race, **flags}


def _birth(
    rng: np.random.Generator, age: np.ndarray, race: np.ndarray, fips: int
) -> dict[str, np.ndarray]:
    """NATIVITY, POBP and CIT: natives mostly born in the state, the foreign-born by race."""
    n = len(age)
    p_foreign = _RACE_FOREIGN_BORN[race.astype(int)] * np.where(age < 18, 0.25, 1.0)
    foreign = _chance(rng, p_foreign)
    born_abroad_to_citizens = ~foreign & (rng.random(n) < 0.02)
    in_state = rng.random(n) < 0.65
    us_birthplace = np.where(in_state, fips, _FIPS_CODES[rng.integers(0, len(_FIPS_CODES), n)])
    from_europe = (race == 1) & (rng.random(n) < 0.4)
    asia = _choose(rng, _BORN_IN_ASIA, (1,) * len(_BORN_IN_ASIA), n)
    americas = _choose(rng, _BORN_IN_THE_AMERICAS, (1,) * len(_BORN_IN_THE_AMERICAS), n)
    europe = _choose(rng, _BORN_IN_EUROPE, (1,) * len(_BORN_IN_EUROPE), n)
    abroad = np.select([race == 6, from_europe], [asia, europe], americas)
    pobp = np.where(foreign | born_abroad_to_citizens, abroad, us_birthplace)
    naturalized = rng.random(n) < 0.8 * _sigmoid((age - 35) / 10)
    cit = np.select(
        [foreign & naturalized, foreign, born_abroad_to_citizens, pobp == 72],
        [4, 5, 3, 2],
        1,
    )
    return {
        "NATIVITY": np.where(foreign, 2.0, 1.0),
        "POBP": pobp.astype(float),
        "CIT": cit.astype(float),
    }


def _schooling(rng: np.random.Generator, age: np.ndarray, race: np.ndarray) -> np.ndarray:
    """SCHL: grade by age for pupils, attainment for adults; blank under 3."""
    n = len(age)
    grade = np.minimum(age - 2, 15) - (rng.random(n) < 0.1)
    pupil = np.select(
        [age < 5, age == 5, age < 18, age == 18],
        [np.where(rng.random(n) < 0.5, 1, 2), 3, grade, np.where(rng.random(n) < 0.7, 16, 15)],
        0,
    )
    latent = rng.normal(size=n) + _RACE_EDUCATION_SHIFT[race.astype(int)]
    shares = np.asarray(_ADULT_SCHL_SHARES) / np.sum(_ADULT_SCHL_SHARES)
    level = np.searchsorted(np.cumsum(shares)[:-1], _sigmoid(1.7 * latent))
    cap_by_age = np.array([19, 19, 20, 21, 21, 22, 24])
    cap = cap_by_age[np.clip(age - 19, 0, 6).astype(int)]
    adult = np.minimum(np.asarray(_ADULT_SCHL)[level], cap)
    schl = np.where(age < 19, pupil, adult)
    return _blank_unless(age >= 3, schl.astype(float))


def _marital_status(
    rng: np.random.Generator, age: np.ndarray, role: np.ndarray, homes: _Households
) -> np.ndarray:
    """MAR 1-5: couples in a household are married; others by age; under 15 never married."""
    married_couple = (role == SPOUSE) | ((role == REF) & homes.any(role == SPOUSE))
    weights = np.column_stack(
        [
            np.full(len(age), 0.04),
            0.6 * np.clip((age - 55) / 40, 0, 1),
            0.22 * _sigmoid((age - 32) / 6),
            np.full(len(age), 0.03),
            np.clip(np.exp(-(age - 20) / 14), 0.05, 1),
        ]
    )
    status = _choose_rows(rng, weights) + 1
    return np.select([age < 15, married_couple], [5, 1], status).astype(float)


def _disabilities(rng: np.random.Generator, age: np.ndarray) -> dict[str, np.ndarray]:
    """DEAR, DEYE, DREM and DIS (1 yes, 2 no), sharing a frailty so they go together."""
    n = len(age)
    frailty = rng.normal(size=n)
    decades = (age - 70) / 10

    def difficulty(base: float, slope: float) -> np.ndarray:
        return _chance(rng, _sigmoid(base + slope * decades + frailty))

    hearing, seeing = difficulty(-3.6, 0.9), difficulty(-4.2, 0.6)
    remembering = difficulty(-3.6, 0.5) & (age >= 5)
    other = difficulty(-1.9, 0.8)
    disabled = hearing | seeing | remembering | other
    return {
        "DEAR": np.where(hearing, 1.0, 2.0),
        "DEYE": np.where(seeing, 1.0, 2.0),
        "DREM": _blank_unless(age >= 5, np.where(remembering, 1.0, 2.0)),
        "DIS": np.where(disabled, 1.0, 2.0),
    }


def _military(rng: np.random.Generator, age: np.ndarray, sex: np.ndarray) -> np.ndarray:
    """MIL: 1 active duty, 2 veteran, 3 reserves training only, 4 never served; blank under 17."""
    male = sex == 1
    active = np.where(age <= 45, np.where(male, 0.012, 0.003), 0)
    veteran = np.where(male, 0.03 + 0.3 * _sigmoid((age - 60) / 8), 0.015)
    weights = np.column_stack([active, veteran, np.full(len(age), 0.007), 1 - active - veteran])
    return _blank_unless(age >= 17, (_choose_rows(rng, weights) + 1).astype(float))


def _employment(rng: np.random.Generator, cols: dict[str, np.ndarray]) -> np.ndarray:
    """ESR: 1/2 employed, 3 unemployed, 4/5 armed forces, 6 not in labor force; blank under 16."""
    age, schl, race = cols["AGEP"], np.nan_to_num(cols["SCHL"]), cols["RAC1P"]
    n = len(age)
    disabled, female, black = cols["DIS"] == 1, cols["SEX"] == 2, race == 2
    schooling = np.clip(schl - 16, -6, 6)
    participation = (
        2.0
        - 0.0045 * (age - 40) ** 2
        + 0.12 * schooling
        - 1.3 * disabled
        - 0.35 * female
        - 0.15 * black
        + 0.4 * ((cols["MAR"] == 1) & ~female)
    )
    in_force = _chance(rng, _sigmoid(participation))
    jobless = _chance(
        rng, _sigmoid(-2.9 - 0.12 * schooling + 0.45 * black + 0.3 * (age < 25) + 0.5 * disabled)
    )
    at_work = rng.random(n) < 0.96
    civilian = np.select([~in_force, jobless, at_work], [6, 3, 1], 2)
    armed = np.where(at_work, 4, 5)
    return _blank_unless(age >= 16, np.where(cols["MIL"] == 1, armed, civilian).astype(float))


def _work(
    rng: np.random.Generator, cols: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """COW, OCCP and WKHP, and the pay level (log scale) of each person's civilian occupation."""
    age, esr, schl = cols["AGEP"], cols["ESR"], np.nan_to_num(cols["SCHL"])
    n = len(age)
    employed, armed = np.isin(esr, (1, 2)), np.isin(esr, (4, 5))
    recent = np.select(
        [employed | armed, esr == 3, esr == 6],
        [True, rng.random(n) < 0.75, rng.random(n) < np.where(age < 65, 0.35, 0.12)],
        False,
    )
    graduate = schl >= 21
    class_weights = np.column_stack(
        [
            np.full(n, 0.66),
            0.08 * (1 + graduate),
            0.06 * (1 + graduate),
            0.04 * (1 + graduate),
            np.full(n, 0.025),
            0.03 + 0.0015 * age,
            np.full(n, 0.035),
            np.full(n, 0.005),
        ]
    )
    civilian_class = _choose_rows(rng, class_weights) + 1
    cow = np.select([armed, recent, esr == 3], [5, civilian_class, 9], np.nan)
    occp, pay = _occupations(rng, schl)
    occp = np.select(
        [armed, cow == 9, recent], [_MILITARY_OCCP, _LONG_UNEMPLOYED_OCCP, occp], np.nan
    )
    worked_this_year = (employed | armed) | (recent & (rng.random(n) < 0.5))
    full_time = _chance(
        rng, _sigmoid(1.6 - 0.6 * (cols["SEX"] == 2) - 0.9 * (age < 22) - 0.8 * (age >= 65))
    )
    full, part = np.clip(rng.normal(42, 6, n), 35, 99), np.clip(rng.normal(20, 7, n), 1, 34)
    hours = np.where(full_time, full, part)
    hours = np.where(armed, np.clip(rng.normal(45, 5, n), 35, 99), hours)
    columns = {
        "COW": cow.astype(float),
        "OCCP": occp.astype(float),
        "WKHP": _blank_unless(worked_this_year, np.round(hours)),
    }
    return columns, np.where(recent & ~armed, pay, 0.0)


def _occupations(rng: np.random.Generator, schl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An occupation per person, mostly of the tier their schooling fits, and its pay level."""
    n = len(schl)
    fitting = np.select([schl >= 21, schl >= 18], [2, 1], 0)
    tier = np.where(rng.random(n) < 0.75, fitting, rng.integers(0, 3, n))
    counts = np.array([len(t) for t in _OCCUPATIONS_BY_TIER])
    offsets = np.cumsum(counts) - counts
    table = np.array([job for t in _OCCUPATIONS_BY_TIER for job in t])
    index = offsets[tier] + (rng.random(n) * counts[tier]).astype(int)
    return table[index, 0], table[index, 1]


def _income(rng: np.random.Generator, cols: dict[str, np.ndarray], pay: np.ndarray) -> np.ndarray:
    """PINCP: earnings from schooling, hours, age, occupation, with gaps by sex and race.

    Blank under 15. Retirement income from 62, small other income for some, losses for some
    self-employed.
    """
    age, schl, hours = cols["AGEP"], np.nan_to_num(cols["SCHL"]), cols["WKHP"]
    n = len(age)
    years = age - 18
    log_earnings = (
        10.1
        + pay
        + 0.075 * np.clip(schl - 16, -6, 8)
        + 0.045 * years
        - 0.0007 * years**2
        + np.log(np.nan_to_num(hours, nan=40) / 40)
        - 0.8 * ~np.isin(cols["ESR"], (1, 2, 4, 5))
        - 0.22 * (cols["SEX"] == 2)
        + _RACE_PAY_SHIFT[cols["RAC1P"].astype(int)]
        + rng.normal(0, 0.5, n)
    )
    earnings = np.where(np.isnan(hours), 0.0, np.exp(log_earnings))
    self_employed = np.isin(cols["COW"], (6, 7))
    earnings = np.where(self_employed & (rng.random(n) < 0.05), -rng.lognormal(8, 1, n), earnings)
    retirement = _chance(rng, np.select([age >= 65, age >= 62], [0.85, 0.4], 0.0))
    other = np.where(rng.random(n) < 0.3, rng.lognormal(7.5, 1.2, n), 0.0)
    total = earnings + other + np.where(retirement, rng.lognormal(9.7, 0.5, n), 0.0)
    total = np.where(age < 16, np.where(rng.random(n) < 0.1, rng.lognormal(6.5, 1, n), 0.0), total)
    return _blank_unless(age >= 15, np.clip(np.round(total), -19_998, 4_000_000))


def _poverty_ratio(
    income: np.ndarray, age: np.ndarray, role: np.ndarray, homes: _Households
) -> np.ndarray:
    """POVPIP 0-501: family income over a poverty line growing with family size.

    People not related to the reference person count alone; blank in group quarters and for
    unrelated children under 15.
    """
    unrelated = np.isin(role, _UNRELATED)
    own_income = np.nan_to_num(income)
    family = ~unrelated & ~homes.in_gq
    family_income = np.where(unrelated, own_income, homes.total(np.where(family, own_income, 0)))
    family_size = np.where(unrelated, 1, homes.total(family.astype(float)))
    line = 12_500 + 4_400 * (family_size - 1)
    ratio = np.clip(np.round(100 * family_income / line), 0, 501)
    return _blank_unless(~homes.in_gq & ~(unrelated & (age < 15)), ratio)


def _insurance(
    rng: np.random.Generator, cols: dict[str, np.ndarray], role: np.ndarray
) -> dict[str, np.ndarray]:
    """PUBCOV (public coverage) and HINS2 (insurance bought directly), 1 yes 2 no.

    Public coverage follows age, low family income, disability, pregnancy and citizenship; direct
    purchase is for the self-employed, early retirees and older people topping up Medicare.
    """
    age, povpip, cow, esr = cols["AGEP"], cols["POVPIP"], cols["COW"], cols["ESR"]
    poor, near_poor = povpip < 138, (povpip >= 138) & (povpip < 200)
    low_income, not_working = cols["PINCP"] < 12_000, np.isin(esr, (3, 6))
    public = (
        -2.6
        + 4.0 * (age >= 65)
        + 1.6 * poor
        + 0.8 * near_poor
        + 2.0 * (cols["DIS"] == 1)
        + 1.0 * (age < 19)
        + 0.8 * low_income
        + 0.8 * not_working
        + 1.5 * (cols["FER"] == 1)
        - 0.8 * (cols["CIT"] == 5)
        + 1.5 * (role == GQ_INSTITUTIONAL)
    )
    employer_covered = np.isin(cow, (1, 2, 3, 4, 5)) & np.isin(esr, (1, 2, 4, 5))
    direct = (
        -1.9
        + 1.6 * np.isin(cow, (6, 7))
        + 1.3 * (age >= 65)
        - 1.4 * employer_covered
        + 1.0 * ((esr == 6) & (age >= 50) & (age < 65))
        - 1.2 * poor
        + 0.5 * (cols["SCHL"] >= 21)
        + 0.5 * (cols["PINCP"] >= 60_000)
        - 0.6 * (cols["CIT"] == 5)
    )
    return {
        "PUBCOV": np.where(_chance(rng, _sigmoid(public)), 1.0, 2.0),
        "HINS2": np.where(_chance(rng, _sigmoid(direct)), 1.0, 2.0),
    }


def _commute(
    rng: np.random.Generator, cols: dict[str, np.ndarray], homes: _Households, year: int
) -> dict[str, np.ndarray]:
    """PUMA per unit; for workers at work JWTR/JWTRNS, POWPUMA and JWMNP (blank working at home)."""
    n = len(homes.unit)
    puma_index = rng.integers(0, _PUMAS_PER_STATE, n)[homes.head]
    urban = puma_index < _URBAN_PUMAS
    at_work = np.isin(cols["ESR"], (1, 4))
    mode = _choose_rows(
        rng,
        np.column_stack(
            [
                np.where(urban, 0.66, 0.86),
                np.where(urban, 0.08, 0.02),
                np.where(urban, 0.07, 0.0),
                np.where(urban, 0.03, 0.01),
                np.full(n, 0.01),
                np.full(n, 0.03),
                np.full(n, 0.06),
                np.full(n, 0.02),
            ]
        ),
    )
    work_index = np.where(rng.random(n) < 0.45, puma_index, rng.integers(0, _PUMAS_PER_STATE, n))
    work_index = np.where(mode == _AT_HOME, puma_index, work_index)
    log_minutes = (
        np.log(15)
        + 0.6 * (work_index != puma_index)
        + _MODE_MINUTES_SHIFT[mode]
        + 0.15 * urban
        + rng.normal(0, 0.5, n)
    )
    minutes = np.clip(np.round(np.exp(log_minutes)), 1, 200)
    transport = "JWTRNS" if year >= 2019 else "JWTR"
    codes = _JWTRNS if year >= 2019 else _JWTR
    return {
        "PUMA": _puma_code(puma_index),
        "POWPUMA": _blank_unless(at_work, _puma_code(work_index)),
        transport: _blank_unless(at_work, codes[mode].astype(float)),
        "JWMNP": _blank_unless(at_work & (mode != _AT_HOME), minutes),
    }


def _puma_code(index: np.ndarray) -> np.ndarray:
    """PUMA codes like 00101, 00102, ... and 00201, ... for the state's areas."""
    return (100 * (index // 4 + 1) + index % 4 + 1).astype(float)


def _migration(
    rng: np.random.Generator, cols: dict[str, np.ndarray], role: np.ndarray, homes: _Households
) -> np.ndarray:
    """MIG: 1 same house a year ago, 2 moved from abroad, 3 moved within the US; blank under 1.

    Households mostly move together, as their reference person does.
    """
    age, n = cols["AGEP"], len(role)
    moving = (
        -1.5
        - 0.08 * np.clip(age - 24, 0, 40)
        + 1.0 * ((age >= 18) & (age < 30))
        + 0.8 * (cols["MAR"] == 5)
        + 0.8 * (cols["ESR"] == 3)
        - 0.6 * (cols["PINCP"] >= 60_000)
        + 0.6 * (cols["NATIVITY"] == 2)
        + 1.2 * np.isin(role, _UNRELATED)
        + 2.0 * (role == GQ_NONINSTITUTIONAL)
        - 0.8 * homes.any(np.isin(role, _OWN_CHILD))
    )
    moved = _chance(rng, _sigmoid(moving))
    moved = np.where(rng.random(n) < 0.7, moved[homes.head], moved)
    from_abroad = rng.random(n) < np.where(cols["NATIVITY"] == 2, 0.12, 0.01)
    mig = np.select([~moved, from_abroad], [1, 2], 3)
    return _blank_unless(age >= 1, mig.astype(float))


def _parents_employment(
    cols: dict[str, np.ndarray], role: np.ndarray, homes: _Households
) -> np.ndarray:
    """ESP 1-8 for own children under 18: which parents in the home are in the labor force."""
    in_force = np.isin(cols["ESR"], (1, 2, 3, 4, 5))
    head_in_force, head_male = in_force[homes.head], cols["SEX"][homes.head] == 1
    two_parents = homes.any(role == SPOUSE)
    spouse_in_force = homes.any((role == SPOUSE) & in_force)
    father = np.where(head_male, head_in_force, spouse_in_force)
    mother = np.where(head_male, spouse_in_force, head_in_force)
    with_both = np.select([father & mother, father, mother], [1, 2, 3], 4)
    alone = np.where(head_male, np.where(head_in_force, 5, 6), np.where(head_in_force, 7, 8))
    esp = np.where(two_parents, with_both, alone)
    return _blank_unless(np.isin(role, _OWN_CHILD) & (cols["AGEP"] < 18), esp.astype(float))


def _grandparent_status(age: np.ndarray, role: np.ndarray, homes: _Households) -> np.ndarray:
    """GCL: 1 if living with own grandchildren, else 2; blank under 30 and in group quarters."""
    grandparent = (np.isin(role, (REF, SPOUSE)) & homes.any(role == GRANDCHILD)) | (
        np.isin(role, (PARENT, PARENT_IN_LAW)) & homes.any(np.isin(role, _OWN_CHILD))
    )
    return _blank_unless((age >= 30) & ~homes.in_gq, np.where(grandparent, 1.0, 2.0))


def _fertility(
    rng: np.random.Generator, cols: dict[str, np.ndarray], role: np.ndarray, homes: _Households
) -> np.ndarray:
    """FER: gave birth in the past 12 months (1 yes, 2 no), for women 15-50.

    Mothers of an infant in the home have; others rarely, more often around 30.
    """
    age, female = cols["AGEP"], cols["SEX"] == 2
    infant_at_home = homes.any(np.isin(role, _OWN_CHILD) & (age == 0))
    mother = female & np.isin(role, (REF, SPOUSE)) & infant_at_home
    births = mother | _chance(rng, 0.03 * np.exp(-(((age - 30) / 7) ** 2)))
    return _blank_unless(female & (age >= 15) & (age <= 50), np.where(births, 1.0, 2.0))


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
