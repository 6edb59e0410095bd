"""Exported models: saved and loaded, they score raw rows exactly as training scored the prepared
ones; a file that is not one, or has been changed, is refused with a sentence."""

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from engine import model_file
from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.errors import UserError
from engine.model_file import ExportedModel, from_prepared, load_model, read_model, save_model
from engine.model_forms import MIXTURE_Q, MIXTURE_W, POST_SCALE, POST_SHIFT
from engine.models import ModelSpec
from engine.problem import Problem
from engine.task import Task

N = 900


@pytest.fixture(scope="module")
def raw() -> Dataset:
    """Numbers with gaps, categories with a rare value and value labels, an age, and a published
    test split (the last third), so the test split's raw rows are known."""
    rng = np.random.default_rng(3)
    age = rng.integers(18, 80, N).astype(float)
    age[::37] = np.nan
    frame = pd.DataFrame(
        {
            "age": age,
            "hours": rng.normal(40, 10, N),
            "job": rng.choice(["clerk", "nurse", "driver", "rare"], N, p=[0.4, 0.35, 0.249, 0.001]),
            "SEX": rng.integers(1, 3, N),
            "race": rng.choice(["A", "B", "C"], N, p=[0.6, 0.3, 0.1]),
        }
    )
    logit = 0.03 * (np.nan_to_num(age, nan=40) - 40) + (frame["job"] == "nurse") - 0.5
    fixed = np.arange(N) >= 2 * N // 3
    return Dataset(
        name="toy",
        frame=frame,
        label=(rng.random(N) < 1 / (1 + np.exp(-logit))).astype(np.int8),
        numeric=("age", "hours"),
        categorical=("job", "SEX", "race"),
        protected=("SEX", "race", "age"),
        label_name="y",
        value_labels={"SEX": {1: "Male", 2: "Female"}},
        fixed_test=fixed,
    )


@pytest.fixture(scope="module")
def prepared(raw):
    grouping = (GroupingSpec("SEX"), GroupingSpec("race", "top-k", k=2))
    return prepare(raw, PrepareOptions(grouping=grouping, min_group_size=20))


