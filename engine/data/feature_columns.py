"""Which columns of a user's table can be features, and as what (numbers or categories).

Identifier columns (a different value in every row) and free-text columns (many distinct text
values) would become one-hot blocks with a column per row that teach a model nothing, so they are
left out of the default features; a user who names them as features gets them, within the limit
of `MAX_CATEGORIES` one-hot columns for text.
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
ID_NAME = re.compile(r"^(id|index|key|uuid|guid)$|[_\s.-]id$|^id[_\s.-]", re.IGNORECASE)


def unusable_reason(column: pd.Series, name: str) -> str | None:
    """Why `column` should not be a default feature ("an identifier", "free text"), or None."""
    present = column.dropna()
    if present.empty:
        return None
    numbers = _as_numbers(present)
    distinct = present.nunique()
    unique_per_row = distinct == len(column) > 1
    if numbers is not None:
        whole = bool((numbers % 1 == 0).all())
        consecutive = numbers.max() - (len(numbers) - 1) == numbers.min()  # no overflow
        if unique_per_row and whole and (consecutive or ID_NAME.search(name)):
            return "a different number in every row, like an identifier"
        return None
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


def _as_numbers(present: pd.Series) -> pd.Series | None:
    """The non-missing values as numbers when every one of them is a number, else None."""
    if pd.api.types.is_bool_dtype(present):
        return None
    if pd.api.types.is_numeric_dtype(present):
        return present.astype(float)
    numbers = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    return None if numbers.isna().any() else numbers
