"""fairlearn's ExponentiatedGradient, GridSearch and ThresholdOptimizer run by FairFront's driver
give the models fairlearn gives when run directly on the same features with the same base
estimator and the bound FairFront translates κ to; their bounds act; budgets and cancel stop them
between base fits and release their thread; what they cannot solve is refused in words."""

from __future__ import annotations

import dataclasses
import gc
import threading
import time

import numpy as np
import pytest
from adult_sample import adult_sample
from fairlearn.postprocessing import ThresholdOptimizer
from fairlearn.reductions import (
    DemographicParity,
    EqualizedOdds,
    ExponentiatedGradient,
    GridSearch,
    TruePositiveRateParity,
)
from sklearn.linear_model import LogisticRegression
from solver_data import two_groups
from threadpoolctl import threadpool_limits

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.model_forms import MIXTURE_Q
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, solve
from engine.solvers.fairlearn.cards import (
    ExponentiatedGradientConfig,
    GridSearchConfig,
    ThresholdOptimizerConfig,
)
from engine.solvers.fairlearn.fairlearn_reductions import difference_bound
from engine.solvers.fairlearn.fairlearn_steps import base_estimator
from engine.status import StopCode

pytestmark = pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")
KAPPA = 0.02
MOMENTS = {"DP": DemographicParity, "EO": EqualizedOdds, "EOpp": TruePositiveRateParity}
TO_CONSTRAINTS = {
    "DP": "demographic_parity",
    "EO": "equalized_odds",
    "EOpp": "true_positive_rate_parity",
}
SPLITS = ("train", "test")
# small enough for seconds, large enough that the reductions mix several classifiers
EG = ExponentiatedGradientConfig(max_iter=20)


@pytest.fixture(scope="module")
def data():
    return adult_sample()


def problem_of(data, family="DP", kappa=KAPPA, model: ModelSpec | None = None) -> Problem:
    return Problem(data, model or ModelSpec(), ConstraintSpec(family, kappa))


def fit_directly(mitigator, problem: Problem):
    """fairlearn's `mitigator` fitted on the problem's training split, its base fits' BLAS and
    OpenMP on one thread as the solvers run them."""
    train = problem.data.train
    with threadpool_limits(limits=1):
        return mitigator.fit(problem.features("train"), train.y, sensitive_features=train.groups)


def translated(problem: Problem):
    """fairlearn's moment of the problem's family with the bound the solvers pass for κ."""
    spec, train = problem.constraint, problem.data.train
    bound = difference_bound(spec.family, spec.kappa, train.groups, train.y)
    return MOMENTS[spec.family](difference_bound=bound)


def logistic() -> LogisticRegression:
    """The base estimator of the solvers' default options, as fairlearn's users write it."""
    return LogisticRegression(solver="lbfgs")


def expected_rate_gap(problem: Problem, params) -> float:
    """The largest gap between the groups' expected positive rates of the randomised classifier
    on the training split (its probabilities are the scores + ½)."""
    probability = problem.scores(params) + 0.5
    groups = problem.data.train.groups
    rates = [probability[groups == g].mean() for g in range(problem.data.n_groups)]
    return max(rates) - min(rates)


@pytest.mark.parametrize("family", ["DP", "EO"])
def test_exponentiated_gradient_gives_fairlearns_probabilities(data, family):
    problem = problem_of(data, family)
    solution = solve(problem, "exponentiated_gradient", EG)
    direct = fit_directly(
        ExponentiatedGradient(logistic(), translated(problem), max_iter=EG.max_iter), problem
    )
    for split in SPLITS:
        ours = problem.scores(solution.params, split) + 0.5
        theirs = direct._pmf_predict(problem.features(split))[:, 1]
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    fitted = direct.n_oracle_calls_ - direct.n_oracle_calls_dummy_returned_
    assert solution.iterations == fitted and solution.stop.code is not StopCode.ITERATION_BUDGET
    mixed = len(solution.params[MIXTURE_Q])
    assert 1 < solution.metrics["test"]["distinct_scores"] <= 2**mixed