def random_params(problem: Problem, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {k: rng.normal(size=v.shape) for k, v in problem.init_params(seed).items()}


MODELS = {
    "linear": ModelSpec(),
    "linear with cross-terms": ModelSpec(cross_terms=True),
    "MLP": ModelSpec(kind="mlp", hidden=(8, 4), activation="sigmoid"),
}


def saved_and_loaded(model: ExportedModel, tmp_path) -> ExportedModel:
    path = tmp_path / "model.npz"
    save_model(model, path)
    return load_model(path)


@pytest.mark.parametrize("kind", [*MODELS, "post-processed"])
def test_a_saved_and_loaded_model_scores_the_raw_test_rows_as_training_did(
    kind, raw, prepared, tmp_path
):
    problem = Problem(prepared, MODELS.get(kind, ModelSpec(cross_terms=True)), None)
    params = random_params(problem)
    if kind == "post-processed":  # paper 004's group-wise ω1·h + ω2 after the model
        params |= {
            POST_SCALE: np.linspace(0.5, 2, prepared.n_groups),
            POST_SHIFT: np.linspace(-1, 1, prepared.n_groups),
        }
    exported = from_prepared(
        prepared, problem.model, params, "logistic", threshold=0.25, about={"run": "abc"}
    )
    loaded = saved_and_loaded(exported, tmp_path)
    test_rows = raw.frame[raw.fixed_test]
    expected = problem.scores(params, "test")
    assert np.array_equal(loaded.scores(test_rows), expected)
    assert np.array_equal(loaded.groups(test_rows), prepared.test.groups)
    assert np.array_equal(loaded.predict(test_rows), (expected > 0.25).astype(int))
    probabilities = loaded.predict_proba(test_rows)
    assert probabilities.shape == (len(test_rows), 2)
    assert np.allclose(probabilities[:, 1], 1 / (1 + np.exp(-expected)))
    assert loaded.about == {"run": "abc"} and loaded.group_names == prepared.group_names


def test_a_randomised_classifier_keeps_its_vote_and_gives_its_probabilities(
    raw, prepared, tmp_path
):
    """A mixture of linear classifiers (fairlearn's ExponentiatedGradient) scores P − ½."""
    problem = Problem(prepared, ModelSpec(), None)
    rng = np.random.default_rng(1)
    params = {
        MIXTURE_W: rng.normal(size=(3, problem.design().shape[1])),
        MIXTURE_Q: np.array([0.5, 0.3, 0.2]),
    }
    loaded = saved_and_loaded(from_prepared(prepared, problem.model, params, "logistic"), tmp_path)
    test_rows = raw.frame[raw.fixed_test]
    expected = problem.scores(params, "test")
    assert np.array_equal(loaded.scores(test_rows), expected)
    assert np.allclose(loaded.predict_proba(test_rows)[:, 1], expected + 0.5)


def test_the_same_rows_score_alike_however_the_table_spells_them(raw, prepared):
    problem = Problem(prepared, ModelSpec(cross_terms=True), None)
    exported = from_prepared(prepared, problem.model, random_params(problem), "logistic")
    rows = raw.frame[raw.fixed_test].head(50)
    respelled = rows.rename(columns=str.upper).assign(
        JOB=" " + rows["job"] + " ", SEX=rows["SEX"].astype(str), AGE=rows["age"].astype(str)
    )[list(reversed(rows.columns.str.upper()))]
    assert np.array_equal(exported.scores(respelled), exported.scores(rows))


def test_predictions_follow_the_classes_the_task_and_the_objective(raw, prepared):
    problem = Problem(prepared, ModelSpec(), None)
    params = random_params(problem)
    rows = raw.frame.head(30)
    hinge = from_prepared(prepared, problem.model, params, "squared_hinge")
    hinge = ExportedModel(**{**hinge.__dict__, "classes": ("no", "yes")})
    scores = hinge.scores(rows)
    assert hinge.predict_proba(rows) is None
    assert hinge.predict(rows).tolist() == np.where(scores > 0, "yes", "no").tolist()
    regression = ExportedModel(
        **{**hinge.__dict__, "task": Task.REGRESSION, "objective": "squared"}
    )
    assert np.array_equal(regression.predict(rows), scores)


def test_missing_columns_are_listed(raw, prepared):
    problem = Problem(prepared, ModelSpec(), None)
    exported = from_prepared(prepared, problem.model, random_params(problem), "logistic")
    with pytest.raises(UserError, match=r"lacks the column\(s\) 'hours', 'race' that the model"):
        exported.scores(raw.frame.drop(columns=["hours", "race"]))


def test_parameters_that_do_not_fit_the_model_are_refused(prepared):
    with pytest.raises(UserError, match="parameter 'w' has shape \\(3,\\)"):
        from_prepared(prepared, ModelSpec(), {"w": np.zeros(3)}, "logistic")
    with pytest.raises(UserError, match="parameters do not fit the model"):
        from_prepared(prepared, ModelSpec(), {}, "logistic")


# ---- damaged, changed and foreign files ---------------------------------------------------


@pytest.fixture(scope="module")
def content(prepared) -> bytes:
    problem = Problem(prepared, ModelSpec(cross_terms=True), None)
    exported = from_prepared(prepared, problem.model, random_params(problem), "logistic")
    return model_file.model_bytes(exported)


def members(content: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(content), allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def rewritten(content: bytes, change, checksum: bool = False) -> bytes:
    """The file with its document changed by `change`, its checksum made to match if asked."""
    arrays = members(content)
    document = json.loads(arrays.pop(model_file.DOCUMENT).tobytes())
    change(document)
    if checksum:
        document.pop("checksum")
        document["checksum"] = model_file._checksum(document, arrays)
    buffer = io.BytesIO()
    text = np.frombuffer(json.dumps(document).encode(), dtype=np.uint8)
    np.savez(buffer, **{model_file.DOCUMENT: text}, **arrays)
    return buffer.getvalue()


def test_a_file_loads_the_same_model_from_its_bytes(content):
    again = model_file.model_bytes(read_model(content))
    assert members(again).keys() == members(content).keys()
    for name, array in members(content).items():
        assert np.array_equal(members(again)[name], array)


def test_a_changed_document_or_parameter_fails_the_checksum(content):
    more_positive = rewritten(content, lambda d: d.update(threshold=-1.0))
    with pytest.raises(UserError, match="has been changed or is damaged: its checksum"):
        read_model(more_positive, "model.npz")
    arrays = members(content)
    arrays["param.w"] = arrays["param.w"] + 1e-12
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with pytest.raises(UserError, match="checksum does not match"):
        read_model(buffer.getvalue())


def test_a_document_of_another_format_or_version_is_refused(content):
    with pytest.raises(
        UserError,
        match="is a FairFront model file of format version 2; this FairFront reads version 1",
    ):
        read_model(rewritten(content, lambda d: d.update(version=2), checksum=True), "m.npz")
    with pytest.raises(UserError, match="m.npz is not a FairFront model file"):
        read_model(rewritten(content, lambda d: d.update(format="other"), checksum=True), "m.npz")


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            lambda d: d.update(threshold="high"),
            "'threshold' of the document of m.npz is not a number",
        ),
        (lambda d: d["model"].update(kind="forest"), "model must be 'linear' or 'mlp'"),
        (lambda d: d["encoder"]["numeric"][0].update(std=0), "spread of 0"),
        (lambda d: d.update(columns=["age"]), "list of columns is not the one"),
        (lambda d: d.update(params=["w", "extra"]), "its parameters are w, but its document names"),
        (lambda d: d["model"].update(cross_terms=False), "parameter 'w' has shape"),
        (lambda d: d["group_map"].update(names=["x"]), "group id outside its 1 groups"),
        (lambda d: d.update(classes=[1, 1]), "classes are not two distinct values"),
    ],
)
def test_a_document_whose_fields_are_wrong_is_refused(content, change, said):
    with pytest.raises(UserError, match=f"m.npz is not a valid FairFront model: .*{said}"):
        read_model(rewritten(content, change, checksum=True), "m.npz")


