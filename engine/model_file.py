"""Exported models: a trained model with everything that turns raw rows into its scores (the
encoder's categories and standardisation, the map from protected values to groups, the group
cross-terms), in one small file that is safe to load.

The file is an .npz archive written by `numpy.savez`: the parameter arrays ("param.<name>") and
one JSON document ("model.json", as UTF-8 bytes). It is read with `allow_pickle=False`, so no
code runs on loading, and every field of the document is checked: its format and version, the
types of its fields, the parameters against the model, and a SHA-256 checksum over the document
and the parameters, so that a changed or damaged file is refused with a sentence.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine import json_fields as fields
from engine.data.encoding import CategoricalColumn, Encoder, NumericColumn
from engine.data.file_layout import FileLayout
from engine.data.group_map import GroupMap
from engine.data.prepared import Prepared
from engine.errors import UserError
from engine.model_forms import FORMS, form_of
from engine.models import ModelSpec, Params
from engine.numerics import sigmoid
from engine.objectives import OBJECTIVE_TYPES, LogisticLoss
from engine.scoring import Rows, model_network, model_scores
from engine.task import Task

FORMAT = "fairfront-model"
VERSION = 1
DOCUMENT = "model.json"
PARAM = "param."  # the archive's name of parameter "w" is "param.w"


@dataclass(frozen=True, eq=False)
class ExportedModel:
    """A model and its preprocessing: `scores` of raw rows (a DataFrame with the columns of
    `columns`), `predict` (a class of `classes`: the second when the score is above `threshold`;
    for a real-valued label, the score itself) and, for the logistic loss, `predict_proba`.
    `about` says where the model comes from (JSON-able: run id, data, solver, constraint,
    verdict, test metrics)."""

    model: ModelSpec
    params: Params
    encoder: Encoder
    group_map: GroupMap | None
    group_names: tuple[str, ...]
    task: Task
    objective: str
    threshold: float
    classes: tuple = (0, 1)
    label_name: str = "label"
    about: dict = field(default_factory=dict)
    layout: FileLayout = field(default_factory=FileLayout)  # how its data's own files read

    @property
    def columns(self) -> tuple[str, ...]:
        """The raw columns the model reads: its features, then the protected column(s)."""
        features = [c.name for c in self.encoder.numeric] + [
            c.name for c in self.encoder.categorical
        ]
        protected = list(self.group_map.columns) if self.group_map is not None else []
        return tuple(dict.fromkeys(features + protected))

    def groups(self, frame: pd.DataFrame) -> np.ndarray:
        """Each row's group id (into `group_names`)."""
        return self._groups_of(self._inputs(frame))

    def scores(self, frame: pd.DataFrame) -> np.ndarray:
        """The model's score of each row (engine.scoring, as in training)."""
        return self.scores_and_groups(frame)[0]

    def scores_and_groups(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Each row's score and group id, from one pass over the columns."""
        inputs = self._inputs(frame)
        groups = self._groups_of(inputs)
        rows = Rows(
            self.encoder.transform(inputs), groups, len(self.group_names), self.model.cross_terms
        )
        return model_scores(self.model, self.params, rows), groups

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """A class of `classes` per row (the second where the score is above `threshold`), or
        the predicted value of a real-valued label."""
        return self.predictions(self.scores(frame))

    def predictions(self, scores: np.ndarray) -> np.ndarray:
        """`predict` from scores already computed."""
        if self.task is Task.REGRESSION:
            return scores
        return np.where(scores > self.threshold, self.classes[1], self.classes[0])

    @property
    def has_probabilities(self) -> bool:
        """Whether the scores say how probable the second class is: log-odds for the logistic
        loss, P − ½ for a randomised classifier (`engine.model_forms`)."""
        return form_of(self.params).randomised or (
            self.task is Task.CLASSIFICATION and self.objective == LogisticLoss.name
        )

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray | None:
        """The probability of each class of `classes` (n × 2, as scikit-learn gives it) where the
        scores say it (`has_probabilities`): σ(score) of the second class for the logistic
        loss, score + ½ for a randomised classifier; None for any other model."""
        if not self.has_probabilities:
            return None
        return self.probabilities(self.scores(frame))

    def probabilities(self, scores: np.ndarray) -> np.ndarray | None:
        """`predict_proba` from scores already computed."""
        if not self.has_probabilities:
            return None
        if form_of(self.params).randomised:
            positive = np.clip(scores + 0.5, 0.0, 1.0)
            return np.column_stack([1.0 - positive, positive])
        return np.column_stack([sigmoid(-scores), sigmoid(scores)])

    def _groups_of(self, inputs: pd.DataFrame) -> np.ndarray:
        if self.group_map is not None:
            return self.group_map.ids(inputs)
        if len(self.group_names) > 1:
            raise UserError(
                "this model has several groups but no map from the protected columns to them"
            )
        return np.zeros(len(inputs), dtype=np.int64)

    def _inputs(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The columns the model reads under its own names (a column is found without regard
        to case), text stripped of surrounding spaces as it was in training."""
        by_lower = {str(c).lower(): c for c in frame.columns}
        found = {
            name: name if name in frame.columns else by_lower.get(name.lower())
            for name in self.columns
        }
        missing = [name for name, column in found.items() if column is None]
        if missing:
            raise UserError(
                f"the table lacks the column(s) {', '.join(map(repr, missing))} that "
                f"the model reads; it needs {', '.join(self.columns)}"
            )
        inputs = pd.DataFrame(
            {name: frame[column] for name, column in found.items()}, index=frame.index
        )
        for name in inputs.columns:
            if not pd.api.types.is_numeric_dtype(inputs[name]):
                text = inputs[name].astype("string").str.strip()
                inputs[name] = text.mask(text == "")
        return inputs


def from_prepared(
    prepared: Prepared,
    model: ModelSpec,
    params: Params,
    objective: str,
    threshold: float = 0.0,
    about: Mapping[str, Any] | None = None,
    layout: FileLayout | None = None,
) -> ExportedModel:
    """The exported model of `params`, trained as `model` on `prepared` data."""
    if prepared.n_features != len(prepared.encoder.feature_names):
        raise UserError(
            "this data was prepared with the group cross-terms among its features; "
            "a model is exported from data prepared without them (the model adds "
            "them itself)"
        )
    if prepared.group_map is None:
        raise UserError(
            "this prepared data has no map from protected values to groups; "
            "prepare it again to export a model of it"
        )
    exported = ExportedModel(
        model=model,
        params={name: np.array(value, dtype=np.float64) for name, value in params.items()},
        encoder=prepared.encoder,
        group_map=prepared.group_map,
        group_names=prepared.group_names,
        task=prepared.task,
        objective=objective,
        threshold=float(threshold),
        label_name=prepared.label_name,
        about=json.loads(json.dumps(dict(about or {}))),  # a copy, and JSON-able or refused
        layout=layout or FileLayout(),
    )
    _check_params(exported)
    return exported


# ---- the file -----------------------------------------------------------------------------


def model_bytes(model: ExportedModel) -> bytes:
    """The model file's contents."""
    _check_params(model)
    arrays = _arrays(model)
    document = _document(model)
    document["checksum"] = _checksum(document, arrays)
    text = json.dumps(document, indent=1, ensure_ascii=False)
    buffer = io.BytesIO()
    np.savez(buffer, **{DOCUMENT: np.frombuffer(text.encode(), dtype=np.uint8)}, **arrays)
    return buffer.getvalue()


def model_checksum(model: ExportedModel) -> str:
    """The SHA-256 checksum that the model's file carries (`model_bytes`), without writing it:
    what a decision record names the model by."""
    return _checksum(_document(model), _arrays(model))


def save_model(model: ExportedModel, path: str | Path) -> None:
    """Write the model file at `path` (whole or not at all)."""
    path = Path(path)
    content = model_bytes(model)
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        partial.write_bytes(content)
        partial.replace(path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {error.strerror or error}") from None


def load_model(path: str | Path) -> ExportedModel:
    """The model in a file written by `save_model`; anything else is refused with a sentence."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"model file not found: {path}")
    try:
        content = path.read_bytes()
    except OSError as error:
        raise UserError(f"{path.name} could not be read: {error.strerror or error}") from None
    return read_model(content, path.name)


def read_model(content: bytes, shown: str = "the model file") -> ExportedModel:
    """The model in the bytes of a model file (`model_bytes`), named `shown` in messages."""
    if not content.startswith(b"PK\x03\x04"):
        raise UserError(f"{shown} is not a FairFront model file (it is not an .npz archive)")
    document, arrays = _read_archive(content, shown)
    if document.get("format") != FORMAT:
        raise UserError(f"{shown} is not a FairFront model file (its document is not a model's)")
    version = fields.entry(document, "version", int, shown)
    if version != VERSION:
        raise UserError(
            f"{shown} is a FairFront model file of format version {version}; this "
            f"FairFront reads version {VERSION}"
        )
    recorded = fields.entry(document, "checksum", str, shown)
    content_document = {k: v for k, v in document.items() if k != "checksum"}
    if recorded != _checksum(content_document, arrays):
        raise UserError(
            f"{shown} has been changed or is damaged: its checksum does not match its contents"
        )
    try:
        model = _model_from(document, arrays, shown)
        _check_params(model)
    except UserError as error:
        raise UserError(f"{shown} is not a valid FairFront model: {error}") from None
    return model


def _read_archive(content: bytes, shown: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The JSON document and the parameter arrays of an .npz archive, read without pickle."""
    damaged = f"{shown} is damaged or incomplete"
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as archive:
            names = list(archive.files)
            if DOCUMENT not in names:
                raise UserError(f"{shown} is not a FairFront model file (it holds no {DOCUMENT})")
            members = {name: archive[name] for name in names}
    except UserError:
        raise
    except ValueError as error:
        if "pickle" in str(error).lower() or "object arrays" in str(error).lower():
            raise UserError(
                f"{shown} holds Python objects (pickled data), which are never "
                "loaded: it is not a FairFront model file"
            ) from None
        raise UserError(f"{damaged} ({error})") from None
    except (zipfile.BadZipFile, EOFError, OSError, KeyError) as error:
        raise UserError(f"{damaged} ({type(error).__name__}: {error})") from None
    raw = members.pop(DOCUMENT)
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise UserError(f"{shown} is not a FairFront model file (its {DOCUMENT} is not text)")
    try:
        document = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UserError(f"{damaged}: its {DOCUMENT} is not JSON ({error})") from None
    fields.mapping(document, f"the {DOCUMENT} of {shown}")
    arrays = {}
    for name, array in members.items():
        if not name.startswith(PARAM):
            raise UserError(f"{shown} holds '{name}', which a FairFront model file does not")
        if array.dtype != np.float64:
            raise UserError(f"{shown}: parameter '{name[len(PARAM) :]}' is not float64 numbers")
        arrays[name] = array
    return document, arrays


def _checksum(document: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> str:
    """SHA-256 of the document (canonical JSON) and of every array's name, shape and bytes."""
    digest = hashlib.sha256(
        json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    )
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name], dtype="<f8")
        digest.update(f"\n{name}{array.shape}\n".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def _arrays(model: ExportedModel) -> dict[str, np.ndarray]:
    """The parameter arrays as the file holds them ("param.<name>", float64)."""
    return {
        PARAM + name: np.ascontiguousarray(value, dtype=np.float64)
        for name, value in model.params.items()
    }


def _document(model: ExportedModel) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": dataclasses.asdict(model.model) | {"hidden": list(model.model.hidden)},
        "params": sorted(model.params),
        "encoder": model.encoder.to_dict(),
        "group_map": None if model.group_map is None else model.group_map.to_dict(),
        "group_names": list(model.group_names),
        "task": str(model.task),
        "objective": model.objective,
        "threshold": model.threshold,
        "classes": list(model.classes),
        "label_name": model.label_name,
        "columns": list(model.columns),
        "layout": model.layout.to_dict(),
        "about": model.about,
    }


def _model_from(
    document: Mapping[str, Any], arrays: Mapping[str, np.ndarray], shown: str
) -> ExportedModel:
    what = f"the document of {shown}"
    names = fields.texts(document, "params", what)
    stored = sorted(name[len(PARAM) :] for name in arrays)
    if sorted(names) != stored:
        raise UserError(
            f"its parameters are {', '.join(stored) or 'none'}, but its document "
            f"names {', '.join(names) or 'none'}"
        )
    task_text = fields.entry(document, "task", str, what)
    if task_text not in {str(t) for t in Task}:
        raise UserError(f"its task '{task_text}' is unknown")
    objective = fields.entry(document, "objective", str, what)
    if objective not in OBJECTIVE_TYPES:
        raise UserError(f"its objective '{objective}' is unknown")
    classes = tuple(fields.entry(document, "classes", list, what))
    if (
        len(classes) != 2
        or len(set(classes)) != 2
        or not all(isinstance(c, str | int | float) for c in classes)
    ):
        raise UserError("its classes are not two distinct values")
    group_map = document.get("group_map")
    model = ExportedModel(
        model=_model_spec(fields.mapping(fields.entry(document, "model", dict, what), "its model")),
        params={name[len(PARAM) :]: array for name, array in arrays.items()},
        encoder=_encoder(
            fields.mapping(fields.entry(document, "encoder", dict, what), "its encoder")
        ),
        group_map=None if group_map is None else GroupMap.from_dict(group_map),
        group_names=fields.texts(document, "group_names", what),
        task=Task(task_text),
        objective=objective,
        threshold=fields.number(document, "threshold", what),
        classes=classes,
        label_name=fields.entry(document, "label_name", str, what),
        about=dict(fields.mapping(fields.entry(document, "about", dict, what), "its provenance")),
        layout=FileLayout.from_dict(fields.entry(document, "layout", dict, what)),
    )
    if model.group_map is not None and model.group_map.names != model.group_names:
        raise UserError("its group map names other groups than the model")
    if fields.texts(document, "columns", what) != model.columns:
        raise UserError("its list of columns is not the one its encoder and group map read")
    return model


def _model_spec(data: Mapping[str, Any]) -> ModelSpec:
    what = "its model"
    hidden = fields.entry(data, "hidden", list, what)
    if not all(isinstance(h, int) and not isinstance(h, bool) for h in hidden):
        raise UserError("its hidden layer widths are not whole numbers")
    return ModelSpec(
        kind=fields.entry(data, "kind", str, what),
        cross_terms=fields.entry(data, "cross_terms", bool, what),
        hidden=tuple(hidden),
        activation=fields.entry(data, "activation", str, what),
    )


def _encoder(data: Mapping[str, Any]) -> Encoder:
    numeric = []
    for column in fields.entry(data, "numeric", list, "its encoder"):
        column = fields.mapping(column, "a numeric column of its encoder")
        std = fields.number(column, "std", "a numeric column")
        if std <= 0:
            raise UserError("a numeric column of its encoder has a spread of 0 or less")
        numeric.append(
            NumericColumn(
                fields.entry(column, "name", str, "a numeric column"),
                fields.number(column, "mean", "a numeric column"),
                std,
            )
        )
    categorical = []
    for column in fields.entry(data, "categorical", list, "its encoder"):
        column = fields.mapping(column, "a categorical column of its encoder")
        what = "a categorical column"
        categories, labels = (
            fields.texts(column, "categories", what),
            fields.texts(column, "labels", what),
        )
        if len(categories) != len(labels) or len(set(categories)) != len(categories):
            raise UserError("a categorical column of its encoder has mismatched categories")
        categorical.append(
            CategoricalColumn(fields.entry(column, "name", str, what), categories, labels)
        )
    return Encoder(tuple(numeric), tuple(categorical))


def _check_params(model: ExportedModel) -> None:
    """The parameters fit the model: the network's weights and the keys of the model forms
    (`engine.model_forms`) that the groups size have the shapes the encoder's features and the
    groups give, every value is a number (a threshold may be infinite), and one row of each
    group scores to a finite number."""
    n_groups = len(model.group_names)
    if n_groups < 1:
        raise UserError("the model has no groups")
    width = len(model.encoder.feature_names)
    rows = Rows(np.zeros((n_groups, width)), np.arange(n_groups), n_groups, model.model.cross_terms)
    shapes = {slot.name: slot.shape for slot in model_network(model.model, rows).slots}
    for form in FORMS:
        shapes |= form.shapes(n_groups)
    for name, value in model.params.items():
        value = np.asarray(value)
        if name in shapes and value.shape != shapes[name]:
            raise UserError(
                f"parameter '{name}' has shape {value.shape}, but the model with "
                f"{width} features and {n_groups} groups needs {shapes[name]}"
            )
        if not np.issubdtype(value.dtype, np.number) or np.isnan(value).any():
            raise UserError(f"parameter '{name}' holds values that are not numbers")
    try:
        scores = model_scores(model.model, model.params, rows)
    except (KeyError, ValueError, IndexError, TypeError) as error:
        raise UserError(
            f"the parameters do not fit the model ({type(error).__name__}: {error})"
        ) from None
    if scores.shape != (n_groups,) or not all(math.isfinite(s) for s in scores):
        raise UserError("the parameters do not give one finite score per row")
