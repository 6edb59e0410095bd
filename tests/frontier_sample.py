"""Random sweeps of frontier inputs (`engine.runs.frontier.RunResult`) for the frontier's tests."""

from __future__ import annotations

import itertools

import numpy as np

from engine.runs.frontier import RunResult

INTERVAL = (0.05, 0.3)


def sweep_results(
    seed: int,
    seeds: int = 3,
    intervals: tuple[tuple[float, float], ...] = (INTERVAL,),
    majority: float | None = None,
) -> list[RunResult]:
    """An unconstrained reference, IDCA at four κ and the penalty method at three, on each
    interval and seed, with random test accuracy, pSP and constrained value; every seed of
    κ = 0.01 lies well above κ, so that point misses κ whatever the seeds' spread. With
    `majority`, each run also reports it as the majority rate."""
    rng = np.random.default_rng(seed)
    runs = []
    for interval in intervals:
        for solver, kappas in (
            ("unconstrained", [None]),
            ("idca", [0.01, 0.05, 0.1, 0.2]),
            ("penalty", [0.03, 0.1, 0.3]),
        ):
            for kappa, run_seed in itertools.product(kappas, range(seeds)):
                low = 0.2 if kappa == 0.01 else 0.0
                metrics = {
                    "accuracy": float(rng.uniform(0.7, 0.85)),
                    "psp": float(rng.uniform(0, 0.6)),
                    "constraint": float(rng.uniform(low, 0.25)),
                }
                if majority is not None:
                    metrics["majority"] = majority
                run_id = f"{solver}-{kappa}-{interval[0]:g}-{run_seed}"
                runs.append(RunResult(run_id, solver, kappa, interval, run_seed, {"test": metrics}))
    return runs
