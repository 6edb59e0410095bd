"""`python -m engine decide RUN_ID --note TEXT --out RECORD.html` and `runs decisions`: choose a
finished run's model, with its one-page decision record, and list the decisions made."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.cli.output import write_output
from engine.runs import Store
from engine.runs.decision import Decision, add_decision, decide, decisions
from engine.runs.decision_record import decision_record
from engine.runs.decision_words import interval_label

CHECKSUM_SHOWN = 12  # hexadecimal digits of the checksum a listing shows
NOTE_SHOWN = 60  # characters of the note a listing shows


def register(commands: argparse._SubParsersAction) -> None:
    choose = commands.add_parser(
        "decide",
        help="choose a finished run's model: store the decision and write its decision record",
        description="Store the decision to use the model of a finished run, with a note, and "
        "write a one-page HTML decision record for readers who were not at the screen: the "
        "data and its groups, what κ and I mean for them, the model's verdict with its "
        "uncertainty, the cost against the unconstrained reference, the alternatives in the "
        "store, the limits, the note and the model file's SHA-256 checksum.",
    )
    choose.add_argument("run_id", metavar="RUN_ID", help="the run (an id or an unambiguous prefix)")
    choose.add_argument("--note", required=True, help="who chooses the model, for what, and why")
    choose.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="RECORD.html",
        help="where to write the decision record",
    )
    choose.add_argument(
        "--home",
        type=Path,
        default=None,
        help="run store folder (default $FAIRFRONT_HOME or data/runs)",
    )
    choose.set_defaults(handler=decide_command)


def register_runs_action(actions: argparse._SubParsersAction) -> None:
    """`runs decisions`, among the actions of `runs`."""
    listing = actions.add_parser(
        "decisions", help="the decisions made, newest first: when, run, κ, I, verdict, note"
    )
    listing.add_argument("--home", type=Path, default=None)
    listing.add_argument("--run", help="only the decisions of this run (an id or prefix)")
    listing.set_defaults(handler=list_decisions)


def decide_command(args: argparse.Namespace) -> int:
    store = Store(args.home)
    decision = decide(store, args.run_id, args.note)
    write_output(args.out, decision_record(store, decision))
    add_decision(store, decision)
    print(
        f"run {decision.run_id} chosen ({decision.verdict}); its model file's SHA-256 is "
        f"{decision.checksum}; decision record written: {args.out}",
        file=sys.stderr,
    )
    return 0


def list_decisions(args: argparse.Namespace) -> int:
    store = Store(args.home)
    run_id = store.run(args.run).id if args.run else None
    made = decisions(store, run_id)
    width = max((len(d.verdict) for d in made), default=0) + 2
    print(f"{'when':<18}{'run':<18}{'κ':>7}{'I':>16}  {'verdict':<{width}}{'checksum':<14}note")
    for decision in made:
        print(decision_line(decision, width))
    return 0


def decision_line(decision: Decision, verdict_width: int) -> str:
    """One decision as a line of the listing, its verdict in a column of `verdict_width`."""
    kappa = "—" if decision.kappa is None else f"{decision.kappa:g}"
    interval = interval_label(decision.interval)
    note = " ".join(decision.note.split())
    if len(note) > NOTE_SHOWN:
        note = note[: NOTE_SHOWN - 1] + "…"
    return (
        f"{decision.made.astimezone():%Y-%m-%d %H:%M}  {decision.run_id:<18}{kappa:>7}"
        f"{interval:>16}  {decision.verdict:<{verdict_width}}"
        f"{decision.checksum[:CHECKSUM_SHOWN]:<14}{note}"
    )
