"""FairFront as scikit-learn estimators: `FairFrontClassifier` and `FairFrontRegressor` train
their parameters as a run specification, through the same path from a spec to a model as the
app and the command line (`engine.estimator_run`, `engine.runs.execute`), score through
`engine.scoring` and are judged as a run is (`engine.verdict`).

    from engine import FairFrontClassifier
    clf = FairFrontClassifier(constraint="pSP", kappa=0.05)
    clf.fit(X, y, sensitive_features="sex")      # a column of X, or the values themselves
    clf.predict(X_new); clf.verdict_.summary

The data is prepared as the app prepares a data set (`engine.estimator_data`): numeric columns
standardised, the others one-hot encoded, groups by the values of the sensitive features, a
validation split drawn from the rows given (`validation_fraction`) and no test split. The
sensitive features are fit metadata (fairlearn's keyword): pass them to `GridSearchCV.fit`, or
route them with `set_fit_request(sensitive_features=True)` under scikit-learn's metadata routing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import numbers
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import (
    assert_all_finite,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from engine import __version__
from engine.data.encoding import cross_term_names
from engine.data.prepare import prepare
from engine.data.prepared import Prepared
from engine.errors import UserError
from engine.estimator_data import (
    InputError,
    check_numbers,
    feature_frame,
    group_ids,
    positional_frame,
    preparation,
    sensitive_frame,
    training_dataset,
)
from engine.estimator_parameters import PARAMETERS_DOC
from engine.estimator_run import fit_spec, judged_fields, train
from engine.model_file import ExportedModel, save_model
from engine.model_forms import form_of
from engine.objectives import LogisticLoss
from engine.runs.quantities import quantity_of
from engine.runs.results import solution_verdict
from engine.runs.spec import RunSpec
from engine.scoring import Rows, model_scores, uses_groups
from engine.solvers.catalogue import solver_card
from engine.solvers.records import IterationRecord, Solution
from engine.task import Task

REFERENCE_SOLVER = "unconstrained"  # trains a fit without sensitive features (one group)
DEFAULT_SECONDS = 60.0  # guards against a solver that runs until stopped (sgd, ssw, ...)
THRESHOLD = 0.0  # a score above it predicts classes_[1] (the Problem's threshold θ̂)


@contextlib.contextmanager
def _input_errors() -> Iterator[None]:
    """The engine's `UserError`s as `InputError`s: the same sentence, raised as the ValueError
    scikit-learn's callers expect of bad input."""
    try:
        yield
    except UserError as error:
        if isinstance(error, ValueError):
            raise
        raise InputError(str(error)) from error


