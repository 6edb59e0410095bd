"""Which columns of a user's table can be features, and as what (numbers or categories).

Identifier columns (a different value in every row) and free-text columns (many distinct text
values) would become one-hot blocks with a column per row that teach a model nothing, so they are
left out of the default features; a user who names them as features gets them, within the limit
of `MAX_CATEGORIES` one-hot columns for text.

A whole-number identifier would be a numeric feature whose order means nothing (or, worse, the
order in which people joined, which may track the outcome). Members of a file may each have
several rows, so an identifier need not be different in every row: whole numbers with at least
one distinct value every `ID_SHARE` rows are an identifier when the name says so ("member_id",
"MemberID", "account no"), when every value has the same `ID_DIGITS` or more digits (account and
member numbers), or when they fill most of their range (`DENSE_SHARE`: numbered one by one) and
there are at least `DENSE_MIN` of them. Amounts and counts have many values too, but spread
over a wide range with gaps and differing widths, so they stay features.
"""

from __future__ import annotations

import re

import pandas as pd

from engine.errors import UserError

MAX_CATEGORIES = 100
MAX_MAGNITUDE = 1e100  # squares and sums of n such numbers stay finite when standardising
NUMERIC_SHARE = 0.9  # a text column this numeric is taken for a numeric one with junk in it
FREE_TEXT_LENGTH = 30  # median characters of a value that make a mostly distinct column free text
FREE_TEXT_SHARE = 0.5  # distinct values per row at which long text counts as free text
ID_NAME = re.compile(
    r"^(id|index|key|uuid|guid|identifier)$|[_\s.-](id|key|no|nr|number|identifier)$|^id[_\s.-]",
    re.IGNORECASE,
)
CAMEL_ID = re.compile(r"[a-z0-9](ID|Id|No|Nr|Number|Key)$")  # "MemberID", "customerNo"
ID_SHARE = 0.5  # distinct whole numbers per row from which a column named so is an identifier
ID_DIGITS = 7  # every value this wide: an account or member number, not an amount
DENSE_SHARE = 0.9  # distinct values per whole number of their range: numbered one by one
DENSE_MIN = 1000  # numbered one by one, with repeats: only this many (a count has fewer)


def unusable_reason(column: pd.Series, name: str) -> str | None:
    """Why `column` should not be a default feature ("an identifier", "free text"), or None."""
    present = column.dropna()
    if present.empty:
        return None
    numbers = _as_numbers(present)
    distinct = present.nunique()
    unique_per_row = distinct == len(column) > 1
    if numbers is not None:
        return _number_identifier(numbers, name, unique_per_row)
    long = present.astype(str).str.len().median() >= FREE_TEXT_LENGTH
    if long and distinct >= FREE_TEXT_SHARE * len(present):
        return f"{distinct:,} distinct long text values, like free text"
    if unique_per_row:
        return "a different text value in every row, like an identifier"
    if distinct > MAX_CATEGORIES:
        return f"{distinct:,} distinct text values, too many to encode as categories"
    return None


def feature_kind(
    column: pd.Series, name: str, is_protected: bool, max_categories: int = MAX_CATEGORIES
) -> tuple[str, pd.Series]:
    """("numeric", numbers) or ("categorical", stripped text); a mostly numeric column with some
    junk, numbers too large to standardise, or text with too many distinct values is refused."""
    if pd.api.types.is_bool_dtype(column):
        return "numeric", column.astype(float)
    present = column.dropna()
    if not pd.api.types.is_numeric_dtype(column):
        present = present.astype(str).str.strip()
        as_numbers = pd.to_numeric(present, errors="coerce")
        junk = present[as_numbers.isna()]
        if len(junk) > 0 and as_numbers.notna().mean() >= NUMERIC_SHARE:
            examples = ", ".join(repr(v) for v in junk.unique()[:3])
            raise UserError(
                f"column '{name}' is numeric but has {len(junk)} non-numeric values such as "
                f"{examples}"
            )
        if not (len(present) and junk.empty):
            distinct = present.nunique()
            if distinct > max_categories and not is_protected:
                raise UserError(
                    f"column '{name}' has {distinct} distinct text values, more than the "
                    f"{max_categories} that can be one-hot encoded; leave it out of the features "
                    "or group its values"
                )
            return "categorical", column.astype("string").str.strip()
    numbers = pd.to_numeric(column, errors="coerce").astype(float)
    huge = numbers[numbers.abs() > MAX_MAGNITUDE]
    if len(huge):
        raise UserError(
            f"column '{name}' holds numbers beyond ±{MAX_MAGNITUDE:g}, such as {huge.iloc[0]:g}; "
            "replace them or leave the column out"
        )
    return "numeric", numbers


def looks_like_identifier_name(name: str) -> bool:
    """Whether a column's name says it identifies someone ("id", "member_id", "MemberID")."""
    return bool(ID_NAME.search(name) or CAMEL_ID.search(name.strip()))


def _number_identifier(numbers: pd.Series, name: str, unique_per_row: bool) -> str | None:
    """Why whole numbers look like an identifier (see the module's text), or None."""
    if not bool((numbers % 1 == 0).all()):
        return None
    distinct = numbers.nunique()
    low, high = float(numbers.min()), float(numbers.max())
    dense = distinct >= DENSE_SHARE * (high - low + 1)
    named = looks_like_identifier_name(name)
    if unique_per_row and (dense or named or _same_width(numbers)):
        return "a different number in every row, like an identifier"
    if distinct < ID_SHARE * len(numbers) or distinct < 2:
        return None
    if named or _same_width(numbers) or (dense and distinct >= DENSE_MIN):
        return f"{distinct:,} different whole numbers in {len(numbers):,} rows, like an identifier"
    return None


def _same_width(numbers: pd.Series) -> bool:
    """Whether every number is positive and has the same ID_DIGITS or more digits."""
    low, high = float(numbers.min()), float(numbers.max())
    return low >= 10 ** (ID_DIGITS - 1) and len(f"{low:.0f}") == len(f"{high:.0f}")


def _as_numbers(present: pd.Series) -> pd.Series | None:
    """The non-missing values as numbers when every one of them is a number, else None."""
    if pd.api.types.is_bool_dtype(present):
        return None
    if pd.api.types.is_numeric_dtype(present):
        return present.astype(float)
    numbers = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    return None if numbers.isna().any() else numbers
