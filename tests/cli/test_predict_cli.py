"""`run --save-model`, `runs export-model` and `predict`: a model trained on Adult scores the rows
of the bundled adult.test file, read as it is, exactly as the run scored its test split; bad
input is one line starting with "error:"."""

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_table import TABLE_FLAGS

from engine.cli import main
from engine.data.adult import ADULT_DIR, TEST_FILE, load_adult
from engine.runs import Store
from engine.runs.worker import execute_run

ROWS = 400  # of adult.test, after its first line ("|1x3 Cross validator")


@pytest.fixture(scope="module")
def adult_run(tmp_path_factory):
    """An Adult model saved by `run --save-model`, with the run's test scores (from --out)."""
    folder = tmp_path_factory.mktemp("adult")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRFRONT_CACHE", str(folder / "cache"))
        assert (
            main(
                [
                    "run",
                    "--data",
                    "adult",
                    "--attribute",
                    "sex",
                    "race",
                    "--grouping",
                    "all",
                    "binary",
                    "--cross-terms",
                    "--constraint",
                    "none",
                    "--solver",
                    "unconstrained",
                    "--iterations",
                    "40",
                    "--quiet",
                    "--out",
                    str(folder / "run.json"),
                    "--save-model",
                    str(folder / "model.npz"),
                ]
            )
            == 0
        )
    scores = json.loads((folder / "run.json").read_text())["result"]["test_scores"]
    return folder / "model.npz", np.array(scores)


@pytest.fixture(scope="module")
def adult_test_head(tmp_path_factory) -> str:
    """The first lines of the bundled adult.test, as the file has them (no header)."""
    with gzip.open(ADULT_DIR / TEST_FILE, "rt") as handle:
        lines = [next(handle) for _ in range(ROWS + 1)]
    assert lines[0].startswith("|1x3")
    path = tmp_path_factory.mktemp("rows") / "adult.test"
    path.write_text("".join(lines))
    return str(path)


def predicted(capsys, *args) -> tuple[pd.DataFrame, str]:
    assert main(["predict", *map(str, args)]) == 0
    printed = capsys.readouterr()
    return pd.read_csv(io.StringIO(printed.out)), printed.err


def test_the_adult_test_file_as_it_is_scores_as_the_run_scored_it(
    adult_run, adult_test_head, capsys
):
    model, test_scores = adult_run
    table, summary = predicted(capsys, model, adult_test_head)
    assert list(table.columns) == ["score", "prediction", "probability", "group"]
    assert len(table) == ROWS
    assert np.array_equal(table["score"].to_numpy(), test_scores[:ROWS])
    assert table["prediction"].tolist() == (test_scores[:ROWS] > 0).astype(int).tolist()
    assert np.allclose(table["probability"], 1 / (1 + np.exp(-test_scores[:ROWS])))
    assert set(table["group"]) <= {
        "Male × White",
        "Male × not White",
        "Female × White",
        "Female × not White",
    }
    assert summary.startswith(f"{ROWS} rows of adult.test scored (run ")
    assert "predicted income > $50K (1); by group: " in summary and "Traceback" not in summary


