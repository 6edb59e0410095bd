"""Sweep grids: the product of any settings of a run, one spec per run id, refused in words."""

import dataclasses
import json

import pytest
from run_fixtures import INTERVAL, make_spec

from engine.errors import UserError
from engine.models import ModelSpec
from engine.runs import grid_specs, parse_grid, sweep_specs
from engine.runs.submit import submit
from engine.runs.worker import execute_run
from engine.solvers import config_from_dict, solver_card


def full_config(solver: str, **options) -> dict:
    """A solver's options in full, as the command line and the pages write them."""
    return dataclasses.asdict(config_from_dict(solver_card(solver).Config, options))


def test_a_solver_option_axis_sets_typed_options_of_each_point(csv_spec):
    base = make_spec(csv_spec, solver="ssl_alm")
    specs = grid_specs(base, parse_grid(["option.rho=0.5,1", "option.mu=1,3"]))
    assert [(s.config["rho"], s.config["mu"]) for s in specs] == [
        (0.5, 1.0),
        (0.5, 3.0),
        (1.0, 1.0),
        (1.0, 3.0),
    ]
    assert all(
        s.config == full_config("ssl_alm", rho=s.config["rho"], mu=s.config["mu"]) for s in specs
    )
    assert len({s.run_id for s in specs}) == 4


def test_model_grouping_and_seed_axes(csv_spec):
    base = dataclasses.replace(make_spec(csv_spec, solver="ssl_alm"), model=ModelSpec("mlp"))
    grid = parse_grid(["model.hidden=64x32,16", "grouping=binary,top-2", "seed=0,3"])
    specs = grid_specs(base, grid)
    assert len(specs) == 8
    assert [s.model.hidden for s in specs[::4]] == [(64, 32), (16,)]
    assert [(g.mode, g.k) for s in specs[:4:2] for g in s.prepare.grouping] == [
        ("binary", 3),
        ("top-k", 2),
    ]
    assert [(s.seed, s.prepare.seed) for s in specs[:2]] == [(0, 0), (3, 3)]


def test_identical_points_collapse_into_one_run(csv_spec):
    base = make_spec(csv_spec, solver="ssl_alm")
    assert len(grid_specs(base, parse_grid(["kappa=0.1,0.10", "option.rho=1,1.0"]))) == 1
    # a reference solver ignores κ and runs without the constraint
    specs = grid_specs(base, parse_grid(["solver=ssl_alm,unconstrained", "kappa=0.1,0.2"]))
    assert [(s.solver, s.constraint and s.constraint.kappa) for s in specs] == [
        ("ssl_alm", 0.1),
        ("ssl_alm", 0.2),
        ("unconstrained", None),
    ]
    # a linear model does not use hidden widths; points of the option's absent solver collapse
    grid = parse_grid(
        ["model.kind=linear,mlp", "model.hidden=8,16", "option.rho=1,2", "solver=ssl_alm,sgd"]
    )
    kinds = [(s.solver, s.model.kind) for s in grid_specs(base, grid)]
    assert kinds.count(("ssl_alm", "linear")) == 2 and kinds.count(("ssl_alm", "mlp")) == 4
    assert kinds.count(("sgd", "linear")) == 1 and kinds.count(("sgd", "mlp")) == 2


def test_sweep_specs_is_the_grid_of_solver_interval_seed_and_kappa(csv_spec):
    base = make_spec(csv_spec)
    old_style = sweep_specs(
        base, [0.2, 0.1], [INTERVAL, (0.0, 1.0)], ["idca", "unconstrained"], [0, 1]
    )
    grid = parse_grid(
        ["solver=idca,unconstrained", "interval=0.1:0.5,0:1", "seed=0,1", "kappa=0.2,0.1"]
    )
    assert [s.run_id for s in old_style] == [s.run_id for s in grid_specs(base, grid)]
    assert len(old_style) == 12  # idca: 2 I × 2 seeds × 2 κ; unconstrained: 2 I × 2 seeds
    assert {s.constraint.interval for s in old_style if s.constraint} == {INTERVAL, (0.0, 1.0)}


def test_a_finished_run_is_reused_not_queued_again(store, csv_spec):
    single = make_spec(
        csv_spec, solver="unconstrained", iterations=2, config=full_config("unconstrained")
    )
    (done,) = submit([single], store, start_runner=False)
    assert execute_run(str(store.home), done) == "budget"
    finished = store.run(done).finished
    specs = grid_specs(single, parse_grid(["seed=0,1"]))
    ids = submit(specs, store, start_runner=False)
    assert ids[0] == done
    assert store.run(done).status == "budget" and store.run(done).finished == finished
    assert store.run(ids[1]).status == "queued"


def test_the_grid_is_stored_as_json():
    grid = parse_grid(["interval=0.05:0.3", "model.hidden=64-32", "option.step=auto,0.1"])
    assert json.loads(json.dumps(grid)) == {
        "interval": [[0.05, 0.3]],
        "model.hidden": [[64, 32]],
        "option.step": ["auto", "0.1"],
    }


@pytest.mark.parametrize(
    ("texts", "words"),
    [
        (["colour=red"], "unknown grid axis 'colour'; the axes are kappa, interval"),
        (["kappa"], "a grid axis is written NAME=V1,V2"),
        (["kappa="], "kappa has an empty value"),
        (["kappa=0.1,,0.2"], "kappa has an empty value"),
        (["kappa=lots"], "bad kappa value 'lots': kappa takes numbers ≥ 0"),
        (["interval=0.1"], "bad interval value '0.1': interval takes ALPHA:BETA"),
        (["model.hidden=64y32"], "bad model.hidden value '64y32'"),
        (["grouping=top-0"], "bad grouping value 'top-0'"),
        (["seed=1", "seed=2"], "the grid axis seed is given twice"),
        (["option.rhoo=1"], "unknown solver option 'rhoo'; the solvers' options are"),
        (["solver=magic"], "unknown solver 'magic'"),
    ],
)
def test_bad_grids_are_refused_in_words(texts, words):
    with pytest.raises(UserError, match=words):
        parse_grid(texts)


def test_bad_points_are_refused_before_anything_is_queued(csv_spec):
    base = make_spec(csv_spec)  # idca
    with pytest.raises(
        UserError,
        match="no solver of this grid .idca. has the option rho; it "
        "is an option of alm, badr_front, .*, iqrc, .*ssl_alm, stochastic_ghost",
    ):
        grid_specs(base, parse_grid(["option.rho=0.5,1"]))
    with pytest.raises(UserError, match="the grid point model.kind=mlp: idca trains linear"):
        grid_specs(base, parse_grid(["model.kind=linear,mlp"]))
    with pytest.raises(UserError, match="option rho needs a finite number, not 'x'"):
        grid_specs(make_spec(csv_spec, solver="alm"), parse_grid(["option.rho=x"]))
    with pytest.raises(UserError, match="the grid axis kappa has no values"):
        grid_specs(base, {"kappa": []})


def test_the_solver_seed_axis_keeps_the_split(csv_spec):
    base = make_spec(csv_spec, seed=7)
    specs = grid_specs(base, {"solver.seed": [0, 1, 2]})
    assert [s.seed for s in specs] == [0, 1, 2]
    assert {s.prepare.seed for s in specs} == {7}
