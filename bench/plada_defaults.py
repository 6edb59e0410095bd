"""PLADA's θ-step at its default against paper 001's Table 2 value: for each case, one
run with η_w = Table 2's (0.001 for a linear model, 0.1 for an MLP) and one with η_w unset, which
PLADA derives from the problem (Alg. 1's bound 1/(L_F + 3ρM_G²),
`engine.solvers.paper001.plada`), each as `python -m engine run ... --solver plada --seconds S`
makes it (κ held on the training data unless the case says otherwise), then a table of both: the
step used, iterations, the final training loss and exact gap, and the exact test gap and
accuracy ("diverged" when the run did).

Target: Adult, DP, κ = 0.02, a linear model, 60 s at the default: test DP gap ≤ 0.04
at test accuracy ≥ 0.80.

    .venv/bin/python bench/plada_defaults.py [--seconds 60]
        [--cases adult adult-sigmoid compas german crime-779]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one BLAS thread, as the paper-001 bench

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.cli import build_parser  # noqa: E402
from engine.cli.run_commands import run_spec_from_args  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.errors import UserError  # noqa: E402
from engine.options import config_from_dict  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.solvers.catalogue import solver_card  # noqa: E402
from engine.solvers.honour import solve_run  # noqa: E402
from engine.solvers.paper001.cards_plada import TABLE2_LINEAR, TABLE2_NETWORK  # noqa: E402
from engine.status import StopCode  # noqa: E402

DP = ["--constraint", "dp", "--kappa", "0.02"]
CASES = {
    "adult": ["--data", "adult", *DP],  # the command line's default surrogate, the ramp
    "adult-sigmoid": ["--data", "adult", *DP, "--surrogate", "sigmoid"],  # paper 001's
    "compas": ["--data", "compas", *DP],
    "german": ["--data", "german", *DP],
    # paper 001 §5.3 on our data: an MLP under 779 overlapping subgroups' hinge rows
    "crime-779": [
        "--data",
        "crime",
        "--subgroups",
        "racepctblack",
        "racePctHisp",
        "racePctAsian",
        "--constraint",
        "intersectional_hinge",
        "--kappa",
        "0.02",
        "--model",
        "mlp",
        "--honour",
        "off",
    ],
}


def run(argv: list[str], seconds: float, table2: bool) -> dict[str, object]:
    """One run of `python -m engine run ARGV --solver plada --seconds SECONDS`, with Table 2's
    η_w when `table2`, else PLADA's default."""
    args = build_parser().parse_args(["run", *argv, "--solver", "plada", "--seconds", str(seconds)])
    spec = run_spec_from_args(args)
    problem = Problem(
        load_prepared(spec.data, spec.prepare),
        spec.model,
        spec.constraint,
        interval=spec.interval,
        objective=spec.objective,
    )
    options = dict(spec.config)
    if table2:
        options["eta_w"] = (TABLE2_LINEAR if spec.model.affine else TABLE2_NETWORK)["eta_w"]
    config = config_from_dict(solver_card("plada").Config, options)
    solution = solve_run(problem, "plada", spec.honour, config, spec.budget, None, spec.seed)
    surrogate = solution.last_surrogate()
    metrics = solution.metrics
    return {
        "step": surrogate.state.get("step", math.nan) if surrogate else math.nan,
        "iterations": solution.iterations,
        "diverged": solution.stop.code is StopCode.NON_FINITE,
        "train_loss": metrics.get("train", {}).get("loss"),
        "train_gap": metrics.get("train", {}).get("constraint"),
        "test_gap": metrics.get("test", {}).get("constraint"),
        "test_accuracy": metrics.get("test", {}).get("accuracy"),
    }


def _cell(value: object, form: str) -> str:
    width = int(form.split(".")[0] or 0)
    if not isinstance(value, int | float) or not math.isfinite(value):
        return "—".rjust(width)
    return format(value, form)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    args = parser.parse_args()
    rows = []
    for case in args.cases:
        for table2 in (True, False):
            try:
                result = run(CASES[case], args.seconds, table2)
            except UserError as missing:
                print(f"{case}: skipped ({missing})", file=sys.stderr)
                break
            rows.append((case, "Table 2" if table2 else "derived", result))
            print(f"done: {case} {rows[-1][1]}", file=sys.stderr, flush=True)
    print(f"\nPLADA's θ-step, Table 2's against the derived default: {args.seconds:g} s per run\n")
    header = (
        f"{'case':14} {'step rule':9} {'η':>9} {'iters':>7} {'train loss':>10} "
        f"{'train gap':>9} {'test gap':>8} {'test acc':>8}"
    )
    print(header)
    print("-" * len(header))
    for case, rule, m in rows:
        end = "diverged" if m["diverged"] else ""
        print(
            f"{case:14} {rule:9} {_cell(m['step'], '9.3g')} {m['iterations']:7d} "
            f"{_cell(m['train_loss'], '10.4f')} {_cell(m['train_gap'], '9.4f')} "
            f"{_cell(m['test_gap'], '8.4f')} {_cell(m['test_accuracy'], '8.4f')} {end}"
        )


if __name__ == "__main__":
    main()
