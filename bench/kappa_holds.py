"""Plain runs against runs that hold κ on the exact training value, per data set, solver and κ.

Each data set is prepared with its protected attribute as groups and without cross-terms, as a
run prepares it (`engine.cli.run_commands` sets `PrepareOptions.cross_terms` to False: that
option writes the products into the design for `data prepare`, and under the model's own
cross-terms they would be crossed twice, 432 parameters instead of 216 on Adult). The model is
linear with group cross-terms (`ModelSpec(cross_terms=True)`, paper 003 §7.1), the loss
logistic, the constraint pSP on I = [5 %, 30 %), κ ∈ {0.2, 0.1, 0.05, 0.02}. Each (data set,
solver, κ) is solved twice from the solver's own start, each within a budget of `--seconds` wall
seconds:
- plain: `engine.solvers.solve`, the solver's own surrogate solved once;
- held: `engine.solvers.honour.solve_honouring(..., "train")`, which, while the model's exact pSP
  on the training data exceeds κ, refines the surrogate (pSP's grid Î, the ramp width, the
  solver's tolerance) and then tightens an inner κ′, each solve warm-started
  (`engine.solvers.exact_train`).

Data sets (`--data`), each by its loader's default protected attribute: adult (Adult, by sex),
compas (by race, four groups), german (by sex), law (by race, White / not White: its eight
groups leave some too small for a rank band at κ ≤ 0.05), acs-ct (ACS Connecticut income, by
RAC1P White / not White, the folktables-layout files under ../shared/data/acs/pums) and csv
(German credit written by this script to a temporary CSV with every column renamed col_00,
col_01, ..., read by the generic CSV loader, so a table no bundled loader recognises is
covered). A data set whose files are missing is skipped with the reason; a κ whose rank band
holds less than one row of a group is refused by the problem, and printed so. Solvers
(`--solvers`): idca, ssg, penalty, ssl_alm; a solver the model or pSP refuses, or that cannot
hold κ at all (`engine.solvers.honour_rules`), is printed with the reason and skipped.

Printed per data set, one line per solver and κ: the exact training pSP of the plain and the
held model (* after the plain value: the plain run already met κ; ! after the held value: the
held run ended "converged" above κ, which must never happen); the stop code of the plain and of
the held run (it gives the status: time_budget and iteration_cap, the solver's own cap, are
"budget", kappa_unmet is "infeasible") and the held run's solves; test accuracy plain and held
and held − plain; wall seconds (time.perf_counter around each call) plain and held and held ÷
plain. Then the summary:
(1) held runs that ended converged and how many of them hold κ on train (goal: all), and how
    many held and plain runs hold it whatever their status;
(2) where the plain run met κ, the largest |test accuracy held − plain| (goal ≤ 0.005);
(3) held wall ÷ plain wall, median and max (goal ≤ 2); both runs share one budget, so where the
    plain run already spends it the ratio is near 1 whatever holding would cost: those pairs
    are counted;
(4) each held run that did not hold κ, with its status and stop sentence.
Each solver is run once, untimed, before the table, so that no timed run pays for compiling it.

    .venv/bin/python bench/kappa_holds.py [--quick] [--seconds 60] [--data adult german ...]
        [--solvers idca ssg] [--kappas 0.1 0.02]

--quick: Adult only, idca only, κ ∈ {0.1, 0.02}.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.data.acs import ACSSpec  # noqa: E402
from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.classic import CLASSIC, ClassicSpec, find_file  # noqa: E402
from engine.data.csv_source import CSVSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.data.prepared import Prepared  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.errors import UserError  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.runs.honour_search import honour_search  # noqa: E402
from engine.solvers import Solution, solve  # noqa: E402
from engine.solvers.budget import Budget  # noqa: E402
from engine.solvers.catalogue import solver_card  # noqa: E402
from engine.solvers.honour import solve_honouring  # noqa: E402
from engine.solvers.honour_rules import honour_refusal  # noqa: E402
from engine.status import STATUS_OF_CODE, RunStatus, StopCode  # noqa: E402

INTERVAL = (0.05, 0.30)
KAPPAS = (0.2, 0.1, 0.05, 0.02)
SOLVERS = ("idca", "ssg", "penalty", "ssl_alm")
DATA = ("adult", "compas", "german", "law", "acs-ct", "csv")
QUICK = {"data": ("adult",), "solvers": ("idca",), "kappas": (0.1, 0.02)}
FAMILY = "pSP"
MODEL = ModelSpec(cross_terms=True)
ACCURACY_GOAL = 0.005  # |held − plain| test accuracy where the plain run already met κ
WALL_GOAL = 2.0  # held wall ÷ plain wall
ACS_ROOT = ROOT.parent / "shared" / "data" / "acs" / "pums"
ACS_FILE = Path("1-Year") / "psam_p09.csv"  # Connecticut's person file in folktables layout
CSV_SOURCE = "german"  # the bundled table the CSV data set is written from


@dataclass(frozen=True)
class Source:
    """A data set: its title, and how to make its spec and grouping (in a scratch folder)."""

    title: str
    make: Callable[[Path], tuple[object, GroupingSpec]]
    cache: bool = True  # a spec whose file lives in the scratch folder is not worth caching


def _classic(kind: str, mode: str, scratch: Path) -> tuple[object, GroupingSpec]:
    return ClassicSpec(kind), GroupingSpec(CLASSIC[kind].protected[0], mode)


def _acs(scratch: Path) -> tuple[object, GroupingSpec]:
    """ACS income, Connecticut, in the latest year whose file ../shared/data/acs/pums holds."""
    years = sorted(int(p.name) for p in ACS_ROOT.glob("[0-9]*") if (p / ACS_FILE).is_file())
    if not years:
        raise UserError(f"no Connecticut person file {ACS_FILE} under {ACS_ROOT}")
    spec = ACSSpec(states=("CT",), year=years[-1], task="income", root=str(ACS_ROOT))
    return spec, GroupingSpec("RAC1P", "binary")


def _renamed_csv(scratch: Path) -> tuple[object, GroupingSpec]:
    """German credit with every column renamed col_NN, the label and protected column among
    them; personal_status and age_group (sex and age again) are left out."""
    table = CLASSIC[CSV_SOURCE].read(find_file(CSV_SOURCE))
    table = table.drop(columns=["personal_status", "age_group"])
    names = {column: f"col_{i:02d}" for i, column in enumerate(table.columns)}
    path = scratch / "renamed.csv"
    table.rename(columns=names).to_csv(path, index=False)
    spec = CSVSpec(str(path), names["credit"], (names["sex"],), positive="1")
    return spec, GroupingSpec(names["sex"], "all")


SOURCES = {
    "adult": Source("Adult by sex", lambda scratch: (AdultSpec(), GroupingSpec("sex"))),
    "compas": Source("COMPAS by race", partial(_classic, "compas", "auto")),
    "german": Source("German credit by sex", partial(_classic, "german", "auto")),
    "law": Source("Law school by race (White / not)", partial(_classic, "law", "binary")),
    "acs-ct": Source("ACS income CT by RAC1P (White / not)", _acs),
    "csv": Source("CSV (German credit, columns renamed) by its sex column", _renamed_csv, False),
}


@dataclass(frozen=True)
class Run:
    """One run measured: exact training pSP, test accuracy, wall seconds, stop code (which gives
    the status), solves and its stop reason."""

    train: float
    accuracy: float
    seconds: float
    code: StopCode
    solves: int
    reason: str

    @property
    def status(self) -> RunStatus:
        return STATUS_OF_CODE[self.code]

    def holds(self, kappa: float) -> bool:
        return self.train <= kappa


@dataclass(frozen=True)
class Pair:
    data: str
    solver: str
    kappa: float
    plain: Run | None
    held: Run | None
    error: str = ""  # why a run could not be made

    @property
    def broken(self) -> bool:
        """A held run that ended converged above κ."""
        return (
            self.held is not None
            and self.held.status is RunStatus.CONVERGED
            and not self.held.holds(self.kappa)
        )


def load(name: str, scratch: Path) -> tuple[Prepared | None, str]:
    """The data set prepared, or None and why it cannot be."""
    source = SOURCES[name]
    try:
        spec, grouping = source.make(scratch)
        options = PrepareOptions(grouping=(grouping,))  # the model adds the cross-terms: see above
        return load_prepared(spec, options, use_cache=source.cache), ""
    except (UserError, OSError) as error:
        return None, str(error)


def problem(prepared: Prepared, kappa: float) -> Problem:
    return Problem(prepared, MODEL, ConstraintSpec(FAMILY, kappa, INTERVAL), interval=INTERVAL)


def refusal(solver: str) -> str | None:
    """Why `solver` is left out of this bench: it cannot fit the model under pSP, or cannot
    hold κ."""
    return solver_card(solver).refusal(MODEL, FAMILY) or honour_refusal(solver, FAMILY)


def measure(run: Callable[[], Solution]) -> Run:
    start = time.perf_counter()
    solution = run()
    seconds = time.perf_counter() - start
    search = honour_search(solution.trajectory)
    return Run(
        train=solution.metrics["train"]["constraint"],
        accuracy=solution.metrics["test"]["accuracy"],
        seconds=seconds,
        code=solution.stop.code,
        solves=len(search.rows) if search is not None else 1,
        reason=solution.reason,
    )


def pair(name: str, prepared: Prepared, solver: str, kappa: float, budget: Budget) -> Pair:
    try:
        at = problem(prepared, kappa)
        plain = measure(partial(solve, at, solver, budget=budget))
        held = measure(partial(solve_honouring, at, solver, "train", budget=budget))
    except UserError as error:
        return Pair(name, solver, kappa, None, None, str(error))
    return Pair(name, solver, kappa, plain, held)


def warm_up(prepared: Prepared, solvers: list[str], kappa: float) -> None:
    """A short untimed solve of each solver, so that no timed run compiles its kernels."""
    for solver in solvers:
        with contextlib.suppress(UserError):  # the timed runs say why
            solve(problem(prepared, kappa), solver, budget=Budget(max_iterations=5, max_seconds=5))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="Adult, idca, κ ∈ {0.1, 0.02} (unless given)"
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        help="wall budget of each run, plain and held (default 60)",
    )
    parser.add_argument("--data", nargs="+", choices=DATA, help=f"default {' '.join(DATA)}")
    parser.add_argument(
        "--solvers", nargs="+", choices=SOLVERS, help=f"default {' '.join(SOLVERS)}"
    )
    parser.add_argument(
        "--kappas", type=float, nargs="+", help=f"default {' '.join(map(str, KAPPAS))}"
    )
    args = parser.parse_args()
    quick = QUICK if args.quick else {}
    data = args.data or quick.get("data", DATA)
    solvers = args.solvers or quick.get("solvers", SOLVERS)
    kappas = args.kappas or quick.get("kappas", KAPPAS)
    budget = Budget(max_seconds=args.seconds)

    refused = {solver: why for solver in solvers if (why := refusal(solver))}
    running = [solver for solver in solvers if solver not in refused]
    start = time.perf_counter()
    skipped: dict[str, str] = {}
    pairs: list[Pair] = []
    titles: dict[str, str] = {}
    warmed = False
    with tempfile.TemporaryDirectory() as scratch:
        for name in data:
            prepared, why = load(name, Path(scratch))
            if prepared is None:
                skipped[name] = why
                print(f"{name}: skipped ({why})", file=sys.stderr)
                continue
            titles[name] = (
                f"{SOURCES[name].title}: {len(prepared.train):,} training rows, "
                f"{prepared.n_groups} groups"
            )
            if not warmed:
                warm_up(prepared, running, kappas[0])
                warmed = True
            for solver in running:
                for kappa in kappas:
                    done = pair(name, prepared, solver, kappa, budget)
                    pairs.append(done)
                    print(progress(done, time.perf_counter() - start), file=sys.stderr)
    report(pairs, titles, skipped, refused, args.seconds, time.perf_counter() - start)


def progress(done: Pair, elapsed: float) -> str:
    head = f"[{elapsed:6.0f} s] {done.data} {done.solver} κ = {done.kappa:g}:"
    if done.error:
        return f"{head} refused ({done.error})"
    return (
        f"{head} plain {done.plain.seconds:.1f} s, held {done.held.seconds:.1f} s in "
        f"{done.held.solves} solve(s), {done.held.code}"
    )


HEAD = (
    f"{'solver':<8} {'κ':>5} | {'train plain':>12} {'held':>8} | {'stop plain':<14} "
    f"{'held':<14} {'n':>2} | "
    f"{'acc plain':>9} {'held':>7} {'Δ':>7} | {'s plain':>7} {'held':>6} {'÷':>5}"
)


def line(p: Pair) -> str:
    if p.error:
        return f"{p.solver:<8} {p.kappa:>5g} | refused: {p.error}"
    plain, held = p.plain, p.held
    met = "*" if plain.holds(p.kappa) else " "
    mark = "!" if p.broken else " "
    return (
        f"{p.solver:<8} {p.kappa:>5g} | {plain.train:>11.4f}{met} {held.train:>7.4f}{mark} | "
        f"{plain.code!s:<14} {held.code!s:<14} {held.solves:>2} | {plain.accuracy:>9.4f} {held.accuracy:>7.4f} "
        f"{held.accuracy - plain.accuracy:>+7.4f} | {plain.seconds:>7.1f} {held.seconds:>6.1f} "
        f"{held.seconds / plain.seconds:>5.2f}"
    )


def report(
    pairs: list[Pair],
    titles: dict[str, str],
    skipped: dict[str, str],
    refused: dict[str, str],
    seconds: float,
    wall: float,
) -> None:
    print(
        f"pSP on I = [5%, 30%), linear with group cross-terms, logistic loss; budget "
        f"{seconds:g} s per run; plain = solve, held = solve_honouring(..., 'train')"
    )
    print("* plain run already met κ on train; ! held run converged above κ on train\n")
    for name, reason in skipped.items():
        print(f"{name}: skipped: {reason}")
    for solver, reason in refused.items():
        print(f"{solver}: skipped: {reason}")
    if skipped or refused:
        print()
    for name, title in titles.items():
        print(title)
        print(HEAD)
        for p in pairs:
            if p.data == name:
                print(line(p))
        print()
    summary([p for p in pairs if not p.error], wall)


def summary(pairs: list[Pair], wall: float) -> None:
    converged = [p for p in pairs if p.held.status is RunStatus.CONVERGED]
    holding = [p for p in converged if p.held.holds(p.kappa)]
    print(
        f"(1) held runs ended converged: {len(converged)} of {len(pairs)}; of those, train pSP "
        f"≤ κ: {len(holding)} of {len(converged)} (goal: all); held runs with train pSP ≤ κ, "
        f"whatever their status: {sum(p.held.holds(p.kappa) for p in pairs)} of {len(pairs)} "
        f"(plain: {sum(p.plain.holds(p.kappa) for p in pairs)})"
    )
    met = [p for p in pairs if p.plain.holds(p.kappa)]
    if met:
        worst = max(met, key=lambda p: abs(p.held.accuracy - p.plain.accuracy))
        gap = abs(worst.held.accuracy - worst.plain.accuracy)
        print(
            f"(2) where the plain run met κ on train ({len(met)} runs), largest |test accuracy "
            f"held − plain|: {gap:.4f} ({worst.data} {worst.solver} κ = {worst.kappa:g}; goal "
            f"≤ {ACCURACY_GOAL:g}); over {ACCURACY_GOAL:g}: "
            f"{sum(abs(p.held.accuracy - p.plain.accuracy) > ACCURACY_GOAL for p in met)}"
        )
    else:
        print("(2) no plain run met κ on train")
    if pairs:
        ratios = [p.held.seconds / p.plain.seconds for p in pairs]
        worst = max(pairs, key=lambda p: p.held.seconds / p.plain.seconds)
        spent = sum(p.plain.code is StopCode.TIME_BUDGET for p in pairs)
        print(
            f"(3) held wall ÷ plain wall: median {statistics.median(ratios):.2f}, max "
            f"{max(ratios):.2f} ({worst.data} {worst.solver} κ = {worst.kappa:g}; goal ≤ "
            f"{WALL_GOAL:g}); over {WALL_GOAL:g}: {sum(r > WALL_GOAL for r in ratios)} of "
            f"{len(ratios)}; plain run ended on the time budget (ratio capped near 1): {spent}"
        )
    unheld = [p for p in pairs if not p.held.holds(p.kappa)]
    print(f"(4) held runs that did not hold κ on train: {len(unheld)} of {len(pairs)}")
    for p in unheld:
        print(
            f"  {p.data} {p.solver} κ = {p.kappa:g}: train pSP {p.held.train:.4f}, "
            f"{p.held.status} ({p.held.code}): {p.held.reason}"
        )
    print(f"\nwall time of the bench: {wall:.0f} s")


if __name__ == "__main__":
    main()
