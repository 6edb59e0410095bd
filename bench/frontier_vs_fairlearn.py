"""IDCA's κ frontier beside fairlearn's ExponentiatedGradient, both run by FairFront's driver and
measured by the same exact metrics on the same held-out data.

Data: Adult (bundled), groups by sex, prepared as the app prepares it (60/20 train/validation of
adult.data, adult.test as the test set), linear model with group cross-terms (paper 003, §7.1),
I = [5 %, 30 %).

- IDCA: pSP ≤ κ for 10 values of κ from 0.3 to 0.01 (geometric), the paper's defaults.
- ExponentiatedGradient: a demographic-parity bound, 10 values spanning the same fairness range
  as the IDCA frontier: from the largest to the smallest train DP gap of IDCA's models.

Each frontier runs on 2 worker processes; its wall time is printed. EG's model is randomised:
FairFront scores it by P(ŷ = 1 | x) − ½, so its exact metrics below are those of its majority
vote; the columns "E[acc]" and "E[DP]" give the expected accuracy and DP gap of the randomised
classifier itself, from the same probabilities. For each EG point the table says whether an IDCA
point dominates it (at least as good on both axes, better on one) on (test accuracy, test
1 − pSP) and on (test accuracy, test DP gap).

    .venv/bin/python bench/frontier_vs_fairlearn.py [--points 10] [--workers 2] [--quick]

--quick: 2 points per frontier, IDCA at K = 2 outer iterations and ExponentiatedGradient at 2
iterations of base fits of 20 L-BFGS iterations, a check that the bench runs, in seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.solvers import config_from_dict, solve, solver_card  # noqa: E402

INTERVAL = (0.05, 0.30)
OPTIONS = PrepareOptions(grouping=(GroupingSpec("sex"),))
MODEL = ModelSpec(cross_terms=True)
EG_SOLVER = "exponentiated_gradient"
QUICK_POINTS = 2
QUICK_OPTIONS = {"idca": {"outer_iterations": 2}, EG_SOLVER: {"max_iter": 2, "base_max_iter": 20}}


@dataclass(frozen=True)
class Point:
    solver: str
    family: str
    kappa: float
    accuracy: float
    unfairness: float  # test pSP on I
    dp_gap: float  # test DP gap
    train_dp_gap: float
    expected_accuracy: float  # of the randomised classifier (EG), else the accuracy
    expected_dp_gap: float
    seconds: float


def fit_point(solver: str, family: str, kappa: float, options: dict[str, int]) -> Point:
    """One model of a frontier, solved in this (worker) process by `solver` at its defaults
    changed by `options`."""
    data = load_prepared(AdultSpec(), OPTIONS)
    problem = Problem(data, MODEL, ConstraintSpec(family, kappa, INTERVAL), interval=INTERVAL)
    config = config_from_dict(solver_card(solver).Config, options)
    start = time.perf_counter()
    solution = solve(problem, solver, config)
    seconds = time.perf_counter() - start
    test, train = solution.metrics["test"], solution.metrics["train"]
    expected_accuracy, expected_dp = test["accuracy"], test["dp"]
    if solver == EG_SOLVER:  # its scores are P(ŷ = 1 | x) − ½
        p = problem.scores(solution.params, "test") + 0.5
        part = data.test
        expected_accuracy = float(np.mean(np.where(part.y == 1, p, 1.0 - p)))
        rates = [p[part.groups == g].mean() for g in range(data.n_groups)]
        expected_dp = float(max(rates) - min(rates))
    return Point(
        solver,
        family,
        kappa,
        test["accuracy"],
        test["psp"],
        test["dp"],
        train["dp"],
        expected_accuracy,
        expected_dp,
        seconds,
    )


def frontier(
    solver: str, family: str, kappas: np.ndarray, workers: int, options: dict[str, int]
) -> tuple[list[Point], float]:
    start = time.perf_counter()
    points = Parallel(n_jobs=workers)(
        delayed(fit_point)(solver, family, float(k), options) for k in kappas
    )
    return points, time.perf_counter() - start


def dominated(point: Point, others: list[Point], fairness: str) -> bool:
    """Whether some point of `others` has accuracy ≥ and unfairness ≤ `point`'s, one strictly."""
    mine = (point.accuracy, -getattr(point, fairness))
    for other in others:
        theirs = (other.accuracy, -getattr(other, fairness))
        if all(t >= m for t, m in zip(theirs, mine, strict=True)) and theirs != mine:
            return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, help="points per frontier (default 10)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_POINTS} points unless --points says, IDCA at K = "
        f"{QUICK_OPTIONS['idca']['outer_iterations']} and ExponentiatedGradient at "
        f"{QUICK_OPTIONS[EG_SOLVER]['max_iter']} iterations of base fits of "
        f"{QUICK_OPTIONS[EG_SOLVER]['base_max_iter']} L-BFGS iterations (not their defaults)",
    )
    args = parser.parse_args()
    points = args.points or (QUICK_POINTS if args.quick else 10)
    options = QUICK_OPTIONS if args.quick else {}
    data = load_prepared(AdultSpec(), OPTIONS)  # prepared (and cached) once, before the workers
    print(
        f"Adult by sex: train {len(data.train):,}, validation {len(data.val):,}, test "
        f"{len(data.test):,}; linear with cross-terms; I = [5%, 30%); {args.workers} workers"
    )
    kappas = np.geomspace(0.3, 0.01, points)
    idca, idca_wall = frontier("idca", "pSP", kappas, args.workers, options.get("idca", {}))
    gaps = [p.train_dp_gap for p in idca]
    bounds = np.geomspace(max(gaps), max(min(gaps), 1e-3), points)
    eg, eg_wall = frontier(EG_SOLVER, "DP", bounds, args.workers, options.get(EG_SOLVER, {}))
    print(
        f"\nwall time: IDCA frontier {idca_wall:.0f} s, ExponentiatedGradient frontier "
        f"{eg_wall:.0f} s ({points} points each)\n"
    )
    header = (
        f"{'solver':<8}{'bound':>8}{'test acc':>10}{'1−pSP':>8}{'DP gap':>8}{'E[acc]':>8}"
        f"{'E[DP]':>8}{'s':>6}  dominated by IDCA on (acc, 1−pSP) / (acc, DP)"
    )
    print(header)
    for point in idca + eg:
        row = (
            f"{point.solver[:7]:<8}{point.kappa:>8.4f}{point.accuracy:>10.4f}"
            f"{1 - point.unfairness:>8.4f}{point.dp_gap:>8.4f}{point.expected_accuracy:>8.4f}"
            f"{point.expected_dp_gap:>8.4f}{point.seconds:>6.0f}"
        )
        if point.solver == EG_SOLVER:
            on_psp = "yes" if dominated(point, idca, "unfairness") else "no"
            on_dp = "yes" if dominated(point, idca, "dp_gap") else "no"
            row += f"  {on_psp} / {on_dp}"
        print(row, flush=True)
    psp_count = sum(dominated(p, idca, "unfairness") for p in eg)
    dp_count = sum(dominated(p, idca, "dp_gap") for p in eg)
    print(
        f"\nEG points dominated by an IDCA point: {psp_count} of {len(eg)} on (accuracy, "
        f"1 − pSP), {dp_count} of {len(eg)} on (accuracy, DP gap)"
    )


if __name__ == "__main__":
    main()
