"""Small tables for the estimator tests: two numeric features, a category and a protected
group whose members differ in their scores, with a label that depends on all of them."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit


def toy_table(n: int = 400, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """X (x1, x2, colour, group) and a text label "yes"/"no"; group b is shifted in x1, so an
    unconstrained model scores the groups apart."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b"], n, p=[0.6, 0.4])
    x1 = rng.normal(size=n) + 1.0 * (group == "b")
    x2 = rng.normal(size=n)
    colour = rng.choice(["red", "green", "blue"], n)
    logit = 1.5 * x1 - x2 + 0.5 * (colour == "red")
    y = np.where(rng.random(n) < expit(logit), "yes", "no")
    X = pd.DataFrame({"x1": x1, "x2": x2, "colour": colour, "group": group})
    return X, y


def numeric_table(n: int = 300, seed: int = 1) -> tuple[pd.DataFrame, np.ndarray]:
    """Numbers only (x1, x2 and a 0/1 group column g), with a 0/1 label."""
    X, y = toy_table(n, seed)
    numeric = pd.DataFrame({"x1": X["x1"], "x2": X["x2"], "g": (X["group"] == "b").astype(int)})
    return numeric, (y == "yes").astype(int)
