"""scikit-learn's estimator checks on both estimators (fitted without sensitive features: one
group and the reference solver, as the checks pass none)."""

from __future__ import annotations

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from engine.estimator import FairFrontClassifier, FairFrontRegressor

ESTIMATORS = [FairFrontClassifier(max_seconds=10.0), FairFrontRegressor(max_seconds=10.0)]


@parametrize_with_checks(ESTIMATORS)
def test_scikit_learn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "no sensitive_features: one group"
        check(estimator)
