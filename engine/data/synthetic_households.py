"""The households of a synthetic ACS PUMS file: units of census sizes (and group quarters),
their serial numbers, each person's role in the unit (the reference person, a spouse, a child...),
their ages given the roles, and the census codes of the roles. `engine.data.synthetic_persons`
draws the persons' other variables given these."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_GQ_SHARE = 0.03
_HOUSEHOLD_SIZES = (1, 2, 3, 4, 5, 6, 7)
_HOUSEHOLD_SIZE_SHARES = (0.28, 0.34, 0.15, 0.13, 0.06, 0.025, 0.015)

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
OWN_CHILD = (BIO_CHILD, ADOPTED, STEPCHILD)
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
UNRELATED = (PARTNER, ROOMMATE, FOSTER_CHILD, OTHER_NONRELATIVE)


@dataclass(frozen=True)
class Households:
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


def choose(rng: np.random.Generator, codes: tuple, shares: tuple, n: int) -> np.ndarray:
    p = np.asarray(shares, dtype=float)
    return np.asarray(codes, dtype=float)[rng.choice(len(codes), size=n, p=p / p.sum())]


def draw_households(rng: np.random.Generator, n: int, year: int, horizon: str) -> Households:
    n_gq = int(rng.binomial(n, _GQ_SHARE))
    sizes = np.concatenate([np.ones(n_gq, dtype=np.int64), _household_sizes(rng, n - n_gq)])
    gq_unit = np.arange(len(sizes)) < n_gq
    serials = _serial_numbers(rng, gq_unit, year, horizon)
    order = np.argsort(serials, kind="stable")
    sizes, gq_unit, serials = sizes[order], gq_unit[order], serials[order]
    unit = np.repeat(np.arange(len(sizes)), sizes)
    head = (np.cumsum(sizes) - sizes)[unit]
    return Households(
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


def draw_roles(rng: np.random.Generator, homes: Households) -> np.ndarray:
    n = len(homes.unit)
    second = choose(
        rng,
        (SPOUSE, PARTNER, BIO_CHILD, OTHER_RELATIVE, ROOMMATE),
        (0.56, 0.1, 0.24, 0.05, 0.05),
        n,
    )
    later = choose(
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


def partner_sexes(
    rng: np.random.Generator, sex: np.ndarray, role: np.ndarray, homes: Households
) -> np.ndarray:
    """Spouses and partners are mostly of the other sex than the reference person."""
    couple = np.isin(role, (SPOUSE, PARTNER))
    other_sex = 3 - sex[homes.head]
    return np.where(couple & (rng.random(len(sex)) < 0.96), other_sex, sex)


def draw_ages(rng: np.random.Generator, role: np.ndarray, homes: Households) -> np.ndarray:
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


def relationship(
    role: np.ndarray, sex: np.ndarray, homes: Households, year: int
) -> dict[str, np.ndarray]:
    if year < 2019:
        return {"RELP": _RELP[role].astype(float)}
    codes = _RELSHIPP[role]
    same_sex = sex == sex[homes.head]
    for couple_role, code in _RELSHIPP_SAME_SEX.items():
        codes = np.where((role == couple_role) & same_sex, code, codes)
    return {"RELSHIPP": codes.astype(float)}