def test_grid_search_reports_the_classifier_fairlearn_picks_when_asked(data):
    problem = problem_of(data, "EOpp", model=ModelSpec(cross_terms=True))
    solution = solve(problem, "grid_search", GridSearchConfig(select="fairlearn"))
    direct = fit_directly(
        GridSearch(logistic(), translated(problem), grid_size=GridSearchConfig().grid_size), problem
    )
    chosen = direct.predictors_[direct.best_idx_]
    assert isinstance(chosen, LogisticRegression)
    for split in SPLITS:
        np.testing.assert_allclose(
            problem.scores(solution.params, split),
            chosen.decision_function(problem.features(split)),
            rtol=0,
            atol=1e-9,
        )
    assert solution.iterations == len(direct.predictors_) and set(solution.params) == {"w"}
    assert "fairlearn's pick by (1 − 0.5)·error + 0.5·violation" in solution.stop.text


@pytest.mark.parametrize(
    ("family", "method"),
    [("DP", "predict_proba"), ("EO", "decision_function"), ("EOpp", "predict_proba")],
)
def test_threshold_optimizer_gives_fairlearns_probabilities(data, family, method):
    problem = problem_of(data, family)
    solution = solve(
        problem, "threshold_optimizer", ThresholdOptimizerConfig(predict_method=method)
    )
    mitigator = ThresholdOptimizer(
        estimator=logistic(),
        constraints=TO_CONSTRAINTS[family],
        predict_method=method,
        tol=None if family == "EO" else KAPPA,
    )
    direct = fit_directly(mitigator, problem)
    for split in SPLITS:
        ours = problem.scores(solution.params, split) + 0.5
        part = problem.data.split(split)
        theirs = direct._pmf_predict(problem.features(split), sensitive_features=part.groups)
        np.testing.assert_allclose(ours, theirs[:, 1], rtol=0, atol=1e-9)
    assert solution.iterations == 1 and solution.stop.code is StopCode.CONVERGED
    # at most four probabilities per group: two thresholds, each rule's value and the constant
    assert 1 < solution.metrics["test"]["distinct_scores"] <= 4 * problem.data.n_groups


def test_a_tighter_dp_bound_gives_a_smaller_gap_of_expected_rates(data):
    gaps = {
        kappa: expected_rate_gap(
            problem := problem_of(data, "DP", kappa),
            solve(problem, "exponentiated_gradient", EG).params,
        )
        for kappa in (0.005, 0.2)
    }
    assert gaps[0.005] < gaps[0.2] / 2


def test_exponentiated_gradient_holds_the_gap_between_two_groups_within_kappa(data):
    """fairlearn stops when its duality gap is below ν. That gap is at least
    L(Q̂, λ_best) − L(Q̂, λ̂) ≥ (B − ‖λ̂‖₁)·v, v the largest excess of a group's expected rate's
    distance to the overall rate over fairlearn's bound b (B = 1/eps = 100 bounds the
    multipliers' L1 norm), so v < ν while ‖λ̂‖₁ ≤ B − 1; an excess v of the smaller group's
    constraint (1 − p_min)·gap ≤ b is an excess v/(1 − p_min) of the gap: the slack."""
    kappa, nu = 0.05, 0.005
    problem = problem_of(data, "DP", kappa)
    config = dataclasses.replace(EG, nu=nu)
    solution = solve(problem, "exponentiated_gradient", config)
    assert solution.stop.code is StopCode.CONVERGED  # duality gap < ν
    train = data.train
    slack = nu / (1.0 - np.bincount(train.groups).min() / len(train))
    assert expected_rate_gap(problem, solution.params) <= kappa + slack
    bound = difference_bound("DP", kappa, train.groups, train.y)
    last = [r for r in solution.trajectory if r.kind == "surrogate"][-1]
    assert last.state["fairlearn_bound"] == bound < kappa
    assert f"fairlearn's difference bound b = {bound:.4g}" in solution.stop.text
    # given κ itself as its bound, as before the translation, fairlearn goes past κ
    untranslated = ExponentiatedGradient(
        logistic(), DemographicParity(difference_bound=kappa), max_iter=config.max_iter, nu=nu
    )
    probability = fit_directly(untranslated, problem)._pmf_predict(problem.features("train"))
    rates = [probability[train.groups == g, 1].mean() for g in range(data.n_groups)]
    assert max(rates) - min(rates) > kappa + slack


