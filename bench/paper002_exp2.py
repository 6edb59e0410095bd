"""Paper 002, Exp 2 (Fig. 8 and its medians, spec 002 §3): is badr's TEST unfairness below that of
the uniform, balanced, minimax and one-fit weightings on small tasks? Checked on the data we have.

Data (S = 2 groups by sex; each prepared as `python -m engine run` prepares it, train/val/test
60/20/20 with split seeds 0, 1, 2, so three instances per data set; Adult keeps adult.test):
ACS Connecticut 2018 ACSEmployment, ACSIncome and ACSTravelTime (the census files in folktables
layout under ../shared/data/acs/pums, read offline), Adult (bundled), COMPAS, German credit and
Law school (label: passed the bar). A data set that cannot be prepared is reported as skipped.

Model: ℓ2-regularised logistic regression, μ = 1e-2, linear without cross-terms (paper 002,
Exp 2). Measures: dp, dm, eopp, eodds, group_variance and individual of
engine.fairness.badr_measures, smoothing ρ = 1.

Methods, all models w*(λ) = argmin_w Σ_s λ_s F_s(w) on the group-loss front:
- badr (grid)     what the paper's Exp 2 table runs: the 101-point grid λ_1 = 0, 0.01, …, 1,
                  keeping the λ of the lowest TRAIN measure (spec 002 §3). The 101 models do not
                  depend on the measure: they are fitted once per instance, each warm-started from
                  the last, and every measure is evaluated on each.
- badr_implicit   the engine's two-loop solver (SLSQP on the simplex), one run per measure
- minimax         min_w max_s F_s(w), the engine's solver (measure-independent: once per instance)
- uniform         λ = (½, ½), the grid's middle point
- balanced        λ ∝ 1/n_s
- one-fit         λ = e_s, the vertex whose model has the lower TRAIN measure (the grid's ends)

Reported on the TEST split: the measure as the paper reports it (smoothed), its exact, unsmoothed
companion from Problem.report where there is one (dp → dp, eopp → eopp, eodds → eo,
group_variance → group_loss_gap), and accuracy. Medians are over all instances of all data sets,
as the paper's are over its 150 ACS data sets (10 small states × 5 years × 3 tasks).

    .venv/bin/python bench/paper002_exp2.py [--quick] [--seeds 0 1 2] [--data german compas ...]
        [--acs-root DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.cli import build_parser  # noqa: E402
from engine.cli.run_commands import run_spec_from_args  # noqa: E402
from engine.errors import UserError  # noqa: E402
from engine.fairness.badr_measures import badr_measure  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.runs.worker import build_problem  # noqa: E402
from engine.solvers import solve  # noqa: E402
from engine.solvers.catalogue import solver_card  # noqa: E402
from engine.solvers.paper002.badr_lower import GroupLosses  # noqa: E402
from engine.task import Task  # noqa: E402

L2, RHO, GRID_POINTS = 1e-2, 1.0, 101  # paper 002, Exp 2: LR μ = 1e-2, ρ = 1, 101-point λ grid
MEASURES = ("dp", "dm", "eopp", "eodds", "group_variance", "individual")
TITLES = {
    "dp": "DP",
    "dm": "DM",
    "eopp": "EOpp",
    "eodds": "EOdds",
    "group_variance": "Group var",
    "individual": "Indiv. fair",
}
BADR = ("badr (grid)", "badr_implicit")
BASELINES = ("minimax", "uniform", "balanced", "one-fit")
METHODS = BADR + BASELINES
# spec 002 §3, Exp 2: medians of the test measure, columns badr, minimax, uniform, balanced,
# one-fit (the paper's "badr" is the grid search); it gives no row for EOdds ("≈ EOpp")
PAPER = {
    "dp": (0.6989, 0.7094, 0.7098, 0.7096, 0.7065),
    "dm": (2.11e-4, 1.22e-3, 1.30e-3, 1.31e-3, 9.4e-4),
    "eopp": (1.386, 1.387, 1.387, 1.387, 1.386),
    "group_variance": (1.13e-4, 4.62e-4, 4.78e-4, 4.86e-4, 2.57e-4),
    "individual": (0.374, 0.419, 0.415, 0.407, 0.414),
}
PAPER_COLUMNS = ("badr (grid)",) + BASELINES
DEFAULT_ACS_ROOT = ROOT.parent / "shared" / "data" / "acs" / "pums"
ACS_TASKS = {"ACSEmployment": "employment", "ACSIncome": "income", "ACSTravelTime": "travel_time"}
DATA = ("employment", "income", "travel_time", "adult", "compas", "german", "law")
QUICK = {"data": ("german", "compas"), "seeds": (0,)}
PARTS = ("prepare", "grid (101 fits)", "balanced fit", "minimax", "badr_implicit", "evaluation")


@dataclass
class Case:
    key: str
    title: str
    argv: list[str]  # the `python -m engine run` data flags


def cases(acs_root: Path) -> dict[str, Case]:
    acs = [
        "--data",
        "acs",
        "--acs-root",
        str(acs_root),
        "--state",
        "CT",
        "--year",
        "2018",
        "--attribute",
        "SEX",
    ]
    found = {
        task: Case(task, f"{name} CT 2018", [*acs, "--task", task])
        for name, task in ACS_TASKS.items()
    }
    found["adult"] = Case("adult", "Adult", ["--data", "adult", "--attribute", "sex"])
    found["compas"] = Case("compas", "COMPAS", ["--data", "compas", "--attribute", "sex"])
    found["german"] = Case("german", "German credit", ["--data", "german", "--attribute", "sex"])
    found["law"] = Case(
        "law", "Law school (bar)", ["--data", "law", "--label", "bar", "--attribute", "sex"]
    )
    return found


def problem_for(case: Case, seed: int) -> Problem:
    argv = [
        "run",
        *case.argv,
        "--seed",
        str(seed),
        "--solver",
        "badr_implicit",
        "--constraint",
        "none",
    ]
    spec = run_spec_from_args(build_parser().parse_args(argv))
    problem = build_problem(spec)
    data = problem.data
    if data.task is not Task.CLASSIFICATION:
        raise UserError(f"the label is {data.task}, not a binary one")
    if data.n_groups != 2:
        raise UserError(f"{data.n_groups} groups by sex, not 2")
    if problem.objective.name != "logistic" or problem.model.cross_terms:
        raise UserError("the run's model is not a linear logistic regression")
    return problem


# ---- one instance -------------------------------------------------------------------------------
@dataclass
class Outcome:
    """Per method and measure: test measure, exact companion, test accuracy, train measure."""

    test: dict[tuple[str, str], float] = field(default_factory=dict)
    exact: dict[tuple[str, str], float] = field(default_factory=dict)
    accuracy: dict[tuple[str, str], float] = field(default_factory=dict)
    train: dict[tuple[str, str], float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class Evaluator:
    """The measures of a model on a split, each model evaluated once."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.loss = problem.objective.per_sample
        self._cache: dict[tuple[int, str], dict[str, float]] = {}

    def measures(self, w: np.ndarray, split: str) -> dict[str, float]:
        key = (id(w), split)
        if key not in self._cache:
            part = self.problem.data.split(split)
            h = self.problem.design(split).matvec(w)
            values = {
                m: badr_measure(m).value(
                    h, part.groups, part.y, rho=RHO, task=Task.CLASSIFICATION, loss=self.loss
                )
                for m in MEASURES
            }
            if split == "test":
                exact = [e for m in MEASURES if (e := badr_measure(m).exact)]
                report = self.problem.report_scores(h, "test", only=[*exact, "accuracy"])
                values |= {f"exact.{k}": v for k, v in report.items() if k != "accuracy"}
                values["accuracy"] = report["accuracy"]
            self._cache[key] = values
        return self._cache[key]


