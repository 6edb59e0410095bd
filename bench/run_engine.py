"""Run-engine overhead and sweep efficiency, measured in one go on a private store.

1. Overhead per run (warm runner, tiny runs on Adult): submission to start, and the end of the
   run to its result being visible to a reader; also the in-worker cost around the solver (data
   from the cache, problem set-up, final exact metrics, saving artifacts). Target: < 0.5 s each.
2. A 10-point κ sweep of IDCA on Adult on 2 workers: wall time ÷ (sum of the runs' solver
   seconds / 2). Target: ≤ 1.2.

    .venv/bin/python bench/run_engine.py [--outer 10] [--quick]

--quick: 2 overhead runs and a 2-point sweep at K = 1, a check that the bench runs, in seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.runs import RunSpec, Store, sweep_specs, wait  # noqa: E402
from engine.runs.runner import stop_runners  # noqa: E402
from engine.runs.submit import submit  # noqa: E402
from engine.solvers import Budget  # noqa: E402
from engine.status import FINAL  # noqa: E402

INTERVAL = (0.05, 0.30)
OVERHEAD_RUNS = 10
KAPPAS = (0.3, 0.25, 0.2, 0.15, 0.1, 0.08, 0.05, 0.03, 0.02, 0.01)
QUICK = {"runs": 2, "kappas": (0.3, 0.01), "outer": 1}


def base_spec(**changes) -> RunSpec:
    spec = RunSpec(
        data=AdultSpec(),
        prepare=PrepareOptions(grouping=(GroupingSpec("sex"),)),
        model=ModelSpec(cross_terms=True),
        constraint=ConstraintSpec("pSP", 0.05, INTERVAL),
        interval=INTERVAL,
        solver="idca",
    )
    return RunSpec(**{**spec.__dict__, **changes})


def overheads(store: Store, count: int = OVERHEAD_RUNS) -> None:
    submit([base_spec(budget=Budget(max_iterations=1), seed=999)], store)  # warm the runner
    wait(store, [base_spec(budget=Budget(max_iterations=1), seed=999).run_id])
    to_start, to_visible, around = [], [], []
    for seed in range(count):
        spec = base_spec(budget=Budget(max_iterations=1), seed=seed)
        (run_id,) = submit([spec], store)
        while store.run(run_id).status not in FINAL:
            time.sleep(0.005)
        seen = time.time()
        row = store.run(run_id)
        to_start.append(row.started - row.created)
        to_visible.append(seen - row.finished)
        around.append(row.finished - row.started - row.seconds)
    print(f"overhead per run, median of {count} (warm runner):")
    print(f"  submission → start         {statistics.median(to_start):6.3f} s  (target < 0.5)")
    print(f"  end → result visible       {statistics.median(to_visible):6.3f} s  (target < 0.5)")
    print(
        f"  in-worker around solver    {statistics.median(around):6.3f} s  "
        "(cached data, set-up, final exact metrics, artifacts)"
    )


def sweep_efficiency(store: Store, outer: int, kappas: tuple[float, ...] = KAPPAS) -> None:
    base = base_spec(config={"outer_iterations": outer})
    specs = sweep_specs(base, list(kappas), [INTERVAL], ["idca"], [0])
    start = time.time()
    ids = submit(specs, store, workers=2)
    wait(store, ids)
    wall = time.time() - start
    rows = [store.run(i) for i in ids]
    solver = sum(r.seconds for r in rows)
    print(f"\n{len(kappas)}-point κ sweep, IDCA K = {outer} on Adult, 2 workers:")
    print(
        f"  wall {wall:.1f} s, sum of solver times {solver:.1f} s, "
        f"wall ÷ (sum / 2) = {wall / (solver / 2):.2f}  (target ≤ 1.2)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--outer", type=int, help="IDCA outer iterations per run (default 10)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK['runs']} overhead runs (not {OVERHEAD_RUNS}) and a {len(QUICK['kappas'])}-"
        f"point sweep (not {len(KAPPAS)}) at K = {QUICK['outer']} unless --outer says",
    )
    args = parser.parse_args()
    outer = args.outer or (QUICK["outer"] if args.quick else 10)
    runs, kappas = (QUICK["runs"], QUICK["kappas"]) if args.quick else (OVERHEAD_RUNS, KAPPAS)
    with tempfile.TemporaryDirectory() as home:
        store = Store(home)
        try:
            overheads(store, runs)
            sweep_efficiency(store, outer, kappas)
        finally:
            stop_runners(home)


if __name__ == "__main__":
    main()
