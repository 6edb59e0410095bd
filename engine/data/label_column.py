"""Which column of a user's table is the label, guessed by its name (never by its position).

A table's last column is often not its label, and a label taken silently from the wrong column
trains a model of the wrong thing, so a column is offered as the label only when its name says
so, in this order:

1. its whole name is one of `LABEL_NAMES` (any case, spaces and separators aside: "Target",
   "Class", "y") and it holds two values;
2. one word of its name is one of `LABEL_WORDS` ("default payment next month", "is_fraud",
   "IncomeLevel") and it holds two values (a word alone is weaker evidence: "household_income"
   with thousands of values is a feature, not the label);
3. its whole name is one of `LABEL_NAMES` and it holds a few values (`FEW_LABEL_VALUES`: "class"
   with three, whose positive value the user then names).

Within a step, the earlier name of the list wins, then the later column. No match: no guess,
and the user chooses.
"""

from __future__ import annotations

import re

import pandas as pd

LABEL_NAMES = (
    "label",
    "target",
    "y",
    "class",
    "outcome",
    "default",
    "income",
    "response",
    "result",
    "decision",
    "approved",
    "churn",
    "survived",
    "fraud",
    "recidivism",
    "two_year_recid",
    "readmitted",
    "hired",
    "admitted",
    "passed",
    "diagnosis",
    "risk",
)
# one word of a longer name: the names above but the one-letter one, and words that name a label
# only inside a longer name ("is_recid"); not "status", which names features as often as labels
LABEL_WORDS = tuple(n for n in LABEL_NAMES if len(n) > 1) + ("recid", "churned", "defaulted")
FEW_LABEL_VALUES = 10
WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")  # "isFraud" → is, Fraud; "ID2" → ID, 2


def guess_label(frame: pd.DataFrame) -> str | None:
    """The column named like a label (see the module's text), or None when none is."""
    best: tuple[tuple[int, int, int], str] | None = None
    for position, column in enumerate(frame.columns):
        rank = _rank(str(column), frame[column])
        if rank is not None:
            key = (rank[0], rank[1], -position)
            if best is None or key < best[0]:
                best = (key, str(column))
    return None if best is None else best[1]


def name_words(name: str) -> list[str]:
    """The words of a column name in lower case: "default payment next month", "is_fraud" and
    "IsFraud" give their words."""
    return [w.lower() for w in WORD.findall(name)]


def _rank(name: str, column: pd.Series) -> tuple[int, int] | None:
    """(step, place in its list) of a column named like a label, or None."""
    words = name_words(name)
    whole = "_".join(words)
    if whole not in LABEL_NAMES and not set(words) & set(LABEL_WORDS):
        return None  # most columns: no need to count their values
    values = column.nunique(dropna=True)
    if whole in LABEL_NAMES and values == 2:
        return 1, LABEL_NAMES.index(whole)
    matched = [LABEL_WORDS.index(w) for w in words if w in LABEL_WORDS]
    if matched and values == 2:
        return 2, min(matched)
    if whole in LABEL_NAMES and 2 < values <= FEW_LABEL_VALUES:
        return 3, LABEL_NAMES.index(whole)
    return None
