"""`engine.runs.execute`: the one path from a run spec to a model, whether the spec's data is
read by it or handed over prepared, in the foreground or by a worker of the store."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from run_fixtures import make_spec

from engine.data.sources import load_prepared
from engine.errors import UserError
from engine.runs.execute import build_problem, execute
from engine.runs.submit import submit
from engine.runs.worker import execute_run


def test_a_spec_trains_one_model_from_its_data_from_prepared_data_and_in_the_store(store, csv_spec):
    spec = make_spec(csv_spec, iterations=40)
    alone = execute(spec)
    prepared = load_prepared(spec.data, spec.prepare)
    given = execute(spec, build_problem(spec, prepared=prepared))
    (run_id,) = submit([spec], store, start_runner=False)
    assert execute_run(str(store.home), run_id) == str(alone.status)
    stored = store.load_params(run_id)
    for name, value in alone.params.items():
        np.testing.assert_array_equal(given.params[name], value)
        np.testing.assert_array_equal(stored[name], value)


def test_a_bad_option_is_refused_before_the_data_is_read(csv_spec, tmp_path):
    missing = dataclasses.replace(csv_spec, path=str(tmp_path / "gone.csv"))
    spec = make_spec(missing, config={"outer": 3})
    with pytest.raises(UserError, match="unknown option"):
        execute(spec)
