"""The FairFront command line: one sub-command group per module, user errors without tracebacks."""

from __future__ import annotations

import argparse
import sys
import warnings

from engine.cli import data_commands, run_commands, runs_commands
from engine.errors import UserError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m engine",
        description="FairFront: train classifiers under fairness constraints.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    data_commands.register(commands)
    run_commands.register(commands)
    runs_commands.register(commands)
    return parser


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings meant for the user (e.g. a narrow rank band) as one plain line."""
    print(f"warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    warnings.showwarning = show_warning
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
