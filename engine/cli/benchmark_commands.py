"""`python -m engine benchmark`: the Benchmark page's study from the command line (paper 000).

Each solver (at each point of an optional hyper-parameter grid: a *variant*) runs `--runs` times
with solver seeds 0..runs−1 on one split, under one budget, saving its iterate every
`--save-seconds` of solver time (or every `--save-every` iterations); every saved iterate is
re-evaluated on the full train and test sets.
The command queues the study in the run store, waits for every run, and writes what the page
shows: the table (mean ± std, best marked), the criteria, the bands over wall-clock time, the
hyper-parameter grid when there is one, and the figures as standalone HTML. Runs computed
before with the same settings are reused, so the same command run again collects a study that
was interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from engine.benchmark import figures
from engine.benchmark.study import (
    StudyRun,
    band_bounds,
    bands_frame,
    criteria_frame,
    first_runs,
    grid_frame,
    grid_heatmap,
    load_study,
    spider_values,
    study_bands,
    study_grid,
    study_points,
    study_table,
    study_variants,
    verdict_words,
)
from engine.benchmark.summary import Summary
from engine.cli.data_args import print_download_progress
from engine.cli.output import write_output
from engine.cli.run_commands import (
    add_background_arguments,
    add_problem_arguments,
    parse_options,
    run_spec_from_args,
)
from engine.cli.tuning_commands import tuned_sweep_specs
from engine.data.sources import load_prepared
from engine.errors import UserError
from engine.runs import Grid, RunSpec, Store, parse_grid, submit_sweep, wait
from engine.runs.grid import OPTION, axes_help, parse_values
from engine.runs.tuning import tunes
from engine.solvers.honour_rules import HONOUR_OFF
from engine.status import ACTIVE, RunStatus

DEFAULT_SECONDS = 30.0  # paper 000, Exp. 1: 30 s of wall-clock time per run
# paper 000 §3 saves the state every 100 iterations of solvers that take ~1,000 a second; by the
# solver's clock, as the Benchmark page does, every solver gives a few points per 0.5 s bin
DEFAULT_SAVE_SECONDS = 0.1
POLL_SECONDS = 1.0
# axes the study sets itself: the solvers (--solvers) and the solver seeds (--runs)
OWN_AXES = {"solver": "--solvers", "solver.seed": "--runs"}


def register(commands: argparse._SubParsersAction) -> None:
    bench = commands.add_parser(
        "benchmark",
        help="a benchmark study: many seeded runs of each solver under one budget (paper 000)",
        description=__doc__.split("\n\n", 1)[1].strip(),
        epilog=f"grid axes (--grid NAME=V1,V2):\n{axes_help()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_problem_arguments(bench)
    add_background_arguments(bench)
    study = bench.add_argument_group(
        "study",
        f"every run has the budget of --seconds (default {DEFAULT_SECONDS:g}) and --iterations,\n"
        f"and saves its iterate every --save-seconds of solver time (default\n"
        f"{DEFAULT_SAVE_SECONDS:g}) and/or every --save-every iterations (without --save-seconds: only so)",
    )
    study.add_argument(
        "--solvers",
        nargs="+",
        metavar="SOLVER",
        help="the solvers compared (default: --solver); --option NAME=VALUE "
        "applies to each of them that has the option",
    )
    study.add_argument(
        "--runs",
        type=int,
        default=5,
        help="runs per variant, with solver seeds 0..N−1 on one split (default 5; paper 000: 10)",
    )
    study.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="one more axis of the study, e.g. option.rho=0.5,1 (repeatable; each "
        "point is a variant; the axes are listed below)",
    )
    study.add_argument(
        "--tune",
        action="store_true",
        help="tune each solver that declares its paper's grid first (as paper 000 did, App. B; "
        "see `run --tune`), then run the study with the options chosen",
    )
    study.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="folder for table.csv, criteria.csv, bands.csv, grid.csv and the figures (HTML)",
    )
    bench.set_defaults(handler=benchmark_command, seconds=DEFAULT_SECONDS)


def benchmark_command(args: argparse.Namespace) -> int:
    base, grid = study_setup(args)
    points = study_points(base, grid)  # a grid point no solver can run is refused here
    out = make_folder(args.out)
    base.data.files(print_download_progress)  # what --download allows, with its progress
    load_prepared(base.data, base.prepare, use_cache=not args.no_cache)  # bad data fails here
    store = Store(args.home)
    if args.tune:
        points = study_points(base, grid, tuned_configs(base, grid, store, args))
    variants = study_variants(points, grid)
    specs = [spec for _, spec in points]
    sweep_id = submit_sweep(
        f"benchmark: {len(specs)} runs", specs, grid, store, workers=args.workers, force=args.force
    )
    print(
        f"{len(specs)} runs ({len(set(variants.values()))} variants × {args.runs} seeds) in "
        f"sweep {sweep_id} of {store.home}; if interrupted, they go on in the background and "
        "the same command collects them",
        file=sys.stderr,
    )
    wait_with_progress(store, [spec.run_id for spec in specs])
    runs = finished_runs(store, variants)
    written = write_study(out, store, runs, points, grid)
    summary = study_table(runs)
    if summary is not None:
        print(format_table(summary, runs))
    print(f"written to {out}: {', '.join(written)}", file=sys.stderr)
    return 0


def tuned_configs(
    base: RunSpec, grid: Grid, store: Store, args: argparse.Namespace
) -> dict[str, dict]:
    """Each solver's options chosen by its paper's protocol before the study (paper 000, App.
    B), on the study's first seed and budget, as `sweep --tune` chooses them."""
    firsts = [spec for _, spec in study_points(base, {"solver": grid["solver"]})]
    tuned = tuned_sweep_specs([spec for spec in firsts if tunes(spec)], store, args)
    return {spec.solver: dict(spec.config) for spec in tuned}


