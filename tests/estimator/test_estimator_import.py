"""`import engine` stays light, and the estimators never bring in Streamlit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]

IMPORT = """
import sys
import engine
heavy = [m for m in ("sklearn", "torch", "streamlit") if m in sys.modules]
assert not heavy, f"import engine imported {heavy}"
from engine import FairFrontClassifier, FairFrontRegressor
assert "streamlit" not in sys.modules, "importing the estimators imported streamlit"
"""
FIT = """
import numpy as np
X = np.random.default_rng(0).normal(size=(60, 2))
y = (X[:, 0] > 0).astype(int)
FairFrontClassifier(solver="unconstrained", constraint=None).fit(
    X, y, sensitive_features=X[:, 1] > 0).predict(X)
assert "streamlit" not in sys.modules, "fitting an estimator imported streamlit"
"""


def run_python(code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_import_engine_loads_neither_sklearn_nor_torch_and_the_estimators_no_streamlit():
    run_python(IMPORT)


@pytest.mark.slow
def test_fitting_an_estimator_never_imports_streamlit():
    run_python(IMPORT + FIT)
