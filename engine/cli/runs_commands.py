"""`python -m engine sweep | runs | frontier | runner`: background runs and what they produced."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

from engine.cli.decision_commands import register_runs_action
from engine.cli.output import write_output
from engine.cli.run_commands import (
    add_background_arguments,
    add_problem_arguments,
    objective_from_args,
    positive_int,
    run_spec_from_args,
)
from engine.cli.tuning_commands import tuned_sweep_specs
from engine.errors import UserError
from engine.model_file import save_model
from engine.objectives import LogisticLoss, PairwiseAUCLoss
from engine.runs import RunSpec, Store, continuation_specs, submit_sweep, wait
from engine.runs.comparison import quantity_columns, shown_quantity
from engine.runs.export import stored_run_model
from engine.runs.frontier import GAP_METRICS, SCORE_NAMES, SPREADS, frontier
from engine.runs.frontier_text import format_front, format_frontier
from engine.runs.fronts import run_front
from engine.runs.grid import Grid, axes_help, grid_specs, parse_grid, parse_values
from engine.runs.quantities import distinct, held_quantity
from engine.runs.results import (
    export_run,
    front_frontier,
    frontier_axes,
    run_quantity,
    run_verdict,
    sweep_results,
)
from engine.runs.runner import ensure_runner, serve_and_say
from engine.solvers.catalogue import solver_card, solver_names
from engine.solvers.honour_rules import run_honour
from engine.status import ACTIVE, RunStatus

# the grid axes with flags of their own: axis → the flag's dest (--solvers, ...)
FLAG_AXES = {"solver": "solvers", "interval": "intervals", "seed": "seeds", "kappa": "kappas"}


def register(commands: argparse._SubParsersAction) -> None:
    sweep = commands.add_parser(
        "sweep",
        help="queue a grid of runs over any of their settings (κ, I, solver, seed, options…)",
        epilog=f"grid axes (--grid NAME=V1,V2):\n{axes_help()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_problem_arguments(sweep)
    add_background_arguments(sweep)
    grid = sweep.add_argument_group("grid")
    grid.add_argument(
        "--kappas", "--kappa-grid", dest="kappas", nargs="+", help="κ values (default: --kappa)"
    )
    grid.add_argument(
        "--intervals",
        nargs="+",
        metavar="ALPHA:BETA",
        help="intervals such as 0.05:0.3 (default: --interval)",
    )
    grid.add_argument("--solvers", nargs="+", help="solvers (default: --solver)")
    grid.add_argument("--seeds", nargs="+", help="seeds (default: --seed)")
    grid.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="one more axis of the grid, e.g. option.rho=0.5,1 or "
        "model.hidden=64x32,32 (repeatable; the axes are listed below)",
    )
    grid.add_argument("--name", default="", help="a name for the sweep")
    grid.add_argument(
        "--cold",
        action="store_true",
        help="start every point afresh (default: a continuation sweep: each κ or I "
        "point of a solver that takes a warm start starts from its neighbour's "
        "model, in as many chains as --workers; the first of each chain is cold)",
    )
    grid.add_argument("--scheduler", help="Dask scheduler address (tcp://host:port)")
    grid.add_argument("--wait", action="store_true", help="return when every run has ended")
    grid.add_argument(
        "--tune",
        action="store_true",
        help="tune each point's solver by its paper's protocol first (see `run --tune`): the "
        "command waits for the trials, then queues the sweep of the chosen runs, each started "
        "afresh (a tuned point has its own options, so no chain)",
    )
    sweep.set_defaults(handler=sweep_command)

    runs = commands.add_parser(
        "runs", help="list, show, cancel, re-run, export or delete runs; list decisions"
    )
    actions = runs.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, handler, text in (
        ("list", list_runs, "runs in the store"),
        (
            "show",
            show_run,
            "one run: spec, status, metrics (JSON), and its front, if it "
            "yields one, as a table on stderr",
        ),
        ("cancel", cancel_run, "cancel a queued or running run"),
        ("export", export_command, "a run's metrics and trajectory as JSON or CSV"),
        (
            "export-model",
            export_model_command,
            "a finished run's model with its preprocessing as a model file (.npz) for `predict`",
        ),
        ("delete", delete_run, "remove a finished run and its files"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("--home", type=Path, default=None)
        if name == "list":
            action.add_argument("--status")
            action.add_argument("--sweep")
        else:
            action.add_argument("run_id")
        if name == "export":
            action.add_argument("--format", choices=("json", "csv"), default="json")
            action.add_argument("--out", type=Path)
        if name == "export-model":
            action.add_argument("path", type=Path, help="the model file to write (.npz)")
        action.set_defaults(handler=handler)
    register_runs_action(actions)
    rerun = actions.add_parser(
        "rerun",
        help="queue failed, cancelled or interrupted runs again under their own settings",
        description="Queue runs again under their own spec and id, and make sure a runner is "
        "working on them. A run that ended with a model keeps it unless --replace: the same "
        "settings give the same model again (unless a time budget ended the run).",
    )
    rerun.add_argument("run_ids", nargs="+", metavar="RUN_ID")
    rerun.add_argument("--home", type=Path, default=None)
    rerun.add_argument(
        "--replace", action="store_true", help="also re-run finished runs, replacing their results"
    )
    rerun.add_argument("--workers", type=positive_int, default=2)
    rerun.set_defaults(handler=rerun_runs)

    front = commands.add_parser("frontier", help="the score–fairness frontier of a sweep")
    front.add_argument("sweep_id")
    front.add_argument("--home", type=Path, default=None)
    front.add_argument(
        "--metric",
        default="constraint",
        help="constraint (the sweep's constrained quantity), psp, pdp, sp, dp, auc, "
        "or a name ending in _gap",
    )
    front.add_argument("--split", default="test", choices=("train", "val", "test"))
    front.add_argument(
        "--score",
        choices=tuple(SCORE_NAMES),
        help="the y axis (default: auc for a sweep of paper 004's pairwise_auc "
        "objective or auc_gap constraint, else accuracy)",
    )
    front.add_argument(
        "--spread",
        choices=SPREADS,
        help="± over seeds: ci, the 95 %% Student-t confidence half-width, or se, "
        "the standard error of the mean (default: se where --score defaults to "
        "auc, as paper 004 plots, else ci)",
    )
    front.set_defaults(handler=frontier_command)

    runner = commands.add_parser("runner", help="serve queued runs (started automatically)")
    runner.add_argument("--home", type=Path, default=None)
    runner.add_argument("--workers", type=positive_int, default=2)
    runner.add_argument("--idle-exit", type=float, default=30.0)
    runner.set_defaults(handler=runner_command)


def sweep_command(args: argparse.Namespace) -> int:
    base = run_spec_from_args(args)
    grid = sweep_grid(args, base)
    family = base.constraint.family if base.constraint else None
    base = dataclasses.replace(base, honour=run_honour(args.honour, grid["solver"], family))
    if args.objective is None:
        objective = objective_from_args(args, grid_objective(grid), base.data.label_task)
        base = dataclasses.replace(base, objective=objective)
    store = Store(args.home)
    if args.tune:
        specs = tuned_sweep_specs(grid_specs(base, grid), store, args)
    else:
        specs = continuation_specs(grid_specs(base, grid), 0 if args.cold else args.workers)
    sweep_id = submit_sweep(
        args.name or f"{len(specs)} runs",
        specs,
        grid,
        store,
        workers=args.workers,
        scheduler=args.scheduler,
        force=args.force,
    )
    print(sweep_id)
    print(
        f"{len(specs)} runs in sweep {sweep_id}; see `python -m engine frontier {sweep_id}`",
        file=sys.stderr,
    )
    if args.wait:
        statuses = wait(store, [s.run_id for s in specs])
        counts = {s: list(statuses.values()).count(s) for s in sorted(set(statuses.values()))}
        print(", ".join(f"{n} {s}" for s, n in counts.items()), file=sys.stderr)
    return 0


def sweep_grid(args: argparse.Namespace, base: RunSpec) -> Grid:
    """The axes of --solvers, --intervals, --seeds and --kappas (each by default the single
    run's value), then the --grid axes; an axis is given by its flag or by --grid, not both."""
    extra = parse_grid(args.grid)
    single = {
        "solver": base.solver,
        "interval": base.interval,
        "seed": base.seed,
        "kappa": args.kappa,
    }
    grid: Grid = {}
    for name, dest in FLAG_AXES.items():
        texts = getattr(args, dest)
        if texts and name in extra:
            raise UserError(f"--{dest} and --grid {name}=... both give {name}; give it once")
        grid[name] = parse_values(name, texts) if texts else [single[name]]
    return grid | extra


def grid_objective(grid: Grid) -> str:
    """The objective of a sweep that names none: the pairwise AUC loss when a solver of the grid
    needs it (e.g. `--solvers sfls unconstrained`: SFLS and its unconstrained reference, as
    paper 004 compares them), else the logistic loss."""
    defaults = {solver_card(name).default_objective for name in grid["solver"]}
    return PairwiseAUCLoss.name if PairwiseAUCLoss.name in defaults else LogisticLoss.name


def list_runs(args: argparse.Namespace) -> int:
    """Newest first: how each run ended, its verdict, the quantity its constraint holds with κ,
    I and seed, and on test its accuracy and each quantity the listed runs' verdicts speak of
    (`shown_quantity`: a run's constraint's; pSP for a run without one), one column each,
    "—" where a run stores none of it."""
    store = Store(args.home)
    sweep = store.sweep_id(args.sweep) if args.sweep else None
    rows = store.runs(status=args.status, sweep_id=sweep, newest_first=True)
    metrics = {row.id: store.metrics(row.id) for row in rows}
    verdicts = {row.id: run_verdict(store, row, metrics=metrics[row.id]) for row in rows}
    held = {row.id: held_quantity(row.spec) for row in rows}
    constraints = {run_id: "none" if q is None else q.name for run_id, q in held.items()}
    columns = quantity_columns(distinct([shown_quantity(r.spec) for r in rows]), ("test",), ())
    widths = [max(12, len(c.header) + 2) for c in columns]
    solver = max(map(len, solver_names())) + 1  # the column of solver names fits the longest
    verdict = max([len("verdict"), *(len(v.summary) for v in verdicts.values())]) + 1
    named = max([len("constraint"), *map(len, constraints.values())]) + 1
    print(
        f"{'id':<17}{'status':<12}{'verdict':<{verdict}}{'solver':<{solver}}"
        f"{'constraint':<{named}}{'κ':>7}{'I':>13}{'seed':>5}{'test acc':>10}"
        + "".join(f"{c.header:>{w}}" for c, w in zip(columns, widths, strict=True))
        + "  reason"
    )
    for row in rows:
        spec, measured, judged = row.spec, metrics[row.id], verdicts[row.id]
        accuracy = measured.get("test", {}).get("accuracy")
        interval = "[{:g}, {:g})".format(*spec.interval)
        cells = "".join(
            f"{_num(c.cell(spec, measured)):>{w}}" for c, w in zip(columns, widths, strict=True)
        )
        print(
            f"{row.id:<17}{row.status:<12}{judged.summary:<{verdict}}{spec.solver:<{solver}}"
            f"{constraints[row.id]:<{named}}{_num(judged.kappa, 'g'):>7}{interval:>13}"
            f"{spec.seed:>5}{_num(accuracy):>10}{cells}  {row.reason[:60]}"
        )
    return 0


def show_run(args: argparse.Namespace) -> int:
    """The run as JSON on stdout; a run that yields a front also gets it as a table, on stderr
    so that stdout stays one JSON document."""
    store = Store(args.home)
    row = store.run(args.run_id)
    print(export_run(store, row.id, "json"))
    members = run_front(store, row.id)
    if members:
        front = front_frontier(row.id, row.spec, members, store.metrics(row.id))
        print(format_front(front, row.id, run_quantity(row.spec)), file=sys.stderr)
    return 0


def cancel_run(args: argparse.Namespace) -> int:
    store = Store(args.home)
    run_id = store.run(args.run_id).id
    status = store.request_cancel(run_id)
    said = {RunStatus.CANCELLED: "cancelled", RunStatus.RUNNING: "asked to stop"}.get(
        status, f"already {status}"
    )
    print(f"{run_id}: {said}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    store = Store(args.home)
    text = export_run(store, store.run(args.run_id).id, args.format)
    if args.out is None:
        print(text)
    else:
        write_output(args.out, text)
    return 0


def export_model_command(args: argparse.Namespace) -> int:
    store = Store(args.home)
    model = stored_run_model(store, args.run_id)
    save_model(model, args.path)
    print(
        f"model of run {model.about['run']} written: {args.path} (apply it with "
        f"`python -m engine predict {args.path} CSV`)",
        file=sys.stderr,
    )
    return 0


def rerun_runs(args: argparse.Namespace) -> int:
    """Each run on a line: queued again, or why not."""
    store = Store(args.home)
    rows = [store.run(run_id) for run_id in args.run_ids]  # an unknown id stops all of them
    queued = False
    for row in rows:
        if store.rerun(row.id, replace=args.replace):
            queued = True
            print(f"{row.id}: queued again (it was {row.status})")
        elif row.has_model:
            print(f"{row.id}: kept, it is {row.status} with a model (--replace re-runs it)")
        else:
            print(f"{row.id}: already {row.status}")
    if queued:
        ensure_runner(store.home, args.workers)
    return 0


def delete_run(args: argparse.Namespace) -> int:
    store = Store(args.home)
    run_id = store.run(args.run_id).id
    store.delete(run_id)
    print(f"{run_id}: deleted")
    return 0


def frontier_command(args: argparse.Namespace) -> int:
    store = Store(args.home)
    sweep_id = store.sweep_id(args.sweep_id)
    specs = [r.spec for r in store.runs(sweep_id=sweep_id)]
    score, spread = frontier_axes(specs)
    quantity = sweep_quantity(specs) if args.metric == "constraint" else None
    try:
        result = frontier(
            sweep_results(store, sweep_id),
            metric=args.metric,
            split=args.split,
            score=args.score or score,
            spread=args.spread or spread,
        )
    except ValueError as error:
        raise UserError(str(error)) from error
    print(format_frontier(result, quantity))
    pending = [r for r in store.runs(sweep_id=sweep_id) if r.status in ACTIVE]
    if pending:
        print(f"{len(pending)} runs still queued or running", file=sys.stderr)
    return 0


def sweep_quantity(specs: list[RunSpec]) -> str | None:
    """The name of the one quantity a sweep's runs of these specs hold to κ, which its
    frontier's "constraint" axis shows; None when none holds one. Refused when they hold
    several: one axis, like one column, shows one quantity."""
    held = distinct([q for q in map(held_quantity, specs) if q is not None])
    if len(held) < 2:
        return held[0].name if held else None
    reported = [q.metric for q in held if q.metric in GAP_METRICS or str(q.metric).endswith("_gap")]
    choose = f" (e.g. {', '.join(reported)})" if reported else ""
    raise UserError(
        f"the sweep's runs hold {len(held)} quantities to κ "
        f"({', '.join(q.name for q in held)}), so 'constraint' is not one quantity: "
        f"choose the metric to show with --metric{choose}"
    )


def runner_command(args: argparse.Namespace) -> int:
    return serve_and_say(args.home or Store().home, args.workers, args.idle_exit)


def _num(value: float | str | None, spec: str = ".4f") -> str:
    """A number for a table cell; "—" for a missing one (None, NaN or infinite)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return format(value, spec)
