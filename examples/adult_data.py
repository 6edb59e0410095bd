"""The bundled UCI Adult data as the examples use it: a sample of adult.data to train on and of
adult.test to judge on, as DataFrames with the protected column "sex" among the features."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.data.adult import load_adult


def adult_sample(
    train_rows: int = 4000, test_rows: int = 4000, seed: int = 0
) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray]:
    """X_train, y_train, X_test, y_test; y is 1 for an income above $50K."""
    adult = load_adult()
    rng = np.random.default_rng(seed)
    train = rng.choice(np.flatnonzero(~adult.fixed_test), train_rows, replace=False)
    test = rng.choice(np.flatnonzero(adult.fixed_test), test_rows, replace=False)
    X = adult.frame.drop(columns="fnlwgt")  # a survey weight, not a trait of the person

    def rows(chosen: np.ndarray) -> pd.DataFrame:
        return X.iloc[chosen].reset_index(drop=True)

    return rows(train), adult.label[train], rows(test), adult.label[test]
