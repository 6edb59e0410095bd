"""Plain IDCA against IDCA honouring κ on validation, side by side, per κ, in one process.

Adult (bundled), groups by sex, linear model with group cross-terms (paper 003, §7.1),
pSP on I = [5 %, 30 %), the paper's IDCA defaults, κ ∈ {0.2, 0.1, 0.05, 0.02, 0.01}. Each κ is
solved twice from w⁰ = 0: plainly at κ (`engine.solvers.solve`), and honouring κ on the
validation split (`engine.solvers.honour.solve_honouring`): first held on the exact training
value (`engine.solvers.exact_train`), then, while the exact validation pSP of the model exceeds
κ, solved again at a tighter inner κ′, each solve from the model before.

Printed, one line per κ, for the plain run and then the honoured one:
- κ′: the inner tolerance of the reported model (κ itself for the plain run), and for the
  honoured run how many solves its search took;
- exact pSP on train, val and test (no surrogate), and whether the test pSP meets κ (✓);
- test accuracy;
- wall time in seconds (the honoured run's covers all its solves).
Above the table, the sampling noise of pSP on the honoured split: its standard error σ
(`engine.fairness.noise`), below about 2σ of which the split cannot tell a model that meets κ
from one that does not (`engine.solvers.honour`). Then a summary: how many honoured models meet
κ on test and on validation (beside the plain ones), the mean test accuracy the honoured models
give up against the plain ones, and the honoured runs' wall time over the plain runs'. Each
honoured run's stop sentence follows.

    .venv/bin/python bench/honour_kappa.py [--quick] [--kappas 0.1 0.05] [--split val]
        [--seconds S]

--seconds S stops each run, plain or honoured, after S wall seconds (`engine.solvers.Budget`);
`--kappas 0.1 --seconds 2` checks in seconds that the bench runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.runs.honour_search import honour_search  # noqa: E402
from engine.solvers import Budget, Solution, solve  # noqa: E402
from engine.solvers.honour import RESOLVES, SplitNoise, solve_honouring, split_noise  # noqa: E402
from engine.solvers.honour_rules import HONOUR_SPLITS  # noqa: E402

INTERVAL = (0.05, 0.30)
KAPPAS = (0.2, 0.1, 0.05, 0.02, 0.01)
QUICK_KAPPAS = (0.1, 0.05)
SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class Measured:
    """One run: the κ′ of its reported model, its solves, exact pSP per split, test accuracy,
    wall seconds, and its stop reason."""

    kappa_prime: float
    solves: int
    psp: dict[str, float]
    accuracy: float
    seconds: float
    reason: str

    def meets(self, kappa: float, split: str) -> bool:
        return self.psp[split] <= kappa


def problem(prepared, kappa: float) -> Problem:
    return Problem(
        prepared,
        ModelSpec(cross_terms=True),
        ConstraintSpec("pSP", kappa, INTERVAL),
        interval=INTERVAL,
    )


def measure(run: Callable[[], Solution], kappa: float) -> Measured:
    """Run `run` and measure its solution."""
    start = time.perf_counter()
    solution = run()
    seconds = time.perf_counter() - start
    search = honour_search(solution.trajectory)
    chosen = search.chosen if search is not None else None
    return Measured(
        kappa_prime=chosen.kappa_prime if chosen is not None else kappa,
        solves=len(search.rows) if search is not None else 1,
        psp={split: solution.metrics[split]["constraint"] for split in SPLITS},
        accuracy=solution.metrics["test"]["accuracy"],
        seconds=seconds,
        reason=solution.reason,
    )


def cells(run: Measured, kappa: float) -> str:
    psp = " ".join(f"{run.psp[split]:>7.4f}" for split in SPLITS)
    mark = "✓" if run.meets(kappa, "test") else " "
    return (
        f"{run.kappa_prime:>8.4g} {run.solves:>2} {psp} {mark} {run.accuracy:>7.4f} "
        f"{run.seconds:>6.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help=f"κ ∈ {set(QUICK_KAPPAS)} only")
    parser.add_argument(
        "--kappas", type=float, nargs="+", help=f"default {' '.join(map(str, KAPPAS))}"
    )
    parser.add_argument(
        "--split",
        choices=HONOUR_SPLITS,
        default="val",
        help="the split κ is honoured on (default val)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        help="wall budget of each run, plain and honoured (default: none, IDCA stops by its own "
        "rule); a small one makes a quick check that the bench runs",
    )
    args = parser.parse_args()
    budget = None if args.seconds is None else Budget(max_seconds=args.seconds)
    kappas = args.kappas or (QUICK_KAPPAS if args.quick else KAPPAS)
    prepared = load_prepared(AdultSpec(), PrepareOptions(grouping=(GroupingSpec("sex"),)))
    rows = []
    for kappa in kappas:
        at = problem(prepared, kappa)
        plain = measure(partial(solve, at, "idca", budget=budget), kappa)
        honoured = measure(partial(solve_honouring, at, "idca", args.split, budget=budget), kappa)
        rows.append((kappa, plain, honoured))
        print(
            f"κ = {kappa:g} done: plain {plain.seconds:.0f} s, honoured {honoured.seconds:.0f} s",
            file=sys.stderr,
        )
    noise = split_noise(problem(prepared, kappas[0]), args.split)
    report(rows, args.split, len(prepared.train), noise, args.seconds)


def meeting(runs: list[tuple[float, Measured]], split: str) -> int:
    """How many of the runs (κ, run) meet their κ on `split`."""
    return sum(run.meets(kappa, split) for kappa, run in runs)


def report(
    rows: list[tuple[float, Measured, Measured]],
    split: str,
    train_rows: int,
    noise: SplitNoise,
    seconds: float | None,
) -> None:
    budget = "" if seconds is None else f", {seconds:g} s per run"
    print(
        f"Adult by sex ({train_rows:,} training rows), linear with cross-terms, pSP on "
        f"I = [5%, 30%), IDCA defaults{budget}; honoured on {split}"
    )
    print(
        f"pSP on {split} ({noise.rows:,} rows): σ = {noise.sigma:.4f}, 2σ = "
        f"{RESOLVES * noise.sigma:.4f}\n"
    )
    head = f"{'κ′':>8} {'n':>2} {'train':>7} {'val':>7} {'test':>7} ✓ {'acc':>7} {'s':>6}"
    print(f"{'κ':>5} | {'plain':<{len(head)}} | honoured")
    print(f"{'':>5} | {head} | {head}")
    for kappa, plain, honoured in rows:
        print(f"{kappa:>5g} | {cells(plain, kappa)} | {cells(honoured, kappa)}")
    count = len(rows)
    plain_runs = [(kappa, run) for kappa, run, _ in rows]
    honoured_runs = [(kappa, run) for kappa, _, run in rows]
    cost = statistics.mean(p.accuracy - h.accuracy for _, p, h in rows)
    ratio = sum(h.seconds for *_, h in rows) / sum(p.seconds for _, p, _ in rows)
    print()
    for where in ("test", split):
        print(
            f"meet κ on {where}: honoured {meeting(honoured_runs, where)} of {count}, "
            f"plain {meeting(plain_runs, where)} of {count}"
        )
    print(
        f"test accuracy given up by honouring, mean over κ: {cost:+.4f}; wall time honoured ÷ "
        f"plain: {ratio:.2f} (per κ: "
        f"{', '.join(f'{h.seconds / p.seconds:.1f}' for _, p, h in rows)})\n"
    )
    for kappa, _, honoured in rows:
        print(f"κ = {kappa:g}: {honoured.reason}")


if __name__ == "__main__":
    main()
