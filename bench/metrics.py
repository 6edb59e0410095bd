"""Wall time of every exact fairness metric on 200,000 random scores, for 2 and 5 groups.

Run from the repository root:  python bench/metrics.py [--n 200000] [--repeats 7]
Prints one row per metric: the median wall time in milliseconds over the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine.fairness as fair  # noqa: E402

TARGET_MS = 50.0


def metrics(alpha: float = 0.2, beta: float = 0.4) -> dict[str, Callable]:
    """name -> callable(scores, groups, y) for every exact metric in engine.fairness."""
    return {
        "psp [0.2,0.4)": lambda s, g, y: fair.psp(s, g, alpha, beta),
        "psp_pairs [0.2,0.4)": lambda s, g, y: fair.psp_pairs(s, g, alpha, beta),
        "psp_witness [0.2,0.4)": lambda s, g, y: fair.psp_witness(s, g, alpha, beta),
        "psp [0,1] (KS)": lambda s, g, y: fair.psp(s, g, 0.0, 1.0),
        "pdp [0.2,0.4)": lambda s, g, y: fair.pdp(s, g, alpha, beta),
        "positive_rates": lambda s, g, y: fair.positive_rates(s, g),
        "demographic_parity_gap": lambda s, g, y: fair.demographic_parity_gap(s, g),
        "equal_opportunity_gap": fair.equal_opportunity_gap,
        "equalized_odds_gap": fair.equalized_odds_gap,
        "accuracy": lambda s, g, y: fair.accuracy(s, y),
        "roc_auc": lambda s, g, y: fair.roc_auc(s, y),
        "group_roc_aucs": fair.group_roc_aucs,
        "group_auc_gap": lambda s, g, y: fair.group_auc_gap(s, g),
        "inter_group_auc_gap": fair.inter_group_auc_gap,
        "intra_group_auc_gap": fair.intra_group_auc_gap,
        "wasserstein_gap": lambda s, g, y: fair.wasserstein_gap(s, g),
        "independence": lambda s, g, y: fair.independence(s, g),
        "separation": fair.separation,
        "sufficiency": fair.sufficiency,
        "inaccuracy": lambda s, g, y: fair.inaccuracy(s, y),
        "group_losses": fair.group_losses,
        "loss_accuracy_equality_gap": fair.loss_accuracy_equality_gap,
        "loss_equal_opportunity_gap": fair.loss_equal_opportunity_gap,
        "loss_equalized_odds_gap": fair.loss_equalized_odds_gap,
        "badr_group_variance": fair.badr_group_variance,
        "badr_individual_fairness": fair.badr_individual_fairness,
        "badr_demographic_parity": lambda s, g, y: fair.badr_demographic_parity(s, g),
        "badr_disparate_mistreatment": lambda s, g, y: fair.badr_disparate_mistreatment(s, g),
        "badr_equal_opportunity": fair.badr_equal_opportunity,
        "badr_equalized_odds": fair.badr_equalized_odds,
        "badr_hsic": lambda s, g, y: fair.badr_hsic(s, g),
    }


def median_ms(fn: Callable, args: tuple, repeats: int) -> float:
    fn(*args)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=7)
    opts = parser.parse_args()

    rng = np.random.default_rng(0)
    data = {}
    for n_groups in (2, 5):
        groups = rng.integers(0, n_groups, size=opts.n)
        y = rng.integers(0, 2, size=opts.n)
        scores = rng.normal(size=opts.n) + 0.3 * groups + 0.5 * y
        data[n_groups] = (scores, groups, y)

    print(f"n = {opts.n:,} scores, median of {opts.repeats} runs, milliseconds")
    print(f"{'metric':<30} {'G=2':>8} {'G=5':>8}")
    slow = []
    for name, fn in metrics().items():
        row = [median_ms(fn, data[g], opts.repeats) for g in (2, 5)]
        flag = "  > target" if max(row) > TARGET_MS else ""
        if flag:
            slow.append(name)
        print(f"{name:<30} {row[0]:>8.1f} {row[1]:>8.1f}{flag}")
    print(f"target: each under {TARGET_MS:.0f} ms; over target: {', '.join(slow) or 'none'}")


if __name__ == "__main__":
    main()
