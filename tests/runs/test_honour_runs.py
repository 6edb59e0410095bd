"""A run that honours κ, as a spec and in the background: its search is stored and said."""

from __future__ import annotations

import dataclasses

import pytest
from run_fixtures import make_spec

from engine.errors import UserError
from engine.runs import RunSpec, wait
from engine.runs.submit import submit
from engine.solvers.records import RecordKind


def test_the_honoured_split_is_part_of_the_spec_and_checked(csv_spec):
    plain = make_spec(csv_spec)
    honoured = dataclasses.replace(plain, honour="val")
    assert "honour" not in plain.to_dict()  # a plain run's id is what it always was
    again = RunSpec.from_dict(honoured.to_dict())
    assert again.honour == "val" and again.run_id == honoured.run_id != plain.run_id
    with pytest.raises(UserError, match="'val' \\(validation\\) or 'train', not 'test'"):
        dataclasses.replace(plain, honour="test").validate()
    with pytest.raises(UserError, match="no κ to honour"):
        dataclasses.replace(make_spec(csv_spec, solver="unconstrained"), honour="val").validate()


@pytest.mark.slow
def test_a_background_run_stores_its_search_and_says_which_kappa_prime_it_used(store, csv_spec):
    spec = dataclasses.replace(make_spec(csv_spec, kappa=0.2), honour="train")
    submit([spec], store)
    wait(store, [spec.run_id], timeout=120)
    row = store.run(spec.run_id)
    assert row.has_model, row.reason
    search = [r for r in store.records(spec.run_id) if r["kind"] == RecordKind.HONOUR]
    assert search and sum(r["state"]["chosen"] == "yes" for r in search) == 1
    chosen = next(r for r in search if r["state"]["chosen"] == "yes")
    assert chosen["state"]["sentence"] in row.reason
    train = store.metrics(spec.run_id)["train"]["constraint"]
    assert train == pytest.approx(chosen["values"]["train_value"])
    held = train <= 0.2
    assert ("κ held on the training data" in row.reason) == held
    assert (row.status == "infeasible") == (not held and row.stop_code == "kappa_unmet")
