"""A κ frontier of IDCA cold and as a continuation sweep, through the run store on 2 workers.

Adult (bundled), groups by sex, linear model with group cross-terms (paper 003, §7.1),
I = [5 %, 30 %), 10 values of κ from 0.3 to 0.01 (geometric), the paper's IDCA defaults. The
same sweep runs twice on fresh stores, as the Frontier page and `sweep` run it:
- cold: every point from w⁰ = 0 (paper 003, G.2.2);
- warm: a continuation sweep (`engine.runs.continuation`): two chains, tight to loose κ, each
  point starting from the model of the point before it in its chain.

Printed: the wall time of each sweep from submission to the last result (targets: warm ≤ 60 s),
and per κ the test accuracy, test 1 − pSP and train pSP (the split the constraint is held on)
of both, the warm point's accuracy minus its cold twin's (target: within 0.003, at equal or
better fairness; counted also against the sampling noise σ of test pSP, `engine.fairness.noise`,
since two models that hold train pSP to the same κ can differ on test by about that much), and
each run's solver seconds and iterations.

    .venv/bin/python bench/frontier_speed.py [--points 10] [--workers 2] [--quick]

--quick: 2 κ and IDCA at K = 1 outer and T = 50 inner iterations, a check that the bench runs, in seconds (with
`--workers 1` each sweep's runner warms up one worker, and the two κ make one chain).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.fairness.noise import value_noise  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.runs import RunSpec, Store, submit_sweep, sweep_specs, wait  # noqa: E402
from engine.runs.runner import stop_runners  # noqa: E402

INTERVAL = (0.05, 0.30)
ACCURACY_TOLERANCE = 0.003  # the target for a warm point against its cold twin
QUICK = {"points": 2, "outer": 1, "inner": 50}


def base_spec(config: dict[str, int] | None = None) -> RunSpec:
    """The sweep's run at κ = 0.05, IDCA with its defaults changed by `config`."""
    return RunSpec(
        data=AdultSpec(),
        prepare=PrepareOptions(grouping=(GroupingSpec("sex"),)),
        model=ModelSpec(cross_terms=True),
        constraint=ConstraintSpec("pSP", 0.05, INTERVAL),
        interval=INTERVAL,
        solver="idca",
        config=config or {},
    )


def run_sweep(
    kappas: list[float], chains: int, workers: int, config: dict[str, int] | None = None
) -> tuple[float, dict[float, dict]]:
    """Wall time of the sweep on a fresh store, and per κ its run's test metrics and costs."""
    specs = sweep_specs(base_spec(config), kappas, [INTERVAL], ["idca"], [0], chains=chains)
    with tempfile.TemporaryDirectory() as home:
        store = Store(home)
        try:
            start = time.perf_counter()
            submit_sweep("frontier speed", specs, {}, store, workers=workers)
            wait(store, [s.run_id for s in specs])
            wall = time.perf_counter() - start
            points = {}
            for spec in specs:
                row, metrics = store.run(spec.run_id), store.metrics(spec.run_id)
                test = metrics["test"]
                points[spec.constraint.kappa] = {
                    "status": row.status,
                    "accuracy": test["accuracy"],
                    "train": metrics["train"]["constraint"],
                    "fairness": 1.0 - test["constraint"],
                    "seconds": row.seconds,
                    "iterations": row.iterations,
                    "warm": spec.warm_start is not None,
                }
        finally:
            stop_runners(store.home)
    return wall, points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, help="κ values (default 10)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK['points']} κ unless --points says, and IDCA at K = {QUICK['outer']} outer "
        f"and T = {QUICK['inner']} inner iterations (not its defaults)",
    )
    args = parser.parse_args()
    points = args.points or (QUICK["points"] if args.quick else 10)
    config = (
        {"outer_iterations": QUICK["outer"], "inner_iterations": QUICK["inner"]}
        if args.quick
        else None
    )
    kappas = [float(f"{k:.4g}") for k in np.geomspace(0.3, 0.01, points)]
    prepared = load_prepared(base_spec().data, base_spec().prepare)  # prepared (and cached) once
    test = prepared.split("test")
    sigma = value_noise(base_spec().constraint, test.groups, test.y)
    cold_wall, cold = run_sweep(kappas, 0, args.workers, config)
    warm_wall, warm = run_sweep(kappas, args.workers, args.workers, config)
    defaults = (
        ""
        if config is None
        else f" at K = {config['outer_iterations']}, T = {config['inner_iterations']}"
    )
    print(
        f"Adult by sex, linear with cross-terms, I = [5%, 30%), IDCA{defaults}, {points} κ "
        f"from 0.3 to 0.01, {args.workers} workers\n"
    )
    print(
        f"wall time: cold {cold_wall:.0f} s, warm {warm_wall:.0f} s "
        f"(warm ÷ cold {warm_wall / cold_wall:.2f}; target warm ≤ 60 s)\n"
    )
    print(
        f"{'κ':>7} | {'cold acc':>8} {'1−pSP':>7} {'train':>6} {'s':>5} {'iter':>6} | "
        f"{'warm acc':>8} {'1−pSP':>7} {'train':>6} {'s':>5} {'iter':>6} {'start':>5} | "
        f"{'Δacc':>7} {'Δ(1−pSP)':>9} ok"
    )
    within = within_noise = 0
    for kappa in kappas:
        c, w = cold[kappa], warm[kappa]
        d_acc, d_fair = w["accuracy"] - c["accuracy"], w["fairness"] - c["fairness"]
        ok = abs(d_acc) <= ACCURACY_TOLERANCE and d_fair >= 0
        within += ok
        within_noise += abs(d_acc) <= ACCURACY_TOLERANCE and d_fair >= -sigma
        print(
            f"{kappa:>7.4f} | {c['accuracy']:>8.4f} {c['fairness']:>7.4f} {c['train']:>6.4f} "
            f"{c['seconds']:>5.1f} {c['iterations']:>6} | {w['accuracy']:>8.4f} "
            f"{w['fairness']:>7.4f} {w['train']:>6.4f} {w['seconds']:>5.1f} {w['iterations']:>6} {'warm' if w['warm'] else 'cold':>5} | "
            f"{d_acc:>+7.4f} {d_fair:>+9.4f} {'yes' if ok else 'no'}"
        )
    print(
        f"\nwarm points within {ACCURACY_TOLERANCE} accuracy of their cold twin at equal or "
        f"better test fairness: {within} of {len(kappas)}; at test fairness no worse than "
        f"the sampling noise σ = {sigma:.4f} of test pSP: {within_noise} of {len(kappas)}"
    )
    print(
        f"solver seconds in all: cold {sum(p['seconds'] for p in cold.values()):.0f}, warm "
        f"{sum(p['seconds'] for p in warm.values()):.0f}; iterations: cold "
        f"{sum(p['iterations'] for p in cold.values()):,}, warm "
        f"{sum(p['iterations'] for p in warm.values()):,}"
    )


if __name__ == "__main__":
    main()
