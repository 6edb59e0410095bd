"""IDCA inner-iteration cost against the cost of the data's own matrix products, and one full
IDCA solve with the paper's defaults.

For each data set it prints the time of one X̃·w plus one X̃ᵀ·r (with the design the solver uses),
the time per IDCA inner iteration (Alg. 2 step, the median over whole outer iterations so the
per-outer linearisation is included), and their ratio (target ≤ 3). Then it runs IDCA with its
default configuration (paper 003 G.2.2: K = 200, T = 200, ε = 1e-3) on Adult (target ≤ 20 s).

    .venv/bin/python bench/solver_speed.py [--acs-root ../shared/data/acs/pums] [--skip-full]
        [--quick]

--quick times 30 products and one outer iteration of 20 steps per data set, and skips the full
solve: a check that the bench runs, in seconds, not a measurement.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.acs import ACSSpec  # noqa: E402
from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.solvers import solve  # noqa: E402
from engine.solvers.driver import BATCH  # noqa: E402
from engine.solvers.paper003.cards import IDCAConfig  # noqa: E402
from engine.solvers.paper003.idca import IDCA  # noqa: E402

INTERVAL = (0.05, 0.30)
PRODUCT_REPEATS, OUTER, INNER = 300, 9, IDCAConfig().inner_iterations
QUICK_PRODUCT_REPEATS, QUICK_OUTER, QUICK_INNER = 30, 1, 20


def product_seconds(problem: Problem, repeats: int = PRODUCT_REPEATS) -> float:
    design = problem.design()
    rng = np.random.default_rng(0)
    w, r = rng.normal(size=design.shape[1]), rng.normal(size=design.shape[0])
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        design.matvec(w)
        design.rmatvec(r)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def step_seconds(problem: Problem, outer: int = OUTER, inner: int = INNER) -> float:
    """Median over `outer` iterations of `inner` steps of their time per inner step (robust to
    a busy machine), stepping as the driver does (`advance`, batches of steps in the compiled
    loop)."""
    config = IDCAConfig(inner_iterations=inner, patience=0)
    solver = IDCA(problem, config, np.random.default_rng(0))
    times = []
    for _ in range(outer + 1):  # the first outer iteration warms up
        start, first, done = time.perf_counter(), solver.total, solver.outer + 1
        while solver.outer < done:
            solver.advance(BATCH)
        times.append((time.perf_counter() - start) / (solver.total - first))
    return statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    default_root = Path(__file__).resolve().parents[2] / "shared/data/acs/pums"
    parser.add_argument("--acs-root", type=Path, default=default_root)
    parser.add_argument("--skip-full", action="store_true", help="skip the full IDCA solve")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"time {QUICK_PRODUCT_REPEATS} products and {QUICK_OUTER} outer iteration of "
        f"{QUICK_INNER} steps per data set (not {PRODUCT_REPEATS}, and {OUTER} of {INNER}), "
        "and no full solve",
    )
    args = parser.parse_args()
    repeats, outer, inner = (
        (QUICK_PRODUCT_REPEATS, QUICK_OUTER, QUICK_INNER)
        if args.quick
        else (PRODUCT_REPEATS, OUTER, INNER)
    )
    torch.set_num_threads(1)
    sex = PrepareOptions(grouping=(GroupingSpec("sex"),))
    cases = [("Adult, sex", AdultSpec(), sex)]
    if (args.acs_root / "2018/1-Year/psam_p09.csv").is_file():
        spec = ACSSpec(states=("CT",), year=2018, task="income", root=str(args.acs_root))
        cases.append(
            ("ACS CT 2018 income, SEX", spec, PrepareOptions(grouping=(GroupingSpec("SEX"),)))
        )
    constraint = ConstraintSpec("pSP", 0.05, INTERVAL)
    print(
        f"{'data set':<28}{'n':>8}{'d':>6}{'sparse':>8}{'X·w+Xᵀ·r ms':>13}{'step ms':>10}{'ratio':>8}"
    )
    problems = {}
    for name, spec, options in cases:
        problem = Problem(
            load_prepared(spec, options), ModelSpec(cross_terms=True), constraint, interval=INTERVAL
        )
        problems[name] = problem
        product, step = product_seconds(problem, repeats), step_seconds(problem, outer, inner)
        n, d = problem.design().shape
        sparse = all(b.sparse for b in problem.design().blocks)
        print(
            f"{name:<28}{n:>8}{d:>6}{sparse!s:>8}{product * 1e3:>13.3f}{step * 1e3:>10.3f}"
            f"{step / product:>8.2f}"
        )
    if args.skip_full or args.quick:
        return
    problem = problems["Adult, sex"]
    start, cpu = time.perf_counter(), time.process_time()
    solution = solve(problem, "idca")
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    test = solution.metrics["test"]
    print(f"\nfull IDCA solve, Adult, κ = 0.05, I = [5%, 30%), defaults {IDCAConfig()}:")
    print(
        f"  wall {wall:.1f} s (target ≤ 20 s), CPU {cpu:.1f} s; "
        f"{solution.iterations:,} inner iterations; {solution.reason}"
    )
    print(f"  test accuracy {test['accuracy']:.4f}, test 1 − pSP {1 - test['psp']:.4f}")


if __name__ == "__main__":
    main()
