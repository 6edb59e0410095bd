"""`python -m engine.runs --home DIR [--workers N] [--idle-exit S]`: the background runner of a
store, as `ensure_runner` starts it (`python -m engine runner` does the same, after importing the
whole command line). It exits with 128 + the signal's number when SIGTERM or SIGINT stopped it,
as a shell reports a process killed by that signal."""

from __future__ import annotations

import argparse

from engine.runs.runner import IDLE_EXIT_SECONDS, serve_and_say


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.runs", description=__doc__)
    parser.add_argument("--home", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--idle-exit", type=float, default=IDLE_EXIT_SECONDS)
    args = parser.parse_args(argv)
    return serve_and_say(args.home, args.workers, args.idle_exit)


raise SystemExit(main())
