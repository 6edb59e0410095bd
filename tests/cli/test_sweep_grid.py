"""`sweep --grid NAME=V1,V2`: any setting of a run as an axis beside --kappas, --solvers, ..."""

import numpy as np
import pytest
from cli_table import TABLE_FLAGS

from engine.cli import main
from engine.runs import Store
from engine.runs.worker import execute_run


def test_sweep_grid_queues_the_product_once(tiny_csv, quiet_store, capsys):
    argv = [
        "sweep",
        *TABLE_FLAGS,
        "--csv",
        str(tiny_csv),
        "--interval",
        "0.05",
        "0.3",
        "--solvers",
        "ssl_alm",
        "unconstrained",
        "--kappas",
        "0.1",
        "0.2",
        "--grid",
        "option.rho=0.5,1",
        "--grid",
        "seed=0,1",
        "--iterations",
        "1",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr()
    sweep_id = printed.out.strip()
    # ssl_alm: 2 κ × 2 ρ × 2 seeds; unconstrained (no κ, no ρ): 2 seeds
    assert f"10 runs in sweep {sweep_id}" in printed.err
    store = Store(quiet_store)
    rows = store.runs(sweep_id=sweep_id)
    assert len(rows) == 10 and {r.status for r in rows} == {"queued"}
    alm = [r.spec for r in rows if r.spec.solver == "ssl_alm"]
    assert sorted({(s.config["rho"], s.kappa, s.seed) for s in alm}) == [
        (rho, kappa, seed) for rho in (0.5, 1.0) for kappa in (0.1, 0.2) for seed in (0, 1)
    ]
    (record,) = store.sweeps()
    assert record["grid"] == {
        "solver": ["ssl_alm", "unconstrained"],
        "interval": [[0.05, 0.3]],
        "seed": [0, 1],
        "kappa": [0.1, 0.2],
        "option.rho": ["0.5", "1"],
    }
    assert execute_run(str(quiet_store), rows[0].id) == "budget"

    assert main(argv) == 0  # the same sweep again: nothing new is queued
    assert capsys.readouterr().out.strip() == sweep_id
    assert len(store.runs()) == 10 and store.run(rows[0].id).status == "budget"


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--grid", "colour=red"], "error: unknown grid axis 'colour'"),
        (["--grid", "model.hidden=64,x"], "error: bad model.hidden value 'x'"),
        (["--grid", "option.rho=1"], "error: no solver of this grid (idca) has the option rho"),
        (["--kappas", "0.1", "--grid", "kappa=0.2"], "error: --kappas and --grid kappa=..."),
        (["--grid", "model.kind=linear,mlp"], "error: the grid point model.kind=mlp: idca"),
    ],
)
def test_a_bad_grid_is_one_line_and_queues_nothing(tiny_csv, quiet_store, capsys, flags, words):
    assert main(["sweep", *TABLE_FLAGS, "--csv", str(tiny_csv), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith(words) and len(err.splitlines()) == 1
    assert Store(quiet_store).runs() == []


def test_sweep_help_lists_the_axes(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["sweep", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for name in (
        "kappa",
        "interval",
        "solver",
        "seed",
        "grouping",
        "model.hidden",
        "model.activation",
        "model.kind",
        "model.cross_terms",
        "constraint.pairs",
        "option.NAME",
    ):
        assert f"\n  {name} " in out


@pytest.mark.parametrize("family", ["dp", "eo"])
def test_an_epsilon_sweep_of_paper_001s_solvers_gives_their_exact_frontier(
    tiny_csv, quiet_store, capsys, family
):
    """Paper 001 fixes ε per run; its frontier sweeps ε (spec 001 §3) and sets test accuracy
    against the exact (indicator) DP or EO gap on test."""
    from engine.runs.frontier import frontier
    from engine.runs.results import sweep_results
    from engine.verdict import SplitCheck

    solvers = ["plada", "ssg_hl", "ipp_ssg", "ipp_conex"]
    assert (
        main(
            [
                "sweep",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--constraint",
                family,
                "--surrogate",
                "sigmoid",
                "--solvers",
                *solvers,
                "--kappas",
                "0.2",
                "0.05",
                "--iterations",
                "60",
            ]
        )
        == 0
    )
    sweep_id = capsys.readouterr().out.strip()
    store = Store(quiet_store)
    for row in store.runs(sweep_id=sweep_id):
        assert execute_run(str(quiet_store), row.id) == "budget"
    result = frontier(sweep_results(store, sweep_id), metric="constraint")
    assert {(p.solver, p.kappa) for p in result.points} == {
        (s, k) for s in solvers for k in (0.2, 0.05)
    }
    for point in result.points:
        (run_id,) = point.run_ids
        test = store.metrics(run_id)["test"]
        assert point.constraint == pytest.approx(test[family])  # the exact gap, not a surrogate
        assert point.score == pytest.approx(test["accuracy"])
        held_out = SplitCheck(
            "test", test[family], point.kappa, None, test["constraint_low"], test["constraint_high"]
        )
        assert point.state is held_out.state  # judged by its interval, as its verdict is


def test_an_auc_gap_sweep_of_sfls_gives_paper_004s_frontier(tiny_csv, quiet_store, capsys):
    """`--solvers sfls unconstrained` trains both on the pairwise AUC loss without --objective
    (SFLS needs it); the frontier then shows test AUC with standard errors (paper 004, Sec. 6),
    and the unconstrained reference carries the intra-group AUC gap the sweep constrains."""
    from engine.data.sources import load_prepared
    from engine.fairness.auc import intra_group_auc_gap

    assert (
        main(
            [
                "sweep",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--constraint",
                "auc_gap",
                "--auc-variant",
                "intra",
                "--solvers",
                "sfls",
                "unconstrained",
                "--kappas",
                "0.1",
                "--seeds",
                "0",
                "1",
                "--iterations",
                "20",
            ]
        )
        == 0
    )
    sweep_id = capsys.readouterr().out.strip()
    store = Store(quiet_store)
    rows = store.runs(sweep_id=sweep_id)
    assert len(rows) == 4 and {r.spec.objective.name for r in rows} == {"pairwise_auc"}
    gaps = []
    for row in rows:
        assert execute_run(str(quiet_store), row.id) in ("budget", "converged")
        if row.spec.solver == "unconstrained":
            spec = row.spec
            scores, groups = store.load_scores(row.id)
            y = load_prepared(spec.data, spec.prepare).test.y
            gaps.append(1.0 - intra_group_auc_gap(scores, groups, y))
    mean, error = np.mean(gaps), np.std(gaps, ddof=1) / np.sqrt(2)
    fairness = f"{mean:.4f} [{mean - error:.4f}, {mean + error:.4f}]"

    assert main(["frontier", sweep_id]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "AUC vs fairness = 1 − intra-group AUC gap on the test split, with 95 % "
        "bands: one seed's held-out interval, or over seeds the mean ± s.e."
    )
    assert lines[1].split()[-3:] == ["n", "AUC", "fairness"]
    (reference,) = [line for line in lines if line.startswith("*") and " — " in line]  # no κ
    assert reference.endswith(fairness)

    assert main(["frontier", sweep_id, "--score", "accuracy", "--spread", "ci"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("accuracy vs fairness") and "the mean ± 95 % CI" in lines[0]
    with pytest.raises(SystemExit) as stop:
        main(["frontier", sweep_id, "--spread", "sd"])
    assert stop.value.code == 2
    assert "argument --spread: invalid choice: 'sd'" in capsys.readouterr().err


def test_a_frontier_of_runs_that_hold_different_quantities_is_refused_on_constraint(
    tiny_csv, quiet_store, capsys
):
    """A grid over which groups the loss gap compares holds two quantities to κ: one axis, like
    one column, shows one, so the frontier asks for the metric to show."""
    assert (
        main(
            [
                "sweep",
                *TABLE_FLAGS,
                "--csv",
                str(tiny_csv),
                "--constraint",
                "group_loss_gap",
                "--solvers",
                "ssl_alm",
                "--kappas",
                "0.1",
                "--grid",
                "constraint.pairs=all,vs_mean",
                "--iterations",
                "1",
            ]
        )
        == 0
    )
    sweep_id = capsys.readouterr().out.strip()
    assert main(["frontier", sweep_id]) == 2
    said = capsys.readouterr().err
    assert (
        "hold 2 quantities to κ (group-loss gap, group-loss gap (each group vs the mean))" in said
    )
    assert "--metric (e.g. group_loss_gap)" in said
