"""Columns that alone predict the label are reported, in the summary and on the command line."""

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from engine.cli import main
from engine.data.adult import AdultSpec
from engine.data.csv_source import CSVSpec
from engine.data.encoding import fit_encoder
from engine.data.grouping import GroupingSpec
from engine.data.leakage import LEAK_AUC, column_aucs
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared


def leaky_table(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    flipped = np.where(rng.random(n) < 0.005, 1 - y, y)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "hours": rng.normal(40, 8, n) + 3 * y,  # a real, weak predictor
            "score": y + rng.normal(0, 0.01, n),  # a copy of the label plus noise
            "verdict": np.where(flipped == 1, "granted", "refused"),  # a spelled-out copy
            "sex": rng.choice(["F", "M"], n),
            "y": y,
        }
    )


def test_a_copied_label_is_reported_by_column(tmp_path):
    path = tmp_path / "loans.csv"
    leaky_table().to_csv(path, index=False)
    prepared = load_prepared(
        CSVSpec(str(path), "y", ("sex",)), PrepareOptions(grouping=(GroupingSpec("sex"),))
    )
    leaks = [w for w in prepared.summary()["warnings"] if "alone predicts the label" in w]
    assert leaks == [
        "column 'score' alone predicts the label (AUC 1.00): it may leak the answer",
        "column 'verdict' alone predicts the label (AUC 0.99): it may leak the answer",
    ]


def test_the_command_line_shows_the_leak(tmp_path, capsys):
    path = tmp_path / "loans.csv"
    leaky_table().to_csv(path, index=False)
    assert (
        main(
            [
                "data",
                "show",
                "--source",
                "csv",
                "--csv",
                str(path),
                "--label",
                "y",
                "--attribute",
                "sex",
                "--features",
                "age",
                "score",
            ]
        )
        == 0
    )
    shown = capsys.readouterr().out
    assert "warning: column 'score' alone predicts the label (AUC 1.00)" in shown
    assert "verdict" not in shown


def test_adult_raises_no_leakage_warning():
    prepared = load_prepared(AdultSpec(), PrepareOptions(grouping=(GroupingSpec("sex"),)))
    assert not [w for w in prepared.warnings if "predicts the label" in w]
    aucs = column_aucs(prepared.train.X, prepared.train.y, prepared.encoder)
    assert set(aucs) == {c.name for c in (*prepared.encoder.numeric, *prepared.encoder.categorical)}
    assert 0.7 < max(aucs.values()) < LEAK_AUC


def test_column_aucs_match_sklearn_in_either_direction():
    frame = leaky_table(400, seed=1)
    y = frame.pop("y").to_numpy()
    encoder = fit_encoder(frame, ("age", "hours"), ("verdict", "sex"), {}, 5)
    aucs = column_aucs(encoder.transform(frame), y, encoder)
    for column in ("age", "hours"):
        auc = roc_auc_score(y, frame[column])
        assert np.isclose(aucs[column], max(auc, 1 - auc))
    rate = frame.groupby("sex")["sex"].transform(lambda s: y[s.index].mean())
    assert np.isclose(aucs["sex"], roc_auc_score(y, rate))
