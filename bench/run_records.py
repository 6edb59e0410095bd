"""How a run spends its wall-time budget, and how many exact records draw its trajectory.

A run's time budget is wall time (`engine.solvers.run_clock`): the solver's steps, its records,
holding κ and the intervals of its final report all spend it, and the run should end within
about a tenth over it. Exact records (exact train and validation values and the KKT measure)
draw its exact trajectory: at least `EXACT_POINTS` of them in a run of a few seconds or more,
as long as they take no more than their share of it.

This runs each case below on Adult (bundled, groups by sex) one at a time, in this process,
and prints one row per case: the budget, the wall time the run took and its ratio to the
budget, the solver's own seconds, the share of the wall time the solver had, and the number of
exact and surrogate records. Run it on a quiet machine: records cost more when the cores are
shared, and then fewer fit in their share.

    .venv/bin/python bench/run_records.py [--seconds 20]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.fairness.constraint_spec import ConstraintSpec  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.options import config_from_dict  # noqa: E402
from engine.runs.spec import RunSpec  # noqa: E402
from engine.runs.warm_up import warm_solver  # noqa: E402
from engine.runs.worker import build_problem  # noqa: E402
from engine.solvers.budget import Budget  # noqa: E402
from engine.solvers.catalogue import solver_card  # noqa: E402
from engine.solvers.honour import solve_run  # noqa: E402
from engine.solvers.run_clock import EXACT_POINTS, now  # noqa: E402

INTERVAL = (0.05, 0.30)
LINEAR = ModelSpec(cross_terms=True)
MLP = ModelSpec(kind="mlp", hidden=(16,))
# (label, solver, model, constraint, the split κ is held on)
CASES = (
    (
        "idca, linear, pSP, held on train",
        "idca",
        LINEAR,
        ConstraintSpec("pSP", 0.05, INTERVAL),
        "train",
    ),
    ("ssg, linear, pSP", "ssg", LINEAR, ConstraintSpec("pSP", 0.05, INTERVAL), None),
    ("sgd, MLP, unconstrained", "sgd", MLP, None, None),
    (
        "ssl_alm, MLP, group-loss gap, held on train",
        "ssl_alm",
        MLP,
        ConstraintSpec("group_loss_gap", 0.02),
        "train",
    ),
    ("plada, linear, DP", "plada", LINEAR, ConstraintSpec("DP", 0.05), None),
)


def measure(solver: str, model: ModelSpec, constraint, honour, seconds: float) -> dict:
    spec = RunSpec(
        data=AdultSpec(),
        prepare=PrepareOptions(grouping=(GroupingSpec("sex"),), cross_terms=True),
        model=model,
        constraint=constraint,
        interval=INTERVAL,
        solver=solver,
        budget=Budget(max_seconds=seconds),
        honour=honour,
    )
    problem = build_problem(spec)
    config = config_from_dict(solver_card(solver).Config, {})
    warm_solver(solver)
    records: list = []
    started = now()
    solution = solve_run(problem, solver, honour, config, spec.budget, records.append)
    wall = now() - started
    kinds = [r.kind for r in records]
    return {
        "wall": wall,
        "solver": solution.seconds,
        "exact": kinds.count("exact"),
        "surrogate": kinds.count("surrogate"),
        "status": solution.status.value,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    print(f"budget {args.seconds:g} s of wall time; exact records wanted: ≥ {EXACT_POINTS}")
    print(
        f"{'case':46} {'wall s':>7} {'wall/budget':>11} {'solver s':>8} {'solver share':>12} "
        f"{'exact':>5} {'surrogate':>9}  status"
    )
    for label, solver, model, constraint, honour in CASES:
        row = measure(solver, model, constraint, honour, args.seconds)
        print(
            f"{label:46} {row['wall']:7.1f} {row['wall'] / args.seconds:11.3f} "
            f"{row['solver']:8.1f} {row['solver'] / row['wall']:12.2f} {row['exact']:5d} "
            f"{row['surrogate']:9d}  {row['status']}"
        )


if __name__ == "__main__":
    main()
