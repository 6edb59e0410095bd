"""`python -m engine.runs --home DIR [--workers N] [--idle-exit S]`: the background runner of a
store, as `ensure_runner` starts it (`python -m engine runner` does the same, after importing the
whole command line)."""

from __future__ import annotations

import argparse
import sys
import time

from engine.runs.runner import IDLE_EXIT_SECONDS, Runner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.runs", description=__doc__)
    parser.add_argument("--home", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--idle-exit", type=float, default=IDLE_EXIT_SECONDS)
    args = parser.parse_args(argv)
    started = time.monotonic()
    if not Runner(args.home, args.workers, args.idle_exit).serve():
        print("another runner serves this store", file=sys.stderr)
    else:
        print(f"runner done after {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


raise SystemExit(main())
