"""`python -m engine predict MODEL CSV`: an exported model applied to the rows of a new table."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from engine.cli.output import write_output
from engine.data.file_layout import read_rows
from engine.errors import UserError
from engine.model_file import ExportedModel, load_model
from engine.task import Task

DESCRIPTION = """\
Apply a model exported by `python -m engine run --save-model`, `python -m engine runs
export-model` or the Runs page to the rows of a CSV file. The file needs the columns the model
was trained on (its features and protected columns; list them with --columns), named as in
the training data, in any order; other columns are ignored. A file laid out as the training
data's works as it is: the CSV the model was trained on, ACS PUMS person files, Adult's
adult.data or adult.test (no header, "?" for a missing value). For the classic data sets, the
columns are those FairFront reads (German credit's sex and age_group, for one, are derived
from personal_status and age). The model's encoding, standardisation, protected groups and
group cross-terms are applied as in training.

Writes one row per input row, in the input's order: score, prediction (a class of the label,
or the predicted value of a real-valued label), probability (of the positive class, for a
model of the logistic loss or a randomised classifier) and group. A one-paragraph summary
goes to stderr."""


def register(commands: argparse._SubParsersAction) -> None:
    predict = commands.add_parser(
        "predict",
        help="apply an exported model to the rows of a CSV file",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    predict.add_argument("model", type=Path, metavar="MODEL", help="the model file (.npz)")
    predict.add_argument("csv", type=Path, nargs="?", metavar="CSV", help="the rows to score")
    predict.add_argument(
        "--out", type=Path, metavar="OUT.csv", help="write the predictions here (default: stdout)"
    )
    predict.add_argument(
        "--columns",
        action="store_true",
        help="list the columns the model needs, and where it comes from, instead of predicting",
    )
    predict.set_defaults(handler=predict_command)


def predict_command(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    if args.columns:
        print(describe_model(model))
        return 0
    if args.csv is None:
        raise UserError(
            "give the CSV file whose rows to score (or --columns to list the "
            "columns the model needs)"
        )
    frame = read_rows(args.csv, model.columns, model.layout)
    table = prediction_table(model, frame)
    text = table.to_csv(index=False)
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_output(args.out, text)
    print(summary(model, table, args.csv.name), file=sys.stderr)
    return 0


def prediction_table(model: ExportedModel, frame: pd.DataFrame) -> pd.DataFrame:
    """Per row of `frame`, in its order: score, prediction, probability (logistic loss only)
    and group name."""
    scores, groups = model.scores_and_groups(frame)
    table = pd.DataFrame({"score": scores, "prediction": model.predictions(scores)})
    probabilities = model.probabilities(scores)
    if probabilities is not None:
        table["probability"] = probabilities[:, 1]
    table["group"] = np.asarray(model.group_names, dtype=object)[groups]
    return table


def summary(model: ExportedModel, table: pd.DataFrame, shown: str) -> str:
    """How many rows were scored and, per group, the share predicted positive (the mean
    prediction for a real-valued label)."""
    present = [g for g in model.group_names if g in set(table["group"])]
    by_group = table.groupby("group")["prediction"]
    if model.task is Task.CLASSIFICATION:
        positive = model.classes[1]
        overall = (table["prediction"] == positive).mean() if len(table) else float("nan")
        shares = by_group.apply(lambda p: (p == positive).mean()).reindex(present)
        said = f"{overall:.1%} predicted {model.label_name} ({positive}); by group: " + ", ".join(
            f"{g} {s:.1%}" for g, s in shares.items()
        )
    else:
        means = by_group.mean().reindex(present)
        said = (
            f"mean prediction of {model.label_name} {table['prediction'].mean():.4g}; by "
            "group: " + ", ".join(f"{g} {m:.4g}" for g, m in means.items())
        )
    counts = table["group"].value_counts()
    sizes = ", ".join(f"{g} {counts.get(g, 0):,}" for g in model.group_names)
    return (
        f"{len(table):,} rows of {shown} scored{_origin(model)}: {said} (rows per group: {sizes})."
    )


def describe_model(model: ExportedModel) -> str:
    """The model, where it comes from, and the columns it needs, one per line."""
    out = io.StringIO()
    about = model.about
    shape = (
        f"MLP {'-'.join(map(str, model.model.hidden))}"
        if model.model.kind == "mlp"
        else "linear" + (" with group cross-terms" if model.model.cross_terms else "")
    )
    out.write(
        f"{shape} model of {model.label_name} ({model.task}, {model.objective} loss)"
        f"{_origin(model)}\n"
    )
    if about.get("verdict"):
        out.write(f"verdict: {about['verdict']}\n")
        out.writelines(f"  - {finding}\n" for finding in about.get("verdict_findings", ()))
    out.write(f"groups: {', '.join(model.group_names)}\n")
    out.write("columns:\n")
    kinds = {c.name: "number" for c in model.encoder.numeric}
    kinds |= {c.name: "category" for c in model.encoder.categorical}
    protected = set(model.group_map.columns) if model.group_map is not None else set()
    for name in model.columns:
        role = [kinds[name]] if name in kinds else []
        role += ["protected"] if name in protected else []
        out.write(f"  {name}  ({', '.join(role)})\n")
    if described := model.layout.describe(model.columns):
        out.write(f"also read: {described}\n")
    return out.getvalue().rstrip("\n")


def _origin(model: ExportedModel) -> str:
    """ " (run <id>: <solver> on <data set>)" when the model knows where it comes from."""
    about = model.about
    if not about.get("run"):
        return ""
    return f" (run {about['run']}: {about.get('solver', '?')} on {about.get('dataset', '?')})"