def study_setup(args: argparse.Namespace) -> tuple[RunSpec, Grid]:
    """The base spec and the study's grid: --solvers × --option (each a one-value axis, so it
    applies to the solvers that have it) × --grid × solver seeds 0..--runs−1. The base spec is
    the first solver's with its default options; it saves its iterate every
    `DEFAULT_SAVE_SECONDS` of solver time unless --save-every or --save-seconds says otherwise."""
    if args.runs < 1:
        raise UserError(f"--runs needs a whole number ≥ 1 (runs per solver), not {args.runs}")
    solvers = parse_values("solver", args.solvers or [args.solver])
    # an empty value leaves an optional option unset, as "auto" does (engine.options)
    extra = {
        OPTION + name: parse_values(OPTION + name, [value or "auto"])
        for name, value in parse_options(args.option).items()
    }
    for name, values in parse_grid(args.grid).items():
        if name in OWN_AXES:
            raise UserError(
                f"--grid {name}=... is the study's own axis; give it with {OWN_AXES[name]}"
            )
        if name in extra:
            raise UserError(
                f"--option {name.removeprefix(OPTION)} and --grid {name}=... both "
                "set it; give it once"
            )
        extra[name] = values
    save_seconds = args.save_seconds
    if save_seconds is None and args.save_every is None:
        save_seconds = DEFAULT_SAVE_SECONDS
    # paper 000's comparison runs each solver's own algorithm, once: κ is not held on train
    single = argparse.Namespace(
        **{
            **vars(args),
            "solver": solvers[0],
            "option": [],
            "save_seconds": save_seconds,
            "honour": HONOUR_OFF,
        }
    )
    return run_spec_from_args(single), study_grid(solvers, args.runs, extra)


