"""The FairFront command line: one sub-command group per module, errors as one line.

A `UserError` (bad input, a refused combination, a missing file) is printed as `error: ...` and
the command exits with 2, as argparse does for bad flags. Anything else is a bug: it must not be
hidden, yet a traceback is not for the person at the terminal. So it is printed as one line that
says it is a bug and where its traceback was written (a file in the temporary folder), and the
command exits with 1; `FAIRFRONT_DEBUG=1` raises it instead, with the traceback. Output cut short
by its reader (`fairfront runs list | head`) ends the command quietly, as other commands do.

The command is installed as `fairfront` and also runs as `python -m engine`; its usage lines
name it as it was called.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
import warnings

from engine.cli import (
    benchmark_commands,
    data_commands,
    decision_commands,
    predict_commands,
    run_commands,
    runs_commands,
)
from engine.errors import UserError

USER_ERROR = 2
INTERNAL_ERROR = 1
INTERRUPTED = 130


def program_name() -> str:
    """`fairfront` when run as the installed command, else `python -m engine`."""
    called = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "fairfront" if called == "fairfront" else "python -m engine"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name(),
        description="FairFront: train classifiers under fairness constraints.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    data_commands.register(commands)
    run_commands.register(commands)
    runs_commands.register(commands)
    predict_commands.register(commands)
    benchmark_commands.register(commands)
    decision_commands.register(commands)
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
        print(f"error: {error.on_command_line()}", file=sys.stderr)
        return USER_ERROR
    except BrokenPipeError:
        # the reader has gone: point stdout at nothing so the interpreter's final flush is quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as error:
        if os.environ.get("FAIRFRONT_DEBUG"):
            raise
        print(
            f"internal error ({type(error).__name__}: {error}); this is a bug in FairFront, "
            f"its traceback is in {write_traceback()}",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


def write_traceback() -> str:
    """The current exception's traceback, written to a new file in the temporary folder."""
    with tempfile.NamedTemporaryFile(
        "w", prefix="fairfront-error-", suffix=".txt", delete=False
    ) as handle:
        traceback.print_exc(file=handle)
    return handle.name