def test_a_csv_with_the_data_sets_column_names_scores_alike(adult_run, tmp_path, capsys):
    model, test_scores = adult_run
    data = load_adult()
    rows = data.frame[data.fixed_test].head(150)
    path = tmp_path / "people.csv"
    rows[list(reversed(rows.columns))].to_csv(path, index=False)  # any order, "?" as blank
    out = tmp_path / "predictions.csv"
    assert main(["predict", str(model), str(path), "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert np.array_equal(pd.read_csv(out)["score"].to_numpy(), test_scores[:150])


def test_columns_lists_what_the_model_reads(adult_run, capsys):
    assert main(["predict", str(adult_run[0]), "--columns"]) == 0
    out = capsys.readouterr().out
    assert "linear with group cross-terms model of income > $50K" in out
    assert "  sex  (category, protected)" in out and "  age  (number)" in out
    assert "groups: Female × White, Female × not White, Male × White, Male × not White" in out
    assert "also read: a file without a header with the columns age, workclass, " in out


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ("age,sex\n30,Male\n", "error: the table lacks the column(s) 'fnlwgt', 'education-num'"),
        (None, "error: CSV file not found"),
        ("", "error: rows.csv is empty"),
    ],
)
def test_a_table_that_cannot_be_scored_is_one_error_line(adult_run, tmp_path, capsys, table, said):
    path = tmp_path / "rows.csv"
    if table is not None:
        path.write_text(table)
    assert main(["predict", str(adult_run[0]), str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(said) and len(err.strip().splitlines()) == 1


def test_a_group_value_never_seen_is_named(adult_run, adult_test_head, tmp_path, capsys):
    text = Path(adult_test_head).read_text().replace(" Female,", " Unknown,", 1)
    (tmp_path / "rows.csv").write_text(text)
    assert main(["predict", str(adult_run[0]), str(tmp_path / "rows.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the protected column 'sex' has the value 'Unknown', never seen")


def test_a_changed_damaged_or_foreign_model_file_is_refused(
    adult_run, adult_test_head, tmp_path, capsys
):
    with np.load(adult_run[0], allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    document = json.loads(members["model.json"].tobytes())
    document["threshold"] = -1.0  # more people predicted positive
    members["model.json"] = np.frombuffer(json.dumps(document).encode(), dtype=np.uint8)
    np.savez(tmp_path / "changed.npz", **members)
    damaged = bytearray(adult_run[0].read_bytes())
    at = damaged.index(b'"threshold": 0.0')
    damaged[at : at + 16] = b'"threshold": 1.0'  # the archive's own check sees it first
    (tmp_path / "damaged.npz").write_bytes(bytes(damaged))
    for model, said in (
        (tmp_path / "changed.npz", "changed.npz has been changed or is damaged"),
        (tmp_path / "damaged.npz", "damaged.npz is damaged or incomplete"),
        (adult_test_head, "is not a FairFront model file"),
    ):
        assert main(["predict", str(model), adult_test_head]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and said in err and "Traceback" not in err


def test_the_model_of_a_stored_run_is_exported_and_checked_against_its_test_scores(
    tiny_csv, quiet_store, tmp_path, capsys
):
    assert (
        main(
            [
                "run",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--solver",
                "sgd",
                "--constraint",
                "none",
                "--model",
                "mlp",
                "--hidden",
                "6",
                "--iterations",
                "20",
                "--background",
            ]
        )
        == 0
    )
    run_id = capsys.readouterr().out.strip()
    path = tmp_path / "model.npz"
    assert main(["runs", "export-model", run_id, str(path)]) == 2  # still queued
    assert f"run {run_id} is queued: it has no model" in capsys.readouterr().err
    assert execute_run(str(quiet_store), run_id) == "budget"
    assert main(["runs", "export-model", run_id[:8], str(path)]) == 0
    assert f"model of run {run_id} written: {path}" in capsys.readouterr().err
    table, _ = predicted(capsys, path, tiny_csv)
    test_scores, _ = Store(quiet_store).load_scores(run_id)
    assert len(table) == len(pd.read_csv(tiny_csv))
    assert np.isin(test_scores, table["score"].to_numpy()).all()  # the test rows among all rows
    scores = Store(quiet_store).artifacts(run_id) / "scores.npz"
    np.savez(scores, test_scores=test_scores + 0.01, test_groups=np.zeros(len(test_scores)))
    assert main(["runs", "export-model", run_id, str(path)]) == 2
    assert "has changed since it ran" in capsys.readouterr().err


def test_save_model_needs_a_run_made_here(tiny_csv, quiet_store, tmp_path, capsys):
    assert (
        main(
            [
                "run",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--background",
                "--save-model",
                str(tmp_path / "m.npz"),
            ]
        )
        == 2
    )
    assert "runs export-model RUN_ID PATH" in capsys.readouterr().err


def test_a_post_processed_runs_model_keeps_its_group_wise_map(tiny_csv, tmp_path, capsys):
    """paper 004's post-processing: the model's scores, then ω1·h + ω2 per group."""
    model, out = tmp_path / "model.npz", tmp_path / "run.json"
    assert (
        main(
            [
                "run",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--constraint",
                "auc_gap",
                "--solver",
                "auc_postprocess",
                "--iterations",
                "50",
                "--quiet",
                "--out",
                str(out),
                "--save-model",
                str(model),
            ]
        )
        == 0
    )
    capsys.readouterr()
    with np.load(model, allow_pickle=False) as archive:
        assert {"param.post.scale", "param.post.shift"} <= set(archive.files)
    table, _ = predicted(capsys, model, tiny_csv)
    test_scores = np.array(json.loads(out.read_text())["result"]["test_scores"])
    assert np.isin(test_scores, table["score"].to_numpy()).all()
