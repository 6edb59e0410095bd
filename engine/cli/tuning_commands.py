"""`run --tune`: a run tuned by its solver's paper protocol (`engine.runs.tuning`). The trials
and the tuned run are runs of the store, made by the background workers, so a trial run before
is reused and the tuned run is listed, shown and exported like any other."""

from __future__ import annotations

import argparse
import sys

from engine.cli.output import write_output
from engine.errors import UserError
from engine.model_file import save_model
from engine.runs import RunSpec, Store
from engine.runs.export import stored_run_model
from engine.runs.quantities import held_quantity
from engine.runs.results import export_run, run_verdict
from engine.runs.submit import submit, wait
from engine.runs.tuning import TunedRun, trial_specs, tuned_run, tunes, tuning_plan
from engine.solvers.tuning import Choice


def tuned_run_command(args: argparse.Namespace, spec: RunSpec) -> int:
    """Queue the trials of `spec`, wait for them, print their table and the choice, then make
    the tuned run (reused when it is the chosen trial) and print its verdict; its model and
    document are saved where --save-model and --out say."""
    if args.background:
        raise UserError("--tune waits for its trials to choose; leave out --background")
    plan = tuning_plan(spec)
    store = Store(args.home)
    trials = trial_specs(spec)
    say = (lambda text: None) if args.quiet else (lambda text: print(text, file=sys.stderr))
    say(f"tuning {spec.solver}: {len(trials)} trials, {plan.words()}")
    submit(trials, store, force=args.force, workers=args.workers)
    wait(store, [t.run_id for t in trials])
    tuned = tuned_run(store, spec)
    assert tuned is not None  # every trial has ended
    held = held_quantity(spec)
    print(format_trials(tuned.choice, held.name if held else "value"), file=sys.stderr)
    if tuned.final is None:
        raise UserError(tuned.choice.words())
    print(tuned.choice.words(), file=sys.stderr)
    final = _made(store, tuned, args)
    row = store.run(final)
    verdict = run_verdict(store, row)
    print(f"tuned run {final}: {row.status}; {verdict.headline}")
    if args.out is not None:
        write_output(args.out, export_run(store, final, "json"))
        print(f"written: {args.out}", file=sys.stderr)
    if args.save_model is not None:
        save_model(stored_run_model(store, final), args.save_model)
        print(f"model written: {args.save_model}", file=sys.stderr)
    return 0


def tuned_sweep_specs(
    specs: list[RunSpec], store: Store, args: argparse.Namespace
) -> list[RunSpec]:
    """The sweep's runs with every point whose solver tunes (`tunes`) replaced by its tuned
    run: all their trials queued at once and waited for, each point's choice printed."""
    tuned = [spec for spec in specs if tunes(spec)]
    if not tuned:
        raise UserError("--tune: none of the solvers declares a grid to tune on")
    trials = [trial for spec in tuned for trial in trial_specs(spec)]
    print(f"tuning {len(tuned)} points: {len(trials)} trials", file=sys.stderr)
    submit(trials, store, force=args.force, workers=args.workers)
    wait(store, [trial.run_id for trial in trials])
    chosen = {}
    for spec in tuned:
        result = tuned_run(store, spec)
        assert result is not None  # every trial has ended
        print(f"{describe_point(spec)}: {result.choice.words()}", file=sys.stderr)
        if result.final is not None:
            chosen[spec.run_id] = result.final
    return [
        chosen.get(spec.run_id, spec)
        for spec in specs
        if spec not in tuned or spec.run_id in chosen
    ]


def describe_point(spec: RunSpec) -> str:
    """A sweep point in a few words: solver, κ and I."""
    held = spec.constraint
    kappa = f" κ = {held.kappa:g}" if held is not None else ""
    alpha, beta = spec.interval
    return f"{spec.solver}{kappa} I = [{alpha:g}, {beta:g})"


def _made(store: Store, tuned: TunedRun, args: argparse.Namespace) -> str:
    """The tuned run's id once it has ended: the chosen trial's, or a new run of the chosen
    setting at full length."""
    assert tuned.final is not None
    (run_id,) = submit([tuned.final], store, workers=args.workers)
    wait(store, [run_id])
    return run_id


def format_trials(choice: Choice, quantity: str = "value") -> str:
    """The trials as a table (`Choice.rows`): each setting as given, the measured values to
    four places, the chosen one ◆."""
    rows = choice.rows(quantity)
    header = list(rows[0])
    cells = [[_cell(row[c], c in choice.plan.grid) for c in header] for row in rows]
    header[-1] = ""
    widths = [max(len(row[i]) for row in (header, *cells)) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in (header, *cells)
    )


def _cell(value: object, setting: bool) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if isinstance(value, float) and not setting else str(value)