def make_folder(path: Path) -> Path:
    """The output folder, made before any run is queued: a path that cannot hold the results
    is refused before the study costs anything."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"cannot make the folder {path}: {error.strerror or error}") from None
    return path


def wait_with_progress(store: Store, run_ids: list[str]) -> dict[str, str]:
    """Wait for every run to end, with a line on stderr whenever the counts change."""
    said = None
    while True:
        statuses = wait(store, run_ids, timeout=POLL_SECONDS)
        ended = sum(status not in ACTIVE for status in statuses.values())
        running = sum(status == RunStatus.RUNNING for status in statuses.values())
        line = (
            f"benchmark: {ended} of {len(run_ids)} runs ended, {running} running, "
            f"{len(run_ids) - ended - running} queued"
        )
        if line != said:
            print(line, file=sys.stderr, flush=True)
            said = line
        if ended == len(run_ids):
            return statuses


def finished_runs(store: Store, variants: Mapping[str, str]) -> list[StudyRun]:
    """The study's runs that ended with a model; each other run is reported on stderr and left
    out of every table and figure (its saved iterates too)."""
    runs = load_study(store, variants)
    kept = [run for run in runs if run.metrics]  # the runs that ran to their end
    for run in sorted(runs, key=lambda r: (r.variant, r.seed)):
        if not run.metrics:
            reason = store.run(run.run_id).reason
            print(
                f"run {run.run_id} ({run.variant}, seed {run.seed}) ended {run.status}"
                f"{f': {reason}' if reason else ''}; left out",
                file=sys.stderr,
            )
    if not kept:
        raise UserError(
            f"none of the study's {len(runs)} runs ended with a model; see the lines above"
        )
    return kept


# ---- the files -----------------------------------------------------------------------------


def write_study(
    out: Path,
    store: Store,
    runs: Sequence[StudyRun],
    points: Sequence[tuple[dict, RunSpec]],
    grid: Grid,
) -> list[str]:
    """Every file of the study into `out`; their names, in the order written."""
    written = []

    def save(name: str, text: str) -> None:
        write_output(out / name, text)
        written.append(name)

    def draw(name: str, figure) -> None:
        try:  # plotly.js inside each file: it opens without internet access
            figure.write_html(out / name, include_plotlyjs=True)
        except OSError as error:
            raise UserError(f"cannot write {out / name}: {error.strerror or error}") from None
        written.append(name)

    summary = study_table(runs)
    if summary is not None:
        save("table.csv", summary.plain().to_csv())
    spider = spider_values(runs)
    save("criteria.csv", criteria_frame(spider).to_csv(index=False))
    bands = study_bands(runs)
    save("bands.csv", bands_frame(bands).to_csv(index=False))
    heat = grid_heatmap(runs, points, grid)
    if heat is not None:
        save("grid.csv", grid_frame(*heat).to_csv(index=False))
    if any(per_variant for per_variant in bands.get("loss", {}).values()):
        draw("bands.html", figures.band_figure(bands, band_bounds(runs)))
    if any(spider.get("test", {}).values()):
        draw("criteria.html", figures.spider_figure(spider))
    probabilities = probability_models(store, runs)
    if probabilities is not None:
        draw("probabilities.html", figures.probability_figure(*probabilities))
    if heat is not None:
        draw("grid.html", figures.heatmap_figure(*heat))
    return written


def probability_models(store: Store, runs: Sequence[StudyRun]):
    """(models, group names) for the probability figure: the test scores of each variant's
    first seed, as the page draws them; None when the variants' runs group the data differently
    (a grouping or split-seed axis), which one figure cannot show."""
    first = first_runs(runs)
    if not first:
        return None
    names = set()
    for run in first.values():
        spec = store.run(run.run_id).spec
        names.add(load_prepared(spec.data, spec.prepare).group_names)
    if len(names) != 1:
        print(
            "the variants group the data differently; probabilities.html is not drawn",
            file=sys.stderr,
        )
        return None
    models = {variant: store.load_scores(run.run_id) for variant, run in first.items()}
    return models, names.pop()


def format_table(summary: Summary, runs: Sequence[StudyRun]) -> str:
    """The table for the terminal: one row per metric, one column per variant, "mean ± std"
    with `*` after each row's best."""
    text = summary.table()
    marked = (text + " *").where(summary.best.astype(bool), text + "  ").T
    counts = {variant: sum(run.variant == variant for run in runs) for variant in text.index}
    counted = (
        f"{next(iter(counts.values()))} runs per variant"
        if len(set(counts.values())) == 1
        else "the runs of each variant (" + ", ".join(f"{v}: {n}" for v, n in counts.items()) + ")"
    )
    heading = f"mean ± std over {counted}; * the best of each row (smallest; largest for accuracy)"
    verdicts = "verdicts on the test set:\n" + "\n".join(
        f"  {line}" for line in verdict_words(runs)
    )
    return heading + "\n" + marked.rename_axis(None, axis=1).to_string() + "\n" + verdicts