def test_pickled_objects_are_never_loaded(content):
    arrays = members(content)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays | {"param.w": np.array([{"code": "run me"}], dtype=object)})
    with pytest.raises(UserError, match="holds Python objects \\(pickled data\\), which are never"):
        read_model(buffer.getvalue(), "m.npz")


def test_other_files_are_not_model_files(content, tmp_path):
    with pytest.raises(UserError, match="m.npz is not a FairFront model file \\(it is not an .npz"):
        read_model(b"age,sex\n1,2\n", "m.npz")
    buffer = io.BytesIO()
    np.savez(buffer, w=np.zeros(3))
    with pytest.raises(UserError, match="holds no model.json"):
        read_model(buffer.getvalue(), "m.npz")
    with pytest.raises(UserError, match="model file not found"):
        load_model(tmp_path / "absent.npz")


@pytest.mark.parametrize("keep", [0.3, 0.9])
def test_a_truncated_file_is_refused(content, keep):
    with pytest.raises(UserError, match="m.npz is damaged or incomplete"):
        read_model(content[: int(len(content) * keep)], "m.npz")


def test_a_flipped_byte_is_refused(content):
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        info = archive.getinfo("param.w.npy")
    flipped = bytearray(content)
    flipped[info.header_offset + 30 + len(info.filename) + 200] ^= 0xFF  # inside the stored array
    with pytest.raises(UserError, match="m.npz (is damaged or incomplete|has been changed)"):
        read_model(bytes(flipped), "m.npz")
