"""fairlearn's mitigators under the shared driver, one base-estimator fit per step.

fairlearn's `fit` cannot be paused, but it calls its base estimator's `fit` again and again (an
oracle call: ExponentiatedGradient one to five times an iteration, GridSearch once per grid
point, ThresholdOptimizer once), and each of those calls is a natural point to hand control back.
So fairlearn runs in a thread of its own (`SteppedLoop`) with `SteppedLogisticRegression` as its
base estimator, whose `fit` ends by handing its weights over and waiting; the solver's `step`
lets it go on until its next base fit has ended (or fairlearn has returned). fairlearn's thread
starts in the first `step` and works only while `step` waits for it: one of the two threads works
at any time, fairlearn's work is done on the run's clock, and its BLAS and OpenMP run on
`FAIRLEARN_THREADS`.
Budgets and cancel therefore act between two base fits; a run ended that way reports the last
base classifier fitted (`selection_note` says so), and its thread is stopped when the solver is
collected.

`candidate()` is always that last base classifier, a plain linear model: the records during the
run show it. fairlearn's result (a mixture of classifiers, randomised thresholds or a model of the
grid, `engine.scoring`) is reported by `select` when fairlearn has returned.

Each mitigator is given the bound of fairlearn's own definition that holds FairFront's gap ≤ κ
(`fairlearn_bound`); the records keep it (state "fairlearn_bound") and the run's stop reason says
it.
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from engine.errors import UserError
from engine.models import Params
from engine.problem import Problem
from engine.solvers.base import Solver, StepInfo
from engine.solvers.fairlearn.cards import LogisticBaseConfig
from engine.solvers.stepped_loop import Ask, SteppedLoop
from engine.status import StopCode

# fairlearn's work runs its BLAS and OpenMP on one thread: on a 2-core machine, scikit-learn's
# OpenMP threads and OpenBLAS's contended so that a weighted logistic regression on Adult's
# training split took 3 s with their default threads and 0.25 s with one (the same L-BFGS
# iterations), and ExponentiatedGradient took 16-28 s instead of 5 s
FAIRLEARN_THREADS = 1


class SteppedLogisticRegression(ClassifierMixin, BaseEstimator):
    """scikit-learn's LogisticRegression (L-BFGS) whose `fit` ends by calling `pause` with its
    weights [intercept, coefficients] (`weights_`), the weights w of FairFront's design
    X̃ = [1, X]. fairlearn clones it for every oracle call; a clone shares `pause`."""

    def __init__(self, C: float = 1.0, max_iter: int = 100, pause: Ask | None = None) -> None:
        self.C = C
        self.max_iter = max_iter
        self.pause = pause

    def fit(self, X, y, sample_weight=None) -> SteppedLogisticRegression:
        model = LogisticRegression(C=self.C, max_iter=self.max_iter, solver="lbfgs")
        self.model_ = model.fit(X, y, sample_weight=sample_weight)
        self.classes_ = model.classes_
        self.weights_ = np.concatenate([model.intercept_, model.coef_.ravel()])
        if self.pause is not None:
            self.pause(self.weights_)
        return self

    def predict(self, X) -> np.ndarray:
        return self.model_.predict(X)

    def predict_proba(self, X) -> np.ndarray:
        return self.model_.predict_proba(X)

    def decision_function(self, X) -> np.ndarray:
        return self.model_.decision_function(X)


def base_estimator(
    config: LogisticBaseConfig, pause: Ask | None = None
) -> SteppedLogisticRegression:
    """The base estimator of the options (`pause` None: one that never pauses)."""
    return SteppedLogisticRegression(C=config.C, max_iter=config.base_max_iter, pause=pause)


def classifier_weights(classifier: Any, n_weights: int) -> np.ndarray:
    """w on X̃ of a classifier fairlearn fitted: a base fit's weights, or for the constant
    classifier fairlearn puts in its place when every reweighted label is the same
    (DummyClassifier), ±1 on the intercept (1[x̃·w > 0] is then that constant)."""
    if isinstance(classifier, DummyClassifier):
        w = np.zeros(n_weights)
        w[0] = 1.0 if classifier.constant == 1 else -1.0
        return w
    return classifier.weights_


class FairlearnSolver(Solver):
    """A fairlearn mitigator stepped one base fit at a time (module docstring). A subclass
    names the mitigator (`method`), gives the function that fits it (`fit_mitigator`, a
    staticmethod: fit_mitigator(ask, config, family, bound, X, y, groups) -> the fitted
    mitigator, its base estimator pausing on `ask`), the bound it passes to fairlearn
    (`fairlearn_bound`, said in words by `bound_text`) and turns the fitted mitigator into the
    reported model (`model`) and the run's end (`end`)."""

    method: str
    fit_mitigator: Callable[..., Any]

    def __init__(self, problem: Problem, config: LogisticBaseConfig, rng: np.random.Generator):
        super().__init__(problem, config, rng)
        spec = problem.constraint
        if problem.threshold != 0.0 or spec.threshold != 0.0:
            raise UserError(
                f"{self.method} decides by its classifiers' 0/1 predictions: run it "
                "with the decision threshold 0 (its majority vote)"
            )
        self.bound = self.fairlearn_bound()
        self.latest = problem.init_params()["w"]  # w of the last base fit (none yet: w = 0)
        self.fits = 0
        self.fitted: Any = None  # the mitigator, once fairlearn's fit has returned
        self._paused = False  # fairlearn waits after a base fit
        self.loop: SteppedLoop | None = None  # started by the first step

    def _fitting(self) -> Callable[[Ask], Any]:
        """`fit_mitigator` on this problem, as a function of `ask` alone. It refers to the data
        and options, never to the solver: a fit abandoned by the solver is stopped when the
        solver is collected, which its thread would otherwise prevent."""
        spec = self.problem.constraint
        train = self.problem.data.train
        return functools.partial(
            self.fit_mitigator,
            config=self.config,
            family=spec.family,
            bound=self.bound,
            X=self.problem.features("train"),
            y=train.y,
            groups=train.groups,
        )

    @abstractmethod
    def fairlearn_bound(self) -> float | None:
        """The bound fairlearn is given for the constraint (None: fairlearn's has none)."""

    @abstractmethod
    def bound_text(self) -> str:
        """`bound` (not None) in words, for the run's stop reason."""

    @abstractmethod
    def model(self, fitted: Any) -> Params:
        """The model to report of the fitted mitigator (`engine.scoring`)."""

    def end(self, fitted: Any) -> tuple[StopCode, str]:
        return StopCode.CONVERGED, f"fairlearn's {self.method} finished"

    def step(self) -> StepInfo:
        try:
            # fairlearn works only while this thread waits for it: the limit covers its work
            with threadpool_limits(limits=FAIRLEARN_THREADS):
                if self.loop is None:
                    self.loop = SteppedLoop(self._fitting())
                elif self._paused:
                    self.loop.answer(None)
                weights = self.loop.next_point()
        except ValueError as refused:  # fairlearn's word on data it cannot use
            names = ", ".join(
                f"{g} = {name}" for g, name in enumerate(self.problem.data.group_names)
            )
            raise UserError(
                f"fairlearn's {self.method} refused the training data: {refused} "
                f"(groups by number: {names})"
            ) from refused
        if weights is None:
            self.fitted = self.loop.result
            stop, reason = self.end(self.fitted)
            reason = f"{reason} ({self.fits} base fit{'s' * (self.fits != 1)})"
            if self.bound is not None:
                reason = f"{reason}; {self.bound_text()}"
            return StepInfo(0, self._loss(), self._state(), done=True, reason=reason, stop=stop)
        self._paused, self.latest = True, weights
        self.fits += 1
        return StepInfo(1, self._loss(), self._state())

    def _state(self) -> dict[str, float]:
        bound = {} if self.bound is None else {"fairlearn_bound": self.bound}
        return {"base_fits": float(self.fits)} | bound

    def _loss(self) -> float:
        return self.problem.loss(self.problem.scores(self.candidate()))

    def candidate(self) -> Params:
        return {"w": self.latest.copy()}

    def select(self, snapshots) -> Params:
        return self.candidate() if self.fitted is None else self.model(self.fitted)

    def selection_note(self) -> str:
        if self.fitted is not None:
            return ""
        return (
            f"fairlearn's {self.method} did not finish: the model reported is its last base "
            f"classifier ({self.fits} fitted), not its result"
        )
