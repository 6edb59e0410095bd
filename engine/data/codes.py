"""Readable labels for the coded values of ACS PUMS columns (2018 PUMS data dictionary)."""

from __future__ import annotations

SEX = {1: "Male", 2: "Female"}

RAC1P = {
    1: "White",
    2: "Black",
    3: "American Indian",
    4: "Alaska Native",
    5: "American Indian and Alaska Native, other",
    6: "Asian",
    7: "Native Hawaiian and Pacific Islander",
    8: "Some other race",
    9: "Two or more races",
}

MAR = {1: "Married", 2: "Widowed", 3: "Divorced", 4: "Separated", 5: "Never married"}

COW = {
    1: "Private for-profit",
    2: "Private not-for-profit",
    3: "Local government",
    4: "State government",
    5: "Federal government",
    6: "Self-employed, not incorporated",
    7: "Self-employed, incorporated",
    8: "Unpaid family work",
    9: "Unemployed, last worked 5+ years ago",
}

SCHL = {
    1: "No schooling",
    2: "Nursery school",
    3: "Kindergarten",
    **{g: f"Grade {g - 3}" for g in range(4, 16)},
    16: "High school diploma",
    17: "GED",
    18: "Some college, <1 year",
    19: "Some college, 1+ years",
    20: "Associate's degree",
    21: "Bachelor's degree",
    22: "Master's degree",
    23: "Professional degree",
    24: "Doctorate",
}

CIT = {
    1: "Born in the US",
    2: "Born in US territories",
    3: "Born abroad to US parents",
    4: "Naturalized citizen",
    5: "Not a citizen",
}

YES_NO = {1: "Yes", 2: "No"}

ESR = {
    1: "Employed, at work",
    2: "Employed, not at work",
    3: "Unemployed",
    4: "Armed forces, at work",
    5: "Armed forces, not at work",
    6: "Not in labor force",
}

MIL = {
    1: "Active duty now",
    2: "Active duty in the past",
    3: "Reserve/Guard training only",
    4: "Never served",
}

NATIVITY = {1: "Native", 2: "Foreign born"}

ACS_VALUE_LABELS: dict[str, dict[object, str]] = {
    "SEX": SEX,
    "RAC1P": RAC1P,
    "MAR": MAR,
    "COW": COW,
    "SCHL": SCHL,
    "CIT": CIT,
    "DIS": {1: "With a disability", 2: "Without a disability"},
    "ESR": ESR,
    "MIL": MIL,
    "NATIVITY": NATIVITY,
    "DEAR": YES_NO,
    "DEYE": YES_NO,
    "DREM": YES_NO,
    "MIG": {1: "Same house", 2: "Moved from abroad", 3: "Moved within the US"},
}