def run_instance(problem: Problem, clock: dict[str, float]) -> Outcome:
    out = Outcome()
    evaluate = Evaluator(problem)
    lower = GroupLosses(problem, L2)

    # the weighted-sum front on the grid, fitted once, every measure evaluated on each model
    started = time.perf_counter()
    first = np.linspace(0.0, 1.0, GRID_POINTS)
    grid = np.column_stack([first, 1.0 - first])
    models, w = [], None
    for weights in grid:
        w = lower.solve(weights, start=w)
        models.append(w)
    clock["grid (101 fits)"] += time.perf_counter() - started

    started = time.perf_counter()
    train = {m: np.array([evaluate.measures(w, "train")[m] for w in models]) for m in MEASURES}
    clock["evaluation"] += time.perf_counter() - started

    started = time.perf_counter()
    inverse = 1.0 / lower.sizes
    balanced = lower.solve(inverse / inverse.sum(), start=models[GRID_POINTS // 2])
    clock["balanced fit"] += time.perf_counter() - started

    started = time.perf_counter()
    minimax = _solved(problem, "minimax", solver_card("minimax").Config(l2=L2), out)
    clock["minimax"] += time.perf_counter() - started

    chosen: dict[str, dict[str, np.ndarray | None]] = defaultdict(dict)
    for m in MEASURES:
        best = int(
            np.argmin(train[m])
        )  # the first lowest, as engine.solvers.paper002.badr_fronts keeps
        # λ = e_0 is the grid's last point, e_1 its first; ties go to e_0 (badr_references)
        vertex = GRID_POINTS - 1 if train[m][-1] <= train[m][0] else 0
        chosen[m] = {
            "badr (grid)": models[best],
            "uniform": models[GRID_POINTS // 2],  # λ = (½, ½) exactly
            "balanced": balanced,
            "one-fit": models[vertex],
            "minimax": minimax,
        }
        started = time.perf_counter()
        config = solver_card("badr_implicit").Config(measure=m, l2=L2, rho=RHO)
        chosen[m]["badr_implicit"] = _solved(problem, "badr_implicit", config, out)
        clock["badr_implicit"] += time.perf_counter() - started

    started = time.perf_counter()
    for m in MEASURES:
        exact = badr_measure(m).exact
        for method, w in chosen[m].items():
            if w is None:
                continue
            test, fit = evaluate.measures(w, "test"), evaluate.measures(w, "train")
            out.test[method, m] = test[m]
            out.train[method, m] = fit[m]
            out.accuracy[method, m] = test["accuracy"]
            if exact is not None and test.get(f"exact.{exact}") is not None:
                out.exact[method, m] = float(test[f"exact.{exact}"])
    clock["evaluation"] += time.perf_counter() - started
    return out


def _solved(problem: Problem, solver: str, config, out: Outcome) -> np.ndarray | None:
    name = f"{solver} {config.measure}" if solver == "badr_implicit" else solver
    try:
        solution = solve(problem, solver, config)
    except UserError as error:
        out.notes.append(f"{name} failed (left out of this instance): {error}")
        return None
    if solution.stop.code.name != "CONVERGED":
        out.notes.append(f"{name}: {solution.stop.text}")
    return np.asarray(solution.params["w"], dtype=np.float64)


# ---- tables -------------------------------------------------------------------------------------
def number(value: float | None, width: int = 11) -> str:
    if value is None or not math.isfinite(value):
        return f"{'—':>{width}}"
    return f"{value:>{width}.5g}"


def median(outcomes: list[Outcome], table: str, method: str, measure: str) -> float:
    values = [
        getattr(o, table)[method, measure]
        for o in outcomes
        if (method, measure) in getattr(o, table)
    ]
    return float(np.median(values)) if values else math.nan


def print_medians(outcomes: list[Outcome], n: int) -> dict[str, dict[str, float]]:
    print(
        f"\n(1) Median TEST measure over {n} instances (smoothed, as the paper reports; lower is "
        "fairer); 'paper' rows: spec 002 §3, Exp 2 (150 small ACS data sets)"
    )
    print(f"{'measure':<13}{'':<7}" + "".join(f"{m:>15}" for m in METHODS))
    medians: dict[str, dict[str, float]] = {}
    for m in MEASURES:
        medians[m] = {method: median(outcomes, "test", method, m) for method in METHODS}
        print(f"{TITLES[m]:<13}{'ours':<7}" + "".join(number(medians[m][k], 15) for k in METHODS))
        paper = dict(zip(PAPER_COLUMNS, PAPER[m], strict=True)) if m in PAPER else {}
        note = "" if m in PAPER else "   (the paper gives no row: EOdds ≈ EOpp)"
        print(
            f"{'':<13}{'paper':<7}"
            + "".join(number(paper.get(k), 15) if k in paper else f"{'':>15}" for k in METHODS)
            + note
        )
    return medians


def print_wins(outcomes: list[Outcome]) -> None:
    print("\n(2a) Share of instances where the test measure is STRICTLY below the baseline's")
    print(f"{'measure':<13}{'method':<16}" + "".join(f"{b:>12}" for b in BASELINES))
    for m in MEASURES:
        for method in BADR:
            cells = []
            for base in BASELINES:
                pairs = [
                    (o.test[method, m], o.test[base, m])
                    for o in outcomes
                    if (method, m) in o.test and (base, m) in o.test
                ]
                wins = sum(a < b for a, b in pairs)
                cells.append(f"{wins}/{len(pairs)}" if pairs else "—")
            label = TITLES[m] if method == BADR[0] else ""
            print(f"{label:<13}{method:<16}" + "".join(f"{c:>12}" for c in cells))
    print("\n(2b) Median TEST accuracy")
    print(f"{'measure':<13}" + "".join(f"{m:>15}" for m in METHODS))
    for m in MEASURES:
        print(
            f"{TITLES[m]:<13}"
            + "".join(number(median(outcomes, "accuracy", k, m), 15) for k in METHODS)
        )


def print_exact(outcomes: list[Outcome]) -> dict[str, dict[str, float]]:
    print("\n(3) Median TEST exact (unsmoothed) companion, from Problem.report (threshold 0)")
    print(f"{'measure':<13}{'exact':<16}" + "".join(f"{m:>15}" for m in METHODS))
    medians: dict[str, dict[str, float]] = {}
    for m in MEASURES:
        exact = badr_measure(m).exact
        if exact is None:
            continue
        medians[m] = {method: median(outcomes, "exact", method, m) for method in METHODS}
        print(f"{TITLES[m]:<13}{exact:<16}" + "".join(number(medians[m][k], 15) for k in METHODS))
    return medians


def print_train_check(outcomes: list[Outcome]) -> None:
    print(
        "\n(4) badr_implicit against the grid on the TRAIN measure (its objective): instances "
        "where it is lower / within 1e-6 relative / higher"
    )
    for m in MEASURES:
        lower = same = higher = 0
        for o in outcomes:
            if ("badr_implicit", m) not in o.train:
                continue
            a, b = o.train["badr_implicit", m], o.train["badr (grid)", m]
            if abs(a - b) <= 1e-6 * max(abs(b), 1e-12):
                same += 1
            elif a < b:
                lower += 1
            else:
                higher += 1
        print(f"  {TITLES[m]:<13}{lower:>4} lower {same:>4} equal {higher:>4} higher")


def verdict(medians: dict[str, dict[str, float]], method: str, what: str) -> str:
    failures = [
        f"{TITLES[m]} vs {base} ({medians[m][method]:.5g} ≥ {medians[m][base]:.5g})"
        for m in medians
        for base in BASELINES
        if not medians[m][method] < medians[m][base]
    ]
    if not failures:
        return (
            f"{method}: its median {what} is below every baseline's for every measure — "
            "the claim HOLDS on this data"
        )
    return f"{method}: the claim FAILS on this data ({what}) for " + "; ".join(failures)


# ---- main ---------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"seed {QUICK['seeds'][0]} only, data {' and '.join(QUICK['data'])}",
    )
    parser.add_argument("--seeds", type=int, nargs="+", help="split seeds (default 0 1 2)")
    parser.add_argument("--data", nargs="+", choices=DATA, help=f"default: {' '.join(DATA)}")
    parser.add_argument(
        "--acs-root",
        type=Path,
        default=Path(os.environ.get("FAIRFRONT_ACS_ROOT", DEFAULT_ACS_ROOT)),
        help="census files in folktables layout (default: $FAIRFRONT_ACS_ROOT "
        f"or {DEFAULT_ACS_ROOT})",
    )
    args = parser.parse_args()
    seeds = args.seeds or (list(QUICK["seeds"]) if args.quick else [0, 1, 2])
    keys = args.data or (list(QUICK["data"]) if args.quick else list(DATA))
    known = cases(args.acs_root)

    began = time.perf_counter()
    clock = dict.fromkeys(PARTS, 0.0)
    outcomes: list[Outcome] = []
    skipped: list[str] = []
    print(
        f"paper 002 Exp 2: LR μ = {L2:g}, ρ = {RHO:g}, {GRID_POINTS}-point λ grid, "
        f"S = 2 (sex), split seeds {' '.join(map(str, seeds))}",
        flush=True,
    )
    for key in keys:
        case = known[key]
        for seed in seeds:
            started = time.perf_counter()
            try:
                problem = problem_for(case, seed)
            except (UserError, OSError) as error:
                clock["prepare"] += time.perf_counter() - started
                skipped.append(f"{case.title}: {error}")
                print(f"{case.title}: skipped: {error}", flush=True)
                break  # the same reason holds for every seed
            clock["prepare"] += time.perf_counter() - started
            data = problem.data
            sizes = np.bincount(data.train.groups, minlength=2)
            outcome = run_instance(problem, clock)
            outcomes.append(outcome)
            groups = ", ".join(f"{g} {n:,}" for g, n in zip(data.group_names, sizes, strict=True))
            print(
                f"{case.title} seed {seed}: train {len(data.train):,} ({groups}), test "
                f"{len(data.test):,}, d {problem.design('train').shape[1]} — "
                f"{time.perf_counter() - started:.1f} s",
                flush=True,
            )
            for note in outcome.notes:
                print(f"  note: {note}", flush=True)
    if not outcomes:
        print("no instance could be prepared")
        return

    medians = print_medians(outcomes, len(outcomes))
    print_wins(outcomes)
    exact = print_exact(outcomes)
    print_train_check(outcomes)
    print()
    for method in BADR:
        print(verdict(medians, method, "test measure"))
    for method in BADR:
        print(verdict(exact, method, "exact test companion"))
    for line in skipped:
        print(f"skipped: {line}")
    total = time.perf_counter() - began
    print(
        "\nwall time: "
        + ", ".join(f"{p} {clock[p]:.1f} s" for p in PARTS)
        + f"; total {total:.1f} s"
    )


if __name__ == "__main__":
    main()
