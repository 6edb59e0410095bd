"""Paper 001's comparison (§5.1–5.2, Figs. 1–2): PLADA against SSG, IPP-SSG and IPP-ConEx on
logistic regression under the sigmoid DP (15) and EO (17) constraints, at equal solver time, on
the classic data sets, with every measure from one run of each.

For each data set, constraint and solver, one run of `--seconds` solver seconds (the driver's
clock, paused while records and exact metrics are computed; one BLAS thread), then from its
records: the final training loss, the final largest surrogate row (the violation, ≤ 0 is
feasible), the last common KKT measure (spec 001 §5, on the training data), the exact test gap,
the test accuracy ("deg." when it is not above always predicting the majority class), the
solver seconds after which every record is feasible to within `FEASIBLE` (— if the last is not;
the start θ = 0 is itself feasible, so the first feasible record says nothing), oracle calls
(gradient evaluations) and iterations. The last columns are each solver's ratios to
PLADA measured in the same run: time to feasible and final KKT (below 1: the solver is faster or
more stationary than PLADA). Paper 001 claims PLADA is best on all three measures, most clearly
on EO.

Paper 001 runs PLADA with one set of constants (Table 2) and tunes its baselines per data set
and constraint. PLADA runs here at Table 2's constants, η_w = 0.001 included, as the paper's
comparison does (`--plada ours`: at the card's defaults, where an unset η_w is derived from the
problem's smoothness, `bench/plada_defaults.py` compares the two). With `--tune`, each baseline also runs every setting of its card's grid for the
same seconds, the card's rule picks one on validation (the lowest validation loss within κ),
and a second table shows the chosen runs ("*" after the solver) with the setting, followed by
each problem's ranking by final training loss among the runs feasible to within `FEASIBLE`, at
defaults and tuned.

    .venv/bin/python bench/paper001_traces.py [--seconds 20] [--data adult compas law]
        [--constraints DP EO] [--solvers plada ssg_hl ipp_ssg ipp_conex] [--kappa 0.02]
        [--tune] [--plada table2|ours]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # spec 001 §5: pin BLAS threads for CPU time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.cli import build_parser  # noqa: E402
from engine.cli.run_commands import run_spec_from_args  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.errors import UserError  # noqa: E402
from engine.options import config_from_dict  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.solvers import Budget, solve  # noqa: E402
from engine.solvers.catalogue import solver_card  # noqa: E402
from engine.solvers.paper001.cards_plada import TABLE2_LINEAR  # noqa: E402
from engine.solvers.tuning import pick, trial_outcome  # noqa: E402

SOLVERS = ("plada", "ssg_hl", "ipp_ssg", "ipp_conex")
FEASIBLE = 1e-3  # the switching tolerance of ssg_hl and IPP-SSG: their outputs are held to it
PASSES = ("oracle.objective_gradients", "oracle.constraint_gradients")


def build_problem(data: str, constraint: str, kappa: float) -> Problem:
    """The problem `python -m engine run --data DATA --constraint C --kappa K` builds (the data
    set's default label and protected attribute; the sigmoid surrogate of paper 001)."""
    argv = [
        "run",
        "--data",
        data,
        "--constraint",
        constraint.lower(),
        "--kappa",
        str(kappa),
        "--surrogate",
        "sigmoid",
    ]
    spec = run_spec_from_args(build_parser().parse_args(argv))
    return Problem(
        load_prepared(spec.data, spec.prepare), spec.model, spec.constraint, interval=spec.interval
    )


def measure(
    problem: Problem, solver: str, seconds: float, setting: dict | None = None
) -> dict[str, float]:
    config = config_from_dict(solver_card(solver).Config, setting or {})
    solution = solve(problem, solver, config, budget=Budget(max_seconds=seconds), seed=0)
    records = solution.trajectory
    surrogate = [r for r in records if r.kind == "surrogate"]
    exact = [r for r in records if r.kind == "exact" and "train.kkt" in r.values]
    feasible = math.nan  # the first record of the feasible tail
    for record in reversed(surrogate):
        if record.max_violation is None or record.max_violation > FEASIBLE:
            break
        feasible = record.seconds
    state = surrogate[-1].state if surrogate else {}
    return {
        "loss": solution.metrics["train"]["loss"],
        "violation": surrogate[-1].max_violation if surrogate else math.nan,
        "kkt": exact[-1].values["train.kkt"] if exact else math.nan,
        "test_gap": solution.metrics["test"]["constraint"],
        "test_accuracy": solution.metrics["test"]["accuracy"],
        "degenerate": solution.metrics["test"]["accuracy"] <= solution.metrics["test"]["majority"],
        "to_feasible": feasible,
        "oracle_calls": sum(float(state.get(k, 0.0)) for k in PASSES),
        "iterations": float(solution.iterations),
        "val_loss": solution.metrics["val"]["loss"],
        "val_gap": solution.metrics["val"]["constraint"],
        "status": solution.status,
    }


def tuned(problem: Problem, solver: str, seconds: float, kappa: float) -> tuple[str, dict]:
    """Every setting of the solver's grid for `seconds`; the one its card's rule picks on
    validation, in words, and its measures."""
    plan = solver_card(solver).tuning
    settings = plan.settings()
    runs = [measure(problem, solver, seconds, setting) for setting in settings]
    trials = [
        trial_outcome(
            plan, setting, m["status"], {"loss": m["val_loss"], "constraint": m["val_gap"]}, kappa
        )
        for setting, m in zip(settings, runs, strict=True)
    ]
    choice = pick(plan, trials, constrained=True)
    if choice.chosen is None:
        return "no trial ended with a model", runs[0]
    return choice.headline(), runs[choice.chosen]


def ranking(rows: list[tuple[str, str, str, dict[str, float]]]) -> str:
    """The solvers of one problem by final training loss, the runs feasible to within
    `FEASIBLE` first; the others marked "(infeasible)", or "(no record)" when none was made."""

    def mark(m: dict[str, float]) -> str:
        if not math.isfinite(m["violation"]):
            return " (no record)"
        return "" if m["violation"] <= FEASIBLE else " (infeasible)"

    ordered = sorted(rows, key=lambda row: (mark(row[3]) != "", row[3]["loss"]))
    return " < ".join(f"{solver}{mark(m)}" for _, _, solver, m in ordered)


def _cell(value: float, form: str) -> str:
    """`value` in `form`, or a dash as wide."""
    width = int(form.split(".")[0] or 0)
    return "—".rjust(width) if value is None or not math.isfinite(value) else format(value, form)


def report(rows: list[tuple[str, str, str, dict[str, float]]]) -> None:
    header = (
        f"{'data':8} {'gap':4} {'solver':10} {'loss':>7} {'viol':>8} {'KKT':>8} "
        f"{'test gap':>8} {'test acc':>8} {'deg.':>4} {'feas. s':>8} {'oracles':>9} {'iters':>8} "
        f"{'feas./PLADA':>11} {'KKT/PLADA':>9}"
    )
    print(header)
    print("-" * len(header))
    base: dict[tuple[str, str], dict[str, float]] = {}
    for data, gap, solver, m in rows:
        if solver == "plada":
            base[(data, gap)] = m
        ref = base.get((data, gap), {})
        feas_ratio = m["to_feasible"] / ref.get("to_feasible", math.nan)
        kkt_ratio = m["kkt"] / ref.get("kkt", math.nan)
        print(
            f"{data:8} {gap:4} {solver:10} {_cell(m['loss'], '7.4f')} "
            f"{_cell(m['violation'], '8.4f')} {_cell(m['kkt'], '8.4f')} "
            f"{_cell(m['test_gap'], '8.4f')} {_cell(m['test_accuracy'], '8.4f')} "
            f"{'deg.' if m['degenerate'] else '':>4} "
            f"{_cell(m['to_feasible'], '8.2f')} {_cell(m['oracle_calls'], '9.0f')} "
            f"{_cell(m['iterations'], '8.0f')} {_cell(feas_ratio, '11.2f')} "
            f"{_cell(kkt_ratio, '9.2f')}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--data", nargs="+", default=["adult", "compas", "law"])
    parser.add_argument("--constraints", nargs="+", default=["DP", "EO"])
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS))
    parser.add_argument("--kappa", type=float, default=0.02)
    parser.add_argument(
        "--plada",
        choices=("table2", "ours"),
        default="table2",
        help="PLADA's η_w: Table 2's (the paper's comparison) or the card's default",
    )
    parser.add_argument(
        "--tune",
        action="store_true",
        help="also tune each baseline by its card's grid (paper 001 §5)",
    )
    args = parser.parse_args()
    rows, tuned_rows, choices = [], [], []
    plada = {"eta_w": TABLE2_LINEAR["eta_w"]} if args.plada == "table2" else {}
    for data in args.data:
        for gap in args.constraints:
            try:
                problem = build_problem(data, gap, args.kappa)
            except UserError as missing:
                print(f"{data}: skipped ({missing})", file=sys.stderr)
                break
            for solver in args.solvers:
                at_defaults = measure(
                    problem, solver, args.seconds, plada if solver == "plada" else None
                )
                rows.append((data, gap, solver, at_defaults))
                if args.tune and solver_card(solver).tuning is not None:
                    words, chosen = tuned(problem, solver, args.seconds, args.kappa)
                    tuned_rows.append((data, gap, f"{solver}*", chosen))
                    choices.append(f"{data} {gap} {solver}: {words}")
                else:
                    tuned_rows.append((data, gap, solver, at_defaults))
                print(f"done: {data} {gap} {solver}", file=sys.stderr, flush=True)
    step = "Table 2's η_w = 0.001" if plada else "the card's derived η_w"
    print(
        f"\npaper 001 traces: {args.seconds:g} solver seconds per run, κ = {args.kappa:g}, "
        f"logistic regression, sigmoid surrogate; PLADA at {step}\n"
    )
    report(rows)
    if not args.tune:
        return
    print("\ntuned (*: the setting the card's rule picked on validation)\n")
    report(tuned_rows)
    print("\n" + "\n".join(choices))
    print("\nranking by final training loss, feasible runs first (defaults → tuned):")
    for problem_rows, problem_tuned in zip(_by_problem(rows), _by_problem(tuned_rows), strict=True):
        data, gap = problem_rows[0][:2]
        print(
            f"  {data} {gap}: {ranking(problem_rows)}\n  {'':{len(data) + len(gap) + 1}}  "
            f"→ {ranking(problem_tuned)}"
        )


def _by_problem(rows: list[tuple[str, str, str, dict[str, float]]]) -> list[list]:
    problems = list(dict.fromkeys((data, gap) for data, gap, _, _ in rows))
    return [[row for row in rows if row[:2] == problem] for problem in problems]


if __name__ == "__main__":
    main()
