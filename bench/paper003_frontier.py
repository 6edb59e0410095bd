"""Paper 003, Fig. 1 / Table 4 setting on Adult: our test accuracy and 1 − pSP beside the paper's.

Train on adult.data (90 % train / 10 % validation, as the paper splits a9a), test on adult.test,
groups by sex, linear model with group cross-terms, I = [5 %, 30 %), |Î| = 10, IDCA as spec
003 §7's reference runs it (ε = 1e-3, T = 200, every K run; K chosen on validation among
snapshots, paper 003 G.2.2), its surrogate solved once (κ not held on the exact value). The paper's numbers are for
a9a, a one-hot, binned encoding of the same census records; ours standardises the numbers.

Columns: "1−pSP" is Def. 4.2 exactly (per-group ranks on the test set), "1−SP" is full SP (the
KS distance over all scores), the quantity the paper's unconstrained row matches (spec 003 §7).

    .venv/bin/python bench/paper003_frontier.py [--outer 200] [--kappas 0.28 0.2 0.1 0.05 0.01]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.solvers import solve  # noqa: E402
from engine.solvers.paper003.cards import IDCAConfig  # noqa: E402

INTERVAL = (0.05, 0.30)
REFERENCE_EPSILON = 1e-3
# paper 003, Table 4, a9a [5, 30]%, |Î| = 10: κ -> (pSP fairness, accuracy) on the test set
PAPER = {
    None: (0.5970, 0.8499),
    0.28: (0.7017, 0.8492),
    0.2: (0.7841, 0.8479),
    0.1: (0.8732, 0.8445),
    0.05: (0.9310, 0.8393),
    0.01: (0.9752, 0.8311),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kappas", type=float, nargs="+", default=[0.28, 0.2, 0.1, 0.05, 0.01])
    parser.add_argument("--outer", type=int, default=IDCAConfig().outer_iterations)
    args = parser.parse_args()
    torch.set_num_threads(1)
    options = PrepareOptions(grouping=(GroupingSpec("sex"),), split=(0.9, 0.1, 0.0))
    data = load_prepared(AdultSpec(), options)
    model = ModelSpec(cross_terms=True)
    print(
        f"Adult: train {len(data.train):,}, val {len(data.val):,}, test {len(data.test):,}; "
        f"I = [5%, 30%), |Î| = 10, IDCA K ≤ {args.outer} (chosen on validation)"
    )
    print(
        f"{'κ':>6}{'acc':>9}{'1−pSP':>9}{'1−SP':>9}{'train 1−pSP':>13}{'K':>6}{'s':>7}"
        f"{'paper acc':>11}{'paper fair':>12}"
    )
    # the paper runs all K; ε as spec 003 §7's reference runs (the paper tunes it per κ)
    paper = IDCAConfig(outer_iterations=args.outer, patience=0, epsilon=REFERENCE_EPSILON)
    rows = [(None, "unconstrained", None)] + [(k, "idca", paper) for k in args.kappas]
    for kappa, solver, config in rows:
        constraint = None if kappa is None else ConstraintSpec("pSP", kappa, INTERVAL)
        problem = Problem(data, model, constraint, interval=INTERVAL)
        start = time.perf_counter()
        solution = solve(problem, solver, config)
        seconds = time.perf_counter() - start
        test, train = solution.metrics["test"], solution.metrics["train"]
        chosen = _chosen_outer(solution)
        paper_fair, paper_acc = PAPER.get(kappa, (float("nan"), float("nan")))
        label = "—" if kappa is None else f"{kappa:g}"
        print(
            f"{label:>6}{test['accuracy']:>9.4f}{1 - test['psp']:>9.4f}{1 - test['sp']:>9.4f}"
            f"{1 - train['psp']:>13.4f}{chosen:>6}{seconds:>7.0f}{paper_acc:>11.4f}"
            f"{paper_fair:>12.4f}",
            flush=True,
        )


def _chosen_outer(solution) -> str:
    """The outer iteration whose iterate was reported (by validation accuracy)."""
    val = solution.metrics["val"]["accuracy"]
    for snapshot in solution.snapshots:
        if snapshot["metrics"]["val"]["accuracy"] == val:
            return str(snapshot["outer"])
    return "—"


if __name__ == "__main__":
    main()
