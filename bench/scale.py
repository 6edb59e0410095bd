"""Solvers at scale: IDCA and a minibatch solver on synthetic pooled ACS income data.

The data are the synthetic person files of all 50 states and Puerto Rico in the census layout
(`SyntheticACSSpec("all")`, labelled synthetic), as many persons as give the wanted number of
income-task rows (all splits; 3.4 M persons give about the 1.66 M rows of paper 003's Table 2).
The setup is that table's: label income > 50,000, groups by sex, a linear model with group cross
terms, pSP on I = [20 %, 40 %) with the ramp surrogate (κ = 0.05), split 60/20/20.

Each size runs in a fresh process, after the files were written by another one, and prints:
- prepare s: reading the state files and preparing the splits (`load_prepared`, no cache);
- peak GB: the process's RSS high-water mark (preparing, solving, reporting);
- X·w+Xᵀ·r ms: one X̃·w plus one X̃ᵀ·r on the training design;
- step ms and ratio: IDCA's time per inner step (its solver clock over its steps, the outer
  linearisations included) and that time over the products';
- IDCA s: wall time of `solve(problem, "idca")` to the paper's stopping rule, all K outer
  iterations of T steps (`IDCAConfig`: K = 200, T = 200, ε = 1e-3, with `patience=0`: the early
  stop when f0 no longer falls is off, so every size runs the same 40,000 steps), then its CPU time
  (the machine may be shared) and the solver's own clock (the driver's records and exact metrics
  excluded);
- report s: `Problem.report` of the result, all exact metrics on all splits;
- load: the machine's 1-minute load average at the end (2 cores: above 2, other work shared them).
Then the exponent b of time ∝ rows^b fitted over the sizes, and a minibatch solver (SSw, paper
000) on the largest size for a fixed time budget: its steps and peak memory.

Targets (2 cores, 24 GB): 1.66 M rows IDCA < 10 min and peak memory < 12 GB; 200 k rows (the size
of California alone) < 60 s.

    .venv/bin/python bench/scale.py [--sizes 20000 100000 400000 1664500] [--quick]
        [--minibatch-seconds 120] [--outer K]

--quick runs 20 k and 100 k rows with K = 10 outer iterations and a 10 s minibatch run. The
synthetic files go to the data cache (FAIRFRONT_CACHE), where later runs find them.
`--sizes 5000 --outer 1 --minibatch-seconds 1` checks in seconds that the bench runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.solver_speed import product_seconds  # noqa: E402
from engine.data.acs import SyntheticACSSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.data.synthetic_pums import FULL_SIZE_PERSONS  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.solvers import Budget, solve  # noqa: E402
from engine.solvers.paper003.cards import IDCAConfig  # noqa: E402

FULL_SIZE_ROWS = 1_664_500  # paper 003, Table 1: ACS income, all states pooled
SIZES = (20_000, 100_000, 400_000, FULL_SIZE_ROWS)
QUICK_SIZES = (20_000, 100_000)
INTERVAL = (0.2, 0.4)  # paper 003, Table 2
KAPPA = 0.05
MINIBATCH_SOLVER = "ssw"
GB = 2**30


def spec_for(rows: int) -> SyntheticACSSpec:
    """Synthetic persons of all states that give about `rows` income-task rows."""
    persons = round(rows * FULL_SIZE_PERSONS / FULL_SIZE_ROWS)
    return SyntheticACSSpec("all", 2018, "income", persons)


def problem_of(prepared) -> Problem:
    return Problem(
        prepared,
        ModelSpec(cross_terms=True),
        ConstraintSpec("pSP", KAPPA, INTERVAL),
        interval=INTERVAL,
    )


def prepare_timed(rows: int) -> tuple[Problem, float]:
    options = PrepareOptions(grouping=(GroupingSpec("SEX"),))
    start = time.perf_counter()
    prepared = load_prepared(spec_for(rows), options, use_cache=False)
    return problem_of(prepared), time.perf_counter() - start


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GB  # kB on Linux


def measure_idca(rows: int, outer: int) -> dict:
    """One size, in this (fresh) process."""
    problem, prepare = prepare_timed(rows)
    products = product_seconds(problem, repeats=10)
    start, cpu = time.perf_counter(), time.process_time()
    solution = solve(problem, "idca", IDCAConfig(outer_iterations=outer, patience=0))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    start = time.perf_counter()
    metrics = problem.report(solution.params)
    report = time.perf_counter() - start
    step = solution.seconds / max(solution.iterations, 1)
    return {
        "rows": sum(len(problem.data.split(s)) for s in ("train", "val", "test")),
        "train": len(problem.data.train),
        "columns": problem.design().shape[1],
        "sparse": bool(problem.data.train.X.__class__.__name__ != "ndarray"),
        "prepare": prepare,
        "products": products,
        "step": step,
        "ratio": step / products,
        "wall": wall,
        "cpu": cpu,
        "solver": solution.seconds,
        "iterations": solution.iterations,
        "stop": solution.reason,
        "report": report,
        "peak": peak_gb(),
        "accuracy": metrics["test"]["accuracy"],
        "psp": metrics["test"]["psp"],
        "load": os.getloadavg()[0],
    }


def measure_minibatch(rows: int, seconds: float) -> dict:
    problem, prepare = prepare_timed(rows)
    start = time.perf_counter()
    solution = solve(problem, MINIBATCH_SOLVER, budget=Budget(max_seconds=seconds))
    return {
        "rows": sum(len(problem.data.split(s)) for s in ("train", "val", "test")),
        "prepare": prepare,
        "wall": time.perf_counter() - start,
        "solver": solution.seconds,
        "iterations": solution.iterations,
        "peak": peak_gb(),
        "accuracy": solution.metrics["test"]["accuracy"],
        "psp": solution.metrics["test"]["psp"],
    }


def in_fresh_process(*arguments: str) -> dict:
    """Run this script with `arguments` in a new interpreter; its last output line (JSON)."""
    done = subprocess.run([sys.executable, __file__, *arguments], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the child run {' '.join(arguments)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def fitted_exponent(rows: list[int], seconds: list[float]) -> float:
    """b of seconds ≈ a·rows^b, least squares in log–log."""
    if len(rows) < 2:
        return float("nan")
    return float(np.polyfit(np.log(rows), np.log(seconds), 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", help="income-task rows, all splits")
    parser.add_argument("--quick", action="store_true", help="small sizes, K = 10, a short run")
    parser.add_argument(
        "--minibatch-seconds",
        type=float,
        default=120.0,
        help="solver seconds of the minibatch run on the largest size; 0: none",
    )
    parser.add_argument("--child", choices=("files", "idca", "minibatch"), help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--outer",
        type=int,
        help=f"IDCA's outer iterations K (default {IDCAConfig().outer_iterations}, --quick 10)",
    )
    args = parser.parse_args()
    if args.child == "files":
        spec_for(args.rows).files()
        print(json.dumps({}))
        return
    if args.child == "idca":
        print(json.dumps(measure_idca(args.rows, args.outer)))
        return
    if args.child == "minibatch":
        print(json.dumps(measure_minibatch(args.rows, args.minibatch_seconds)))
        return
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    outer = args.outer or (10 if args.quick else IDCAConfig().outer_iterations)
    budget = 10.0 if args.quick else args.minibatch_seconds
    print(
        f"IDCA (K = {outer}, T = {IDCAConfig().inner_iterations}, ε = {IDCAConfig().epsilon}) "
        f"on synthetic pooled ACS income, sex, cross-terms, pSP κ = {KAPPA}, I = {INTERVAL}"
    )
    print(
        f"{'rows':>10}{'train':>10}{'sparse':>7}{'prepare s':>10}{'peak GB':>8}"
        f"{'X·w+Xᵀ·r ms':>13}{'step ms':>9}{'ratio':>7}{'IDCA s':>9}{'CPU s':>8}{'solver s':>9}"
        f"{'steps':>7}{'report s':>9}{'test acc':>9}{'test pSP':>9}{'load':>6}"
    )
    results = []
    for rows in sizes:
        in_fresh_process("--child", "files", "--rows", str(rows))
        result = in_fresh_process("--child", "idca", "--rows", str(rows), "--outer", str(outer))
        results.append(result)
        print(
            f"{result['rows']:>10,}{result['train']:>10,}{result['sparse']!s:>7}"
            f"{result['prepare']:>10.1f}{result['peak']:>8.2f}{result['products'] * 1e3:>13.2f}"
            f"{result['step'] * 1e3:>9.2f}{result['ratio']:>7.2f}{result['wall']:>9.1f}"
            f"{result['cpu']:>8.1f}"
            f"{result['solver']:>9.1f}{result['iterations']:>7,}{result['report']:>9.1f}"
            f"{result['accuracy']:>9.4f}{result['psp']:>9.4f}{result['load']:>6.1f}",
            flush=True,
        )
    counts = [r["rows"] for r in results]
    if len(counts) > 1:
        print(
            "\nfitted exponent b of time ∝ rows^b: "
            f"prepare {fitted_exponent(counts, [r['prepare'] for r in results]):.2f}, "
            f"IDCA wall {fitted_exponent(counts, [r['wall'] for r in results]):.2f}, "
            f"step {fitted_exponent(counts, [r['step'] for r in results]):.2f}, "
            f"report {fitted_exponent(counts, [r['report'] for r in results]):.2f}, "
            f"peak memory {fitted_exponent(counts, [r['peak'] for r in results]):.2f}"
        )
    for r in results:
        print(f"  {r['rows']:,} rows: {r['stop']}")
    if budget <= 0:
        return
    largest = max(sizes)
    mini = in_fresh_process(
        "--child", "minibatch", "--rows", str(largest), "--minibatch-seconds", str(budget)
    )
    print(
        f"\n{MINIBATCH_SOLVER} on {mini['rows']:,} rows for {budget:g} s of solver time: "
        f"{mini['iterations']:,} steps, wall {mini['wall']:.1f} s (prepare {mini['prepare']:.1f} s "
        f"before it), peak {mini['peak']:.2f} GB; test accuracy {mini['accuracy']:.4f}, "
        f"test pSP {mini['psp']:.4f}"
    )


if __name__ == "__main__":
    main()
