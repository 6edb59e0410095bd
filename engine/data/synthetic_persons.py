"""The persons of a synthetic ACS PUMS file: households, then each census variable drawn given
the ones it depends on (age given the role in the household, schooling given age and race,
employment given both, income given the work, ...), so that the folktables tasks are learnable
and show gaps between groups. `engine.data.synthetic_pums` writes them in the census layout."""

from __future__ import annotations

import numpy as np

from engine.data.synthetic_households import (
    GQ_INSTITUTIONAL,
    GQ_NONINSTITUTIONAL,
    GRANDCHILD,
    OWN_CHILD,
    PARENT,
    PARENT_IN_LAW,
    REF,
    SPOUSE,
    UNRELATED,
    Households,
    choose,
    draw_ages,
    draw_households,
    draw_roles,
    partner_sexes,
    relationship,
)

# State or Puerto Rico: (FIPS code, census division). Folktables has no file for DC.
STATES: dict[str, tuple[int, int]] = {
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
_REGION_OF_DIVISION = np.array([9, 1, 1, 2, 2, 3, 3, 3, 4, 4])
_FIPS_CODES = np.array(sorted(fips for fips, _ in STATES.values()))

# Incomes are written in survey-year dollars, so the adjustment factor (six implied decimals) is 1.
_ADJINC = 1_000_000
_PUMAS_PER_STATE = 12
_URBAN_PUMAS = 4

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


def draw_persons(
    rng: np.random.Generator, n: int, fips: int, division: int, year: int, horizon: str
) -> dict[str, np.ndarray]:
    """All columns of the file, numeric with NaN for blanks except RT and SERIALNO."""
    homes = draw_households(rng, n, year, horizon)
    role = draw_roles(rng, homes)
    cols = {"SEX": partner_sexes(rng, rng.integers(1, 3, n).astype(float), role, homes)}
    cols["AGEP"] = draw_ages(rng, role, homes)
    cols.update(relationship(role, cols["SEX"], homes, year))
    cols.update(_race(rng, homes))
    cols.update(_birth(rng, cols["AGEP"], cols["RAC1P"], fips))
    cols["ANC"] = choose(rng, (1, 2, 3, 4), (0.52, 0.17, 0.04, 0.27), n)
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


def _choose_rows(rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """One column index per row of `weights`, drawn in proportion to the row's weights."""
    cumulative = np.cumsum(weights, axis=1)
    u = rng.random(len(weights)) * cumulative[:, -1]
    return (u[:, None] >= cumulative).sum(axis=1)


def _blank_unless(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.where(mask, values, np.nan)


def _race(rng: np.random.Generator, homes: Households) -> dict[str, np.ndarray]:
    """RAC1P, mostly shared within a household, and the race flags that follow from it."""
    n = len(homes.unit)
    drawn = choose(rng, tuple(range(1, 10)), _RACE_SHARES, n)
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
    asia = choose(rng, _BORN_IN_ASIA, (1,) * len(_BORN_IN_ASIA), n)
    americas = choose(rng, _BORN_IN_THE_AMERICAS, (1,) * len(_BORN_IN_THE_AMERICAS), n)
    europe = choose(rng, _BORN_IN_EUROPE, (1,) * len(_BORN_IN_EUROPE), n)
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
    rng: np.random.Generator, age: np.ndarray, role: np.ndarray, homes: Households
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
    income: np.ndarray, age: np.ndarray, role: np.ndarray, homes: Households
) -> np.ndarray:
    """POVPIP 0-501: family income over a poverty line growing with family size.

    People not related to the reference person count alone; blank in group quarters and for
    unrelated children under 15.
    """
    unrelated = np.isin(role, UNRELATED)
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
    rng: np.random.Generator, cols: dict[str, np.ndarray], homes: Households, year: int
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
    rng: np.random.Generator, cols: dict[str, np.ndarray], role: np.ndarray, homes: Households
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
        + 1.2 * np.isin(role, UNRELATED)
        + 2.0 * (role == GQ_NONINSTITUTIONAL)
        - 0.8 * homes.any(np.isin(role, OWN_CHILD))
    )
    moved = _chance(rng, _sigmoid(moving))
    moved = np.where(rng.random(n) < 0.7, moved[homes.head], moved)
    from_abroad = rng.random(n) < np.where(cols["NATIVITY"] == 2, 0.12, 0.01)
    mig = np.select([~moved, from_abroad], [1, 2], 3)
    return _blank_unless(age >= 1, mig.astype(float))


def _parents_employment(
    cols: dict[str, np.ndarray], role: np.ndarray, homes: Households
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
    return _blank_unless(np.isin(role, OWN_CHILD) & (cols["AGEP"] < 18), esp.astype(float))


def _grandparent_status(age: np.ndarray, role: np.ndarray, homes: Households) -> np.ndarray:
    """GCL: 1 if living with own grandchildren, else 2; blank under 30 and in group quarters."""
    grandparent = (np.isin(role, (REF, SPOUSE)) & homes.any(role == GRANDCHILD)) | (
        np.isin(role, (PARENT, PARENT_IN_LAW)) & homes.any(np.isin(role, OWN_CHILD))
    )
    return _blank_unless((age >= 30) & ~homes.in_gq, np.where(grandparent, 1.0, 2.0))


def _fertility(
    rng: np.random.Generator, cols: dict[str, np.ndarray], role: np.ndarray, homes: Households
) -> np.ndarray:
    """FER: gave birth in the past 12 months (1 yes, 2 no), for women 15-50.

    Mothers of an infant in the home have; others rarely, more often around 30.
    """
    age, female = cols["AGEP"], cols["SEX"] == 2
    infant_at_home = homes.any(np.isin(role, OWN_CHILD) & (age == 0))
    mother = female & np.isin(role, (REF, SPOUSE)) & infant_at_home
    births = mother | _chance(rng, 0.03 * np.exp(-(((age - 30) / 7) ** 2)))
    return _blank_unless(female & (age >= 15) & (age <= 50), np.where(births, 1.0, 2.0))