def test_an_iteration_budget_stops_between_base_fits_and_releases_the_thread(data):
    problem = problem_of(data)
    threads = threading.active_count()
    solution = solve(problem, "exponentiated_gradient", EG, budget=Budget(max_iterations=3))
    assert solution.stop.code is StopCode.ITERATION_BUDGET and solution.iterations == 3
    assert "did not finish: the model reported is its last base classifier" in solution.stop.text
    fits = []  # fairlearn's own run, each base fit's weights recorded
    fit_directly(
        ExponentiatedGradient(
            base_estimator(EG, fits.append), translated(problem), max_iter=EG.max_iter
        ),
        problem,
    )
    np.testing.assert_allclose(solution.params["w"], fits[2], rtol=0, atol=1e-12)
    assert set(solution.params) == {"w"}
    deadline = time.monotonic() + 10.0
    while threading.active_count() > threads and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    assert threading.active_count() == threads  # the abandoned fit's thread has ended


def test_cancel_stops_between_base_fits(data):
    checks = []

    def should_stop() -> bool:
        checks.append(None)
        return len(checks) > 2  # after two steps

    solution = solve(problem_of(data), "grid_search", should_stop=should_stop)
    assert solution.stop.code is StopCode.CANCELLED and solution.iterations == 2
    surrogate = [r.iteration for r in solution.trajectory if r.kind == "surrogate"]
    assert surrogate == sorted(set(surrogate)) and surrogate[-1] == 2


def test_records_follow_the_base_fits(data):
    solution = solve(problem_of(data, "EO"), "exponentiated_gradient", EG)
    surrogate = [r for r in solution.trajectory if r.kind == "surrogate"]
    assert [r.iteration for r in surrogate][-1] == solution.iterations
    assert surrogate[-1].state["base_fits"] == solution.iterations
    assert solution.trajectory[-1].kind == "final"


@pytest.mark.parametrize("solver", ["exponentiated_gradient", "grid_search", "threshold_optimizer"])
def test_other_families_models_and_options_are_refused_in_words(data, solver):
    with pytest.raises(
        UserError,
        match=f"^{solver} solves the constraint families DP, EO, EOpp "
        "only: it needs a gap between groups' rates .*, not pSP$",
    ):
        solve(Problem(data, ModelSpec(), ConstraintSpec("pSP", 0.1, (0.0, 0.5))), solver)
    with pytest.raises(
        UserError, match=f"^{solver} trains linear models only: .*logistic regression"
    ):
        solve(problem_of(data, model=ModelSpec("mlp")), solver)
    with pytest.raises(UserError, match=f"^{solver} trains under a constraint"):
        solve(Problem(data, ModelSpec(), None), solver)


def test_bad_options_are_refused(data):
    with pytest.raises(UserError, match="option eps must be > 0, not 0"):
        ExponentiatedGradientConfig(eps=0.0)
    with pytest.raises(UserError, match=r"option constraint_weight must be in \[0, 1\], not 1.5"):
        GridSearchConfig(constraint_weight=1.5)
    with pytest.raises(UserError, match="option C must be > 0, not 0"):
        GridSearchConfig(C=0.0)
    with pytest.raises(
        UserError,
        match="option predict_method must be one of predict_proba, "
        "decision_function, not 'predict'",
    ):
        ThresholdOptimizerConfig(predict_method="predict")
    with pytest.raises(
        UserError, match="under EO maximises accuracy_score or balanced_accuracy_score only"
    ):
        solve(
            problem_of(data, "EO"),
            "threshold_optimizer",
            ThresholdOptimizerConfig(objective="selection_rate"),
        )


def test_data_fairlearn_cannot_use_is_refused_with_its_words_and_the_group_names():
    data = two_groups()
    labels = np.where(data.train.groups == 0, 0, data.train.y)  # group F: negatives only
    one_sided = dataclasses.replace(data, train=dataclasses.replace(data.train, y=labels))
    with pytest.raises(
        UserError,
        match="^fairlearn's ThresholdOptimizer refused the training "
        "data: Degenerate labels .* value 0 \\(groups by number: 0 = F, 1 = M\\)",
    ):
        solve(problem_of(one_sided), "threshold_optimizer")
