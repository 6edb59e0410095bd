"""The FairFront command line: one sub-command group per module, user errors without tracebacks."""

from __future__ import annotations

import argparse
import sys

from engine.cli import data_commands
from engine.errors import UserError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m engine",
        description="FairFront: train classifiers under fairness constraints.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    data_commands.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
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
