"""The installed `fairfront` command is the command line of `python -m engine`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FAIRFRONT = Path(sys.executable).with_name("fairfront")

pytestmark = [
    pytest.mark.skipif(
        not FAIRFRONT.exists(),
        reason="the fairfront command is installed by `make test`/`make app`",
    ),
    pytest.mark.slow,
]


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_the_command_and_the_module_list_the_same_solvers():
    installed = run(str(FAIRFRONT), "solvers", "--json")
    module = run(sys.executable, "-m", "engine", "solvers", "--json")
    assert installed.returncode == module.returncode == 0
    names = [entry["name"] for entry in json.loads(installed.stdout)]
    assert names == [entry["name"] for entry in json.loads(module.stdout)]
    assert {"idca", "exponentiated_gradient"} <= set(names)


def test_usage_names_the_command_as_it_was_called():
    assert run(str(FAIRFRONT), "--help").stdout.startswith("usage: fairfront ")
    assert run(sys.executable, "-m", "engine", "--help").stdout.startswith(
        "usage: python -m engine "
    )


def test_a_reader_that_stops_early_ends_the_command_quietly():
    """`fairfront solvers --json | head -c 10`: the pipe closes while the command still writes
    (its output is larger than a pipe's 64 KiB buffer)."""
    assert len(run(str(FAIRFRONT), "solvers", "--json").stdout.encode()) > 65536
    pipeline = subprocess.run(
        f"'{FAIRFRONT}' solvers --json | head -c 10 > /dev/null; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert pipeline.returncode == 0
    assert "internal error" not in pipeline.stderr and "Traceback" not in pipeline.stderr
