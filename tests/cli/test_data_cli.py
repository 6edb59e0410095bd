import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

from engine.cli import main

PROJECT = Path(__file__).resolve().parents[2]


def run_json(capsys, *args) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def sizes(summary: dict) -> dict[str, int]:
    return {
        g["name"]: sum(g[s]["size"] for s in ("train", "val", "test")) for g in summary["groups"]
    }


def test_adult_sex_group_sizes(capsys):
    summary = run_json(capsys, "data", "show", "--source", "adult", "--attribute", "sex")
    frame = pd.concat(
        [
            pd.read_csv(PROJECT / "data/adult/adult.data.gz", header=None, skipinitialspace=True),
            pd.read_csv(
                PROJECT / "data/adult/adult.test.gz", header=None, skiprows=1, skipinitialspace=True
            ),
        ]
    ).dropna(subset=[14])
    assert sizes(summary) == frame[9].value_counts().to_dict()
    assert summary["rows"]["test"] == 16_281
    female = next(g for g in summary["groups"] if g["name"] == "Female")
    test = frame.iloc[-16_281:]
    expected_rate = (test[14][test[9] == "Female"] == ">50K.").mean()
    assert abs(female["test"]["label_rate"] - expected_rate) < 1e-12


def test_connecticut_income_race_binary(capsys, ct_acs_root):
    summary = run_json(
        capsys,
        "data",
        "show",
        "--source",
        "acs",
        "--state",
        "CT",
        "--year",
        "2018",
        "--task",
        "income",
        "--acs-root",
        str(ct_acs_root),
        "--attribute",
        "RAC1P",
        "--grouping",
        "binary",
    )
    raw = pd.read_csv(ct_acs_root / "2018/1-Year/psam_p09.csv")
    kept = raw[(raw.AGEP > 16) & (raw.PINCP > 100) & (raw.WKHP > 0) & (raw.PWGTP >= 1)]
    assert sizes(summary) == {
        "White": (kept.RAC1P == 1).sum(),
        "not White": (kept.RAC1P != 1).sum(),
    }
    assert summary["reduced"] and summary["missing_features"] == ["OCCP", "POBP", "RELP"]


def test_text_output_names_groups_and_marks_synthetic_data(capsys):
    assert (
        main(
            [
                "data",
                "show",
                "--source",
                "synthetic",
                "--state",
                "CT",
                "--n-persons",
                "2000",
                "--attribute",
                "SEX",
                "RAC1P",
                "--grouping",
                "all",
                "binary",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "SYNTHETIC DATA" in out and "(synthetic)" in out
    assert "Female × White" in out and "Male × not White" in out


def test_listing_shows_tasks_and_offline_files(capsys, ct_acs_root):
    listing = run_json(capsys, "data", "list", "--acs-root", str(ct_acs_root))
    assert [(f["state"], f["year"]) for f in listing["acs_files"]] == [("CT", 2018)]
    assert len(listing["tasks"]) == 8 and listing["adult"]["present"]
    assert main(["data", "list", "--acs-root", str(ct_acs_root)]) == 0
    assert "ACSIncomePovertyRatio" in capsys.readouterr().out


def test_bad_input_is_one_line_of_error_and_exit_code_2(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            "data",
            "show",
            "--source",
            "acs",
            "--state",
            "CT",
            "--acs-root",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env={"PATH": "", "FAIRFRONT_CACHE": str(tmp_path)},
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: the ACS 2018 1-Year person file for CT is missing")
    assert "On the command line: --acs-root FOLDER, or --download." in result.stderr
    assert "Traceback" not in result.stderr
