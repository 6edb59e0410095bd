"""The constraint does its work through the estimator: on bundled Adult, by sex, a tight pSP
bound gives a model whose training pSP is far below the unconstrained one's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from engine.data.adult import load_adult
from engine.estimator import FairFrontClassifier

KAPPA = 0.02


@pytest.fixture(scope="module")
def adult():
    """800 rows of Adult as a DataFrame, with the label as its text."""
    dataset = load_adult()
    rows = np.sort(np.random.default_rng(0).choice(len(dataset.frame), 800, replace=False))
    X = dataset.frame.iloc[rows].reset_index(drop=True)
    y = np.where(dataset.label[rows] == 1, ">50K", "<=50K")
    return X, y


def fit(X, y, **params) -> FairFrontClassifier:
    clf = FairFrontClassifier(validation_fraction=0.0, random_state=0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clf.fit(X, y, sensitive_features="sex")


def test_a_tight_psp_bound_lowers_the_training_psp(adult):
    X, y = adult
    free = fit(X, y, solver="unconstrained", constraint=None)
    bound = fit(
        X, y, solver="idca", constraint="pSP", kappa=KAPPA, solver_options={"outer_iterations": 50}
    )
    assert list(bound.groups_) == ["Female", "Male"]
    free_psp, bound_psp = free.metrics_["train"]["psp"], bound.metrics_["train"]["psp"]
    assert free_psp > 0.2  # Adult's scores differ by sex
    assert bound_psp < free_psp / 3
    assert bound.metrics_["train"]["constraint"] == pytest.approx(bound_psp)
    assert bound.verdict_.kappa == KAPPA and bound.verdict_.quantity == "pSP"
    assert bound.score(X, y) > 0.7
