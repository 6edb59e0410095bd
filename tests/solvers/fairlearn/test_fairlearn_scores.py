"""The scores of fairlearn's models as FairFront keeps them (`engine.scoring`): randomised
thresholds and constant classifiers score as fairlearn's own predictors do, and pSP of a
randomised classifier's tied scores is the count of its definition (paper 003, Def. 4.1-4.2)."""

from __future__ import annotations

import numpy as np
import pytest
from adult_sample import adult_sample
from fairlearn.postprocessing._interpolated_thresholder import InterpolatedThresholder
from fairlearn.postprocessing._threshold_operation import ThresholdOperation
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.utils import Bunch

from engine import fairness
from engine.fairness.constraints import ConstraintSpec
from engine.model_forms import MIXTURE_Q, MIXTURE_W
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import solve
from engine.solvers.fairlearn.cards import ExponentiatedGradientConfig
from engine.solvers.fairlearn.fairlearn_steps import classifier_weights
from engine.solvers.fairlearn.fairlearn_threshold import threshold_params

pytestmark = pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")
INTERVALS = [(0.0, 1.0), (0.05, 0.3), (0.2, 0.7), (0.5, 1.0)]


@pytest.fixture(scope="module")
def problem() -> Problem:
    return Problem(adult_sample(), ModelSpec(), ConstraintSpec("DP", 0.02), interval=(0.05, 0.3))


def brute_force_psp(scores, groups, alpha: float, beta: float) -> float:
    """max over θ and pairs of |clip(F̄_k(θ)) − clip(F̄_k'(θ))| / (β − α) (paper 003, Def. 4.2
    by App. C, eq. 62), F̄_k(θ) the share of group k scoring strictly above θ (Def. 4.1),
    counted sample by sample at every score, between every two and below all of them."""
    values = sorted(set(scores.tolist()))
    thetas = [
        values[0] - 1.0,
        *values,
        *((a + b) / 2 for a, b in zip(values[:-1], values[1:], strict=True)),
    ]
    members = {k: [s for s, g in zip(scores, groups, strict=True) if g == k] for k in set(groups)}
    largest = 0.0
    for theta in thetas:
        clipped = []
        for scores_k in members.values():
            rank = sum(1 for s in scores_k if s > theta) / len(scores_k)
            clipped.append((min(max(rank, alpha), beta) - alpha) / (beta - alpha))
        largest = max(largest, max(clipped) - min(clipped))
    return largest


def test_psp_of_a_randomised_classifiers_tied_scores_is_its_definitions_count(problem):
    solution = solve(problem, "exponentiated_gradient", ExponentiatedGradientConfig(max_iter=20))
    assert len(solution.params[MIXTURE_Q]) > 1  # a mixture: its scores tie in a few values
    h, groups = problem.scores(solution.params, "test"), problem.data.test.groups
    assert np.unique(h).size == solution.metrics["test"]["distinct_scores"] < len(h) / 50
    assert solution.metrics["test"]["psp"] == pytest.approx(
        brute_force_psp(h, groups, *problem.interval), abs=1e-12
    )
    for alpha, beta in INTERVALS:
        expected = brute_force_psp(h, groups, alpha, beta)
        assert fairness.psp(h, groups, alpha, beta) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("method", ["predict_proba", "decision_function"])
def test_randomised_thresholds_score_as_fairlearns_thresholder(problem, method):
    """Rules with both operators, infinite thresholds and a constant taken with p_ignore."""
    X, y = problem.features("train"), problem.data.train.y
    base = LogisticRegression().fit(X, y)
    scores = getattr(base, method)(X)
    scores = scores[:, 1] if scores.ndim == 2 else scores
    low, high = np.quantile(scores, [0.3, 0.7])
    rules = {
        0: Bunch(
            p0=0.3,
            operation0=ThresholdOperation("<", low),
            p1=0.7,
            operation1=ThresholdOperation(">", high),
            p_ignore=0.25,
            prediction_constant=0.4,
        ),
        1: Bunch(
            p0=0.6,
            operation0=ThresholdOperation(">", -np.inf),
            p1=0.4,
            operation1=ThresholdOperation(">", low),
        ),
    }
    thresholder = InterpolatedThresholder(base, rules, prefit=True, predict_method=method)
    thresholder.fit(None, None)
    weights = np.concatenate([base.intercept_, base.coef_.ravel()])
    params = threshold_params(weights, rules, problem.data.n_groups, method == "predict_proba")
    for split in ("train", "test"):
        groups = problem.data.split(split).groups
        theirs = thresholder._pmf_predict(problem.features(split), sensitive_features=groups)
        ours = problem.scores(params, split) + 0.5
        np.testing.assert_allclose(ours, theirs[:, 1], rtol=0, atol=1e-12)
        assert np.unique(ours).size <= 3 + 2  # group 0: 0.1, 0.3, 0.8; group 1: 0.6, 1


def test_a_constant_classifier_votes_its_constant_in_a_mixture(problem):
    X, y = problem.features("train"), problem.data.train.y
    n_weights = problem.design().shape[1]
    always = [
        classifier_weights(DummyClassifier(strategy="constant", constant=c).fit(X, y), n_weights)
        for c in (0, 1)
    ]
    params = {MIXTURE_W: np.stack(always), MIXTURE_Q: np.array([0.25, 0.75])}
    np.testing.assert_array_equal(problem.scores(params, "test"), 0.75 - 0.5)