class FairFrontEstimator(BaseEstimator):
    """What the classifier and the regressor share: parameters, data, training, scoring and
    export. Subclasses say the task, turn y into the engine's label and back, and score."""

    _task: ClassVar[Task]
    # under metadata routing, scoring receives the sensitive features whenever they are passed:
    # a model with groups needs them, any other ignores them
    __metadata_request__score: ClassVar[dict] = {"sensitive_features": True}

    def __init__(
        self,
        *,
        solver: str = "idca",
        constraint: str | None = "pSP",
        kappa: float = 0.05,
        interval: tuple[float, float] = (0.0, 1.0),
        constraint_options: dict | None = None,
        model: str = "linear",
        cross_terms: bool = False,
        hidden: tuple[int, ...] = (64,),
        activation: str = "relu",
        objective: str | None = None,
        max_iter: int | None = None,
        max_seconds: float | None = DEFAULT_SECONDS,
        solver_options: dict | None = None,
        validation_fraction: float = 0.2,
        min_category_count: int = 5,
        hold_kappa: str | None = None,
        tune: bool = False,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.solver = solver
        self.constraint = constraint
        self.kappa = kappa
        self.interval = interval
        self.constraint_options = constraint_options
        self.model = model
        self.cross_terms = cross_terms
        self.hidden = hidden
        self.activation = activation
        self.objective = objective
        self.max_iter = max_iter
        self.max_seconds = max_seconds
        self.solver_options = solver_options
        self.validation_fraction = validation_fraction
        self.min_category_count = min_category_count
        self.hold_kappa = hold_kappa
        self.tune = tune
        self.random_state = random_state

    # ---- training -------------------------------------------------------------------------
    def fit(self, X, y, *, sensitive_features=None):
        """Train on X and y with the groups of `sensitive_features`: a column name of X or a
        list of them (their intersection), or values, a 1-D array or Series, or a 2-D array or
        DataFrame (their intersection), matched to the rows of X by position. None: one group,
        trained without a constraint (see the class's docstring)."""
        with _input_errors():
            frame = self._frame(X, reset=True)
            label, label_name = self._label(y, len(frame))
            spec = fit_spec(self, self._task)
            self._check_data_options()
            seed = self._seed()
            protected = None
            if sensitive_features is not None:
                protected = sensitive_frame(sensitive_features, frame, self._named_columns)
            dataset = training_dataset(frame, protected, label, label_name, self._task)
            options = preparation(dataset, self.validation_fraction, seed, self.min_category_count)
            spec = dataclasses.replace(spec, prepare=options, seed=seed)
            if protected is None:
                warnings.warn(
                    "no sensitive_features: every row is one group, and the model "
                    f"is trained by the {REFERENCE_SOLVER} solver without a "
                    "fairness constraint",
                    UserWarning,
                    stacklevel=2,
                )
                reference = dataclasses.asdict(solver_card(REFERENCE_SOLVER).Config())
                spec = dataclasses.replace(
                    spec, solver=REFERENCE_SOLVER, constraint=None, config=reference, honour=None
                )
            prepared = prepare(dataset, options)
            for message in prepared.warnings:
                warnings.warn(message, UserWarning, stacklevel=2)
            solution, spec, tuning = train(prepared, spec, bool(self.tune))
        self._keep(prepared, spec, solution)
        self.tuning_ = None
        if tuning is not None:
            held = "value" if spec.constraint is None else quantity_of(spec.constraint).name
            self.tuning_ = pd.DataFrame(tuning.rows(held))
        return self

    def _check_data_options(self) -> None:
        share = self.validation_fraction
        if not (isinstance(share, numbers.Real) and 0.0 <= share < 1.0):
            raise InputError(
                f"validation_fraction is the share of rows held out for "
                f"validation, 0 ≤ share < 1, not {share!r}"
            )
        count = self.min_category_count
        if not (isinstance(count, numbers.Integral) and count >= 1):
            raise InputError(f"min_category_count must be a whole number ≥ 1, not {count!r}")

    def _seed(self) -> int:
        """The split's and the solver's seed: `random_state` itself when it is a whole number,
        else one drawn from it."""
        state = check_random_state(self.random_state)  # refuses a negative or bad value
        if isinstance(self.random_state, numbers.Integral):
            return int(self.random_state)
        return int(state.randint(np.iinfo(np.int32).max))

    def _keep(self, prepared: Prepared, spec: RunSpec, solution: Solution) -> None:
        """The fitted state, every attribute ending in "_"."""
        self.groups_ = np.asarray(prepared.group_names, dtype=object)
        names = prepared.feature_names
        if spec.model.cross_terms:
            names = cross_term_names(names, prepared.group_names)
        self.model_feature_names_ = np.asarray(names, dtype=object)
        self.solver_, self.constraint_, self.seed_ = spec.solver, spec.constraint, spec.seed
        self.params_ = solution.params
        self.needs_sensitive_features_ = uses_groups(spec.model, self.params_, prepared.n_groups)
        if spec.model.affine and form_of(self.params_).own_weights:
            self._keep_linear(self.params_["w"])
        self.solution_ = solution
        self.status_ = str(solution.status)
        self.n_iter_ = solution.iterations
        self.metrics_ = {split: values for split, values in solution.metrics.items() if values}
        self.history_ = history_frame(solution.trajectory)
        self.verdict_ = solution_verdict(spec, solution)
        self.exported_model_ = ExportedModel(
            model=spec.model,
            params=self.params_,
            encoder=prepared.encoder,
            group_map=prepared.group_map,
            group_names=prepared.group_names,
            task=prepared.task,
            objective=spec.objective.name,
            threshold=THRESHOLD,
            classes=tuple(self._classes_list()),
            label_name=prepared.label_name,
            about=self._about(spec),
        )

    def _about(self, spec: RunSpec) -> dict[str, Any]:
        """Where an exported model comes from (JSON-able), as `engine.runs.export.run_about`
        says it of a run: the estimator, solver and options, constraint with κ and I, seed,
        how it ended, the verdict and the exact validation metrics."""
        about = {
            "estimator": type(self).__name__,
            **judged_fields(spec),
            "kappa": None if spec.constraint is None else spec.constraint.kappa,
            "seed": spec.seed,
            "status": self.status_,
            "verdict": self.verdict_.summary,
            "verdict_findings": list(self.verdict_.findings),
            "validation_metrics": self.metrics_.get("val", {}),
            "engine_version": __version__,
        }
        return json.loads(json.dumps(about, default=str))

    def export(self, path: str | Path) -> None:
        """Write the fitted model as a FairFront model file (`engine.model_file`), which
        `python -m engine predict` and `engine.model_file.load_model` read. It scores raw rows
        with the columns of X and, for a model with groups, the protected column(s): those of
        X named by `sensitive_features`, or "sensitive" ("sensitive 1", ...) for values given
        without a name (`exported_model_.columns` lists them)."""
        check_is_fitted(self)
        save_model(self.exported_model_, path)

    # ---- scoring --------------------------------------------------------------------------
    def _scores(self, X, sensitive_features) -> np.ndarray:
        """The model's scores of the rows of X (`engine.scoring.model_scores`, as training,
        every report and the exported model compute them)."""
        check_is_fitted(self)
        exported = self.exported_model_
        with _input_errors():
            frame = self._frame(X, reset=False)
            groups = self._groups_of(sensitive_features, frame)
            rows = Rows(
                exported.encoder.transform(frame),
                groups,
                len(exported.group_names),
                exported.model.cross_terms,
            )
            return model_scores(exported.model, exported.params, rows)

    def _groups_of(self, sensitive_features, frame: pd.DataFrame) -> np.ndarray:
        """Each row's group id for a model that scores groups differently; zeros (unused)
        for any other, which ignores `sensitive_features`."""
        if not self.needs_sensitive_features_:
            return np.zeros(len(frame), dtype=np.int64)
        if sensitive_features is None:
            raise InputError(
                "this model scores each group differently (group cross-terms, or "
                "a group-wise map of its scores), so it needs sensitive_features "
                "to predict: pass them as at fit"
            )
        return group_ids(
            self.exported_model_.group_map, sensitive_features, frame, self._named_columns
        )

    def score(self, X, y, sample_weight=None, *, sensitive_features=None) -> float:
        """The mixin's score (accuracy for the classifier, R² for the regressor) of the
        predictions, which take `sensitive_features` when the model needs them."""
        predictions = self.predict(X, sensitive_features=sensitive_features)
        return float(self._score_metric(y, predictions, sample_weight=sample_weight))

    # ---- inputs ---------------------------------------------------------------------------
    def _frame(self, X, reset: bool) -> pd.DataFrame:
        """X as a frame whose columns are `feature_names_in_` (x0, x1, ... without them; a
        DataFrame's columns as they are, checked; an array's as numbers), after scikit-learn's
        checks of its shape and of the features it was fitted with."""
        if isinstance(X, pd.DataFrame):
            validate_data(self, X, skip_check_array=True, reset=reset)
            if reset and len(X) < 2:
                raise InputError(f"X has {len(X)} sample(s); at least 2 are needed to train")
            return self._checked(feature_frame(X, self._column_names), reset)
        numbers_only = reset or not self.exported_model_.encoder.categorical
        values = validate_data(
            self,
            X,
            reset=reset,
            dtype=np.float64 if numbers_only else None,
            ensure_min_samples=2 if reset else 1,
        )
        frame = positional_frame(values, self._column_names)
        return frame if numbers_only else self._checked(frame, reset)

    def _checked(self, frame: pd.DataFrame, reset: bool) -> pd.DataFrame:
        """Refuse missing or infinite numbers where the model reads numbers (when fitting,
        `engine.estimator_data.training_dataset` checks them)."""
        if not reset:
            check_numbers(frame, [c.name for c in self.exported_model_.encoder.numeric])
        return frame

    @property
    def _named_columns(self) -> bool:
        return hasattr(self, "feature_names_in_")

    @property
    def _column_names(self) -> list[str]:
        if self._named_columns:
            return [str(c) for c in self.feature_names_in_]
        return [f"x{j}" for j in range(self.n_features_in_)]

    def _label(self, y, n_rows: int) -> tuple[np.ndarray, str]:
        """The engine's label of y (checked) and its name."""
        if y is None:
            raise InputError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        name = y.name if isinstance(y, pd.Series) and isinstance(y.name, str) else "y"
        values = column_or_1d(y, warn=True)
        check_consistent_length(np.empty(n_rows), values)
        if values.dtype.kind in "fc":
            assert_all_finite(values, input_name="y")
        return self._encode_label(values), name

    def _keep_linear(self, w: np.ndarray) -> None:
        raise NotImplementedError

    def _classes_list(self) -> list:
        """The classes an exported model predicts (JSON-able values)."""
        return [0, 1]

    def _encode_label(self, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _score_metric(self, y, predictions, sample_weight) -> float:
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = False
        return tags


class FairFrontClassifier(ClassifierMixin, FairFrontEstimator):
    __doc__ = (
        """A binary classifier trained under a fairness constraint (default: pSP ≤ κ by IDCA,
    paper 003). Any two class labels (numbers, text, booleans); `classes_` is sorted and
    `classes_[1]` is the positive label, predicted when the score is > 0. `predict_proba` is
    the logistic objective's sigmoid of the score, or a randomised classifier's probability
    (fairlearn's reductions); the other objectives (squared hinge, pairwise AUC) fit scores
    without probabilities, and the estimator then has no `predict_proba`.
    """
        + PARAMETERS_DOC
    )

    _task = Task.CLASSIFICATION
    score = FairFrontEstimator.score

    def _encode_label(self, y: np.ndarray) -> np.ndarray:
        check_classification_targets(y)
        kind = type_of_target(y, input_name="y", raise_unknown=True)
        if kind != "binary":
            raise InputError(
                f"Only binary classification is supported. The type of the "
                f"target is {kind}: {type(self).__name__} trains a model of two "
                "classes"
            )
        classes = np.unique(y)
        if len(classes) < 2:
            raise InputError(f"y has one class ({classes[0]!r}); a classifier needs two")
        self.classes_ = classes
        return (y == classes[1]).astype(np.int8)

    def _keep_linear(self, w: np.ndarray) -> None:
        self.intercept_ = np.array([w[0]])
        self.coef_ = w[None, 1:].copy()

    def decision_function(self, X, *, sensitive_features=None) -> np.ndarray:
        """The model's score of each row; > 0 predicts `classes_[1]`."""
        return self._scores(X, sensitive_features)

    def predict(self, X, *, sensitive_features=None) -> np.ndarray:
        scores = self._scores(X, sensitive_features)
        return self.classes_[(scores > THRESHOLD).astype(np.int64)]

    def _has_probabilities(self) -> bool:
        """Whether the scores say how probable `classes_[1]` is (`ExportedModel.
        has_probabilities`); before fit, whether the objective is the logistic loss."""
        if hasattr(self, "exported_model_"):
            known = self.exported_model_.has_probabilities
            name = self.exported_model_.objective
        else:
            name = self.objective
            if name is None:
                with contextlib.suppress(UserError):
                    name = solver_card(self.solver).default_objective
            known = name == LogisticLoss.name
        if not known:
            raise AttributeError(
                f"the {name} objective gives scores, not probabilities; "
                "train with objective='logistic' for predict_proba"
            )
        return True

    @available_if(_has_probabilities)
    def predict_proba(self, X, *, sensitive_features=None) -> np.ndarray:
        """[P(classes_[0]), P(classes_[1])] of each row: the sigmoid of the score for the
        logistic loss, score + ½ for a randomised classifier (`ExportedModel.probabilities`)."""
        scores = self._scores(X, sensitive_features)  # checks that the model is fitted
        return self.exported_model_.probabilities(scores)

    def _classes_list(self) -> list:
        return self.classes_.tolist()

    def _score_metric(self, y, predictions, sample_weight) -> float:
        return accuracy_score(y, predictions, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class FairFrontRegressor(RegressorMixin, FairFrontEstimator):
    __doc__ = (
        """A regression trained by FairFront's solvers on the squared loss (ridge regression
    with `solver_options={"l2": ...}`). No constraint family is defined for a real-valued label
    yet, so the default trains without one by paper 002's badr-gd, which picks the group
    weights of the loss that minimise its unfairness measure (`solver_options={"measure":
    "dp"}`: the gap between the groups' mean predictions).
    """
        + PARAMETERS_DOC
    )

    _task = Task.REGRESSION
    score = FairFrontEstimator.score

    def __init__(
        self,
        *,
        solver: str = "badr_gd",
        constraint: str | None = None,
        kappa: float = 0.05,
        interval: tuple[float, float] = (0.0, 1.0),
        constraint_options: dict | None = None,
        model: str = "linear",
        cross_terms: bool = False,
        hidden: tuple[int, ...] = (64,),
        activation: str = "relu",
        objective: str | None = None,
        max_iter: int | None = None,
        max_seconds: float | None = DEFAULT_SECONDS,
        solver_options: dict | None = None,
        validation_fraction: float = 0.2,
        min_category_count: int = 5,
        hold_kappa: str | None = None,
        tune: bool = False,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        super().__init__(
            solver=solver,
            constraint=constraint,
            kappa=kappa,
            interval=interval,
            constraint_options=constraint_options,
            model=model,
            cross_terms=cross_terms,
            hidden=hidden,
            activation=activation,
            objective=objective,
            max_iter=max_iter,
            max_seconds=max_seconds,
            solver_options=solver_options,
            validation_fraction=validation_fraction,
            min_category_count=min_category_count,
            hold_kappa=hold_kappa,
            tune=tune,
            random_state=random_state,
        )

    def _encode_label(self, y: np.ndarray) -> np.ndarray:
        try:
            values = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("y must be numbers for a regression") from None
        assert_all_finite(values, input_name="y")  # text that reads as "nan" or "inf"
        return values

    def _keep_linear(self, w: np.ndarray) -> None:
        self.intercept_ = float(w[0])
        self.coef_ = w[1:].copy()

    def predict(self, X, *, sensitive_features=None) -> np.ndarray:
        return self._scores(X, sensitive_features)

    def _score_metric(self, y, predictions, sample_weight) -> float:
        return r2_score(y, predictions, sample_weight=sample_weight)


def history_frame(records: list[IterationRecord]) -> pd.DataFrame:
    """A run's records as a table, one row each (see `FairFrontEstimator.history_`)."""
    rows = [
        {
            "iteration": r.iteration,
            "seconds": r.seconds,
            "kind": r.kind,
            "objective": r.objective,
            "max_violation": r.max_violation,
            **r.values,
        }
        for r in records
    ]
    return pd.DataFrame(rows)
