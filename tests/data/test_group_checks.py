"""The rank-band pre-check refuses exactly what binding the constraint refuses, with the fixes."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.data.acs import ACSSpec
from engine.data.group_checks import rank_band_problems
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.constraints import bind

PROJECT = __import__("pathlib").Path(__file__).resolve().parents[2]


def bind_error(counts: dict[str, int], family: str, kappa, interval, grid="inside") -> str | None:
    """The UserError binding raises on groups of these sizes, or None when it binds."""
    groups = np.repeat(list(counts), list(counts.values()))
    y = np.arange(len(groups)) % 2
    spec = ConstraintSpec(family, kappa, interval, grid=grid)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bind(spec, groups=groups, y=y)
    except UserError as error:
        return str(error)
    return None


@settings(max_examples=300, deadline=None, database=None)
@given(
    sizes=st.lists(st.integers(1, 120), min_size=2, max_size=5),
    kappa=st.one_of(st.floats(0.001, 1.0), st.sampled_from([1.0, 0.5, 0.05, 0.01])),
    ends=st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)).filter(lambda e: e[0] != e[1]),
    grid=st.sampled_from(["inside", "literal"]),
    family=st.sampled_from(["pSP", "pDP"]),
)
def test_the_pre_check_agrees_with_binding(sizes, kappa, ends, grid, family):
    counts = {f"group {i}": n for i, n in enumerate(sizes)}
    interval = (min(ends), max(ends))
    problems = rank_band_problems(counts, family, kappa, interval, grid=grid)
    error = bind_error(counts, family, kappa, interval, grid)
    assert bool(problems) == (error is not None)
    if error is not None:
        assert error in problems  # binding names the smallest group, in the same sentence


@pytest.mark.parametrize("smallest", [79, 80, 81, 99, 100, 101])
@pytest.mark.parametrize("kappa", [0.04, 0.05, 1 / 80 / 0.25 * 0.995])
def test_at_the_edge_of_one_sample_they_agree_too(smallest, kappa):
    counts = {"a": 500, "b": smallest}
    problems = rank_band_problems(counts, "pSP", kappa, (0.05, 0.3))
    assert bool(problems) == (bind_error(counts, "pSP", kappa, (0.05, 0.3)) is not None)
    assert bool(problems) == (kappa * 0.25 * smallest < 1)


def test_the_sentence_names_the_group_its_size_and_the_fixes():
    counts = {"White": 900, "Black": 300, "Asian": 30}
    (problem,) = rank_band_problems(counts, "pSP", 0.05, (0.05, 0.3), sizes={"Asian": 51})
    assert problem == (
        "The rank band κ(β − α) = 0.0125 holds 0.38 samples of group 'Asian' (30 training rows), "
        "but it must hold at least one: use binary grouping, a minimum group size above 51 to "
        "merge it into 'other' or a band of at least 0.0334 (a larger κ or a wider interval I)."
    )
    assert rank_band_problems(counts, "pSP", 0.0334 / 0.25, (0.05, 0.3)) == []
    assert rank_band_problems(counts, "pSP", 0.05, (0.05, 0.05 + 0.0334 / 0.05)) == []
    assert rank_band_problems(counts, "pDP", 0.05, (0.05, 0.3)) == []  # pDP only warns


def test_connecticut_race_has_a_group_too_small_for_the_default_band(ct_acs_root):
    spec = ACSSpec(states=("CT",), year=2018, task="income", root=str(ct_acs_root))
    prepared = load_prepared(spec, PrepareOptions(grouping=(GroupingSpec("RAC1P"),)))
    summary = prepared.summary()
    counts = {g["name"]: g["train"]["size"] for g in summary["groups"]}
    sizes = {
        g["name"]: sum(g[s]["size"] for s in ("train", "val", "test")) for g in summary["groups"]
    }
    problems = rank_band_problems(counts, "pSP", 0.05, (0.05, 0.3), sizes=sizes)
    assert len(problems) == 1 and "group 'other' (34 training rows)" in problems[0]
    assert "binary grouping" in problems[0] and "minimum group size" not in problems[0]
    names = np.asarray(prepared.group_names, dtype=object)[prepared.train.groups]
    with pytest.raises(UserError) as refused:
        bind(ConstraintSpec("pSP", 0.05, (0.05, 0.3)), groups=names, y=prepared.train.y)
    assert str(refused.value) == problems[0]
    binary = PrepareOptions(grouping=(GroupingSpec("RAC1P", "binary"),))
    train = load_prepared(spec, binary).summary()["groups"]
    assert (
        rank_band_problems({g["name"]: g["train"]["size"] for g in train}, "pSP", 0.05, (0.05, 0.3))
        == []
    )


def test_the_pre_check_needs_no_torch():
    code = "import sys, engine.data.group_checks; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
