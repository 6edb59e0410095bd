"""Is the verdict's call on validation right, where the population value is known?

A run's verdict (`engine.verdict`) judges the exact held-out value of its constrained quantity by
its 95 % interval (`engine.fairness.intervals`): "meets κ" when the interval's high end ≤ κ,
"misses κ" when its low end > κ, "cannot tell" otherwise. The claim checked here: among runs it
says meet κ, the population value is ≤ κ in ≥ 95 % of cases; among runs it says miss κ, the
population value is > κ in ≥ 95 %.

Population. The synthetic census generator draws one file of 2.4 M persons of Connecticut and
Massachusetts (`SyntheticACSSpec(state="CT,MA", n_persons=2_400_000)`; one state's file holds at
most 2 M persons, about 980,000 rows of the income task, so two states are pooled): 1,174,410
rows of the income task, written once under the data cache (about 50 s) and read once per run
of the bench. Groups by SEX. Every case is its own draw from it: the file is prepared in memory
(`engine.data.prepare.prepare`, as `load_prepared` does without its cache, which would store
about 100 MB per split seed) with split fractions that give `size` training rows, a quarter as
many validation rows, and the rest (≥ 1,100,000 rows) as the test split, which is the
population: the exact value of the model on it, `metrics["test"]["constraint"]`, is the
population value (train and validation take under 5 % of the file, so the test rows are the
file up to a random few per cent). The split is stratified by group × label and the encoder is
fitted on the training rows only, so the population rows are fresh. The split seed, which is
also the solver's seed, is made from (seed, size, family, model, κ), so no two cases share a
training draw, and a case is the same draw whatever else is run.

Cases: κ (`--kappas`) × seeds (`--seeds`) × families (`--families`: pSP on I = [5 %, 30 %),
DP and EO at threshold 0) × models (`--models`: "linear", linear with group cross-terms,
prepared without them, solved by IDCA with its paper's defaults and its own stopping rule,
under a guard budget of `GUARD_SECONDS`; "mlp", one hidden layer of 16 ReLU units, solved by
SSL-ALM with paper 000's Exp. 1 defaults, which has no stopping rule: each solve stops after
`MLP_ITERATIONS` iterations and the run after `--seconds` wall seconds, so that holding κ has
budget left for re-solves) × training sizes (`--sizes`; validation a quarter as large, so its
resolution varies). Each run holds κ on the exact training value, the app's default
(`engine.solvers.honour.solve_honouring(..., "train")`); then the 95 % intervals of its
validation values are added as `solve_run` adds them (`Problem.interval_report`, validation
only: here the test split is the population, not a sample, and pSP's bootstrap over its 1.1 M
rows would take about 40 s a run). The verdict is `engine.verdict.judge` on the train and
validation metrics alone (test dropped), so validation is the held-out split it speaks of; the
state is `verdict.check("val").state`.

Printed:
(1) per validation state (meets κ / misses κ / cannot tell), over all cases and per family,
    model and training size: the cases, how many are right (meets: population ≤ κ; misses:
    population > κ; cannot tell: population ≤ κ, for information) and the share, with its
    one-sided 95 % Clopper–Pearson lower bound (goal for meets and misses: share ≥ 0.95; a
    lower bound below 0.95 with a share above it only says there are too few cases to show it).
    Then the same per verdict label (the label also weighs the training value: "misses κ" there
    includes runs above κ on the training data) with the share whose population value is ≤ κ;
    then every wrong call with its numbers.
(2) the interval's coverage of the population value (low ≤ population ≤ high) per family,
    model and size, with its lower bound (goal ≥ 0.95), and how often the population lies above
    the high end (goal ≤ 0.025: that failure is the one that makes "meets κ" wrong) or below the
    low end.
(3) for the cases that cannot tell, per family, size and κ: how many, the median smallest κ
    the validation split resolves ("constraint_resolves") against κ, and the median rows per
    group (of the smallest cell) that would resolve κ.
(4) holding modes side by side on a subset (`--modes`; pSP, linear, IDCA, every κ and seed,
    the first size), each mode on the same draws: "off" solves once (`engine.solvers.solve`),
    "train" holds κ on the exact training value, "val" also tightens κ′ until the validation
    value is ≤ κ. Per mode, over all κ and per κ: the share of runs whose population value is
    ≤ κ, the share whose exact training value is ≤ κ, how many the verdict on validation says
    meet κ and the share of those whose population value is ≤ κ, the mean population accuracy,
    the mean run seconds (the run's own clock, solver work only, as the app shows it) and the
    mean wall seconds (with each solve's exact metrics, here on the 1.1 M population rows).
    How to read it for the app's default: population ≤ κ is what the user asked for; a mode
    that raises that share over "off" at little population accuracy and time earns its place.
    "train" − "off" is what holding on the training data buys; "val" − "train" what honouring on
    validation adds beyond it. Under "val" the validation split chose the model, so its verdict
    there is no independent check: the share of its "meets κ" calls whose population value is
    ≤ κ shows how optimistic that makes it (under "off" and "train" it is the calibration of
    (1)).
(5) the bench's wall time.
Progress goes to stderr. Each solver is run once, untimed, before the cases, so that no timed
run pays for compiling it. IDCA's compiled loops use `--threads` threads (`engine.threads`;
default 1): on a machine whose cores other work shares, more make every step wait for a thread
that is not running, and a run's seconds then vary tenfold between identical solves. IDCA
reports the snapshot of best validation accuracy (its paper's default): validation picks among
a run's iterates by accuracy, not by the constrained value the verdict judges.

    .venv/bin/python bench/verdict_calibration.py [--quick] [--seeds 0 1 2] [--kappas 0.05 0.2]
        [--families pSP DP EO] [--models linear mlp] [--sizes 10000 40000]
        [--modes off train val] [--seconds 60] [--threads 1] [--persons 2400000]
        [--results FILE [--stored]]

--results FILE keeps every run's result as a line of JSON in FILE, and a run already there is
read back instead of run again: a long bench can be resumed, or split over processes (each
with its own --seeds, one FILE) and its tables printed by one more call with all the seeds.
With --stored that call runs nothing: its tables hold the results of its grid that FILE has
(so grids run apart, e.g. more seeds of one family and model, print as one table).

--quick: κ ∈ {0.05, 0.2}, pSP and EO, both models, 4,000 training rows, seed 0; the MLP 20 s
per run and 3,000 iterations per solve.

--persons N draws from a population of N persons instead of 2.4 M (its files are written once
under the data cache too). A check in seconds that the bench runs, on one small case per table:
`--persons 60000 --sizes 2000 --kappas 0.1 --families pSP --models linear --modes off
--seeds 0`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import statistics
import sys
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.acs import SyntheticACSSpec  # noqa: E402
from engine.data.acs_files import state_file  # noqa: E402
from engine.data.dataset import Dataset  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions, prepare  # noqa: E402
from engine.data.prepared import Prepared  # noqa: E402
from engine.errors import UserError  # noqa: E402
from engine.fairness.constraints import ConstraintSpec  # noqa: E402
from engine.fairness.families import quantity_name  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.solvers import solve  # noqa: E402
from engine.solvers.budget import Budget  # noqa: E402
from engine.solvers.catalogue import solver_card  # noqa: E402
from engine.solvers.honour import solve_honouring  # noqa: E402
from engine.threads import use_threads  # noqa: E402
from engine.verdict import KappaState, judge  # noqa: E402

PERSONS = 2_400_000  # the population's persons (`--persons`)
GROUPING = GroupingSpec("SEX")
INTERVAL = (0.05, 0.30)
KAPPAS = (0.02, 0.05, 0.1, 0.2)
FAMILIES = ("pSP", "DP", "EO")
MODELS = ("linear", "mlp")
SIZES = (10_000, 40_000)
SEEDS = (0, 1, 2)
MODES = ("off", "train", "val")
CASE_MODE = "train"  # the app's default (engine.solvers.honour_rules.DEFAULT_HONOUR)
VAL_SHARE = 0.25  # validation rows per training row
SECONDS = 60.0
MLP_ITERATIONS = 10_000  # per solve of SSL-ALM (about 20 s on one core)
GUARD_SECONDS = 600.0  # a run of a solver with its own stopping rule stops here at the latest
QUICK = {
    "kappas": (0.05, 0.2),
    "families": ("pSP", "EO"),
    "models": MODELS,
    "sizes": (4000,),
    "seeds": (0,),
    "seconds": 20.0,
    "iterations": 3000,
}
GOAL = 0.95
MODE_FAMILY, MODE_MODEL = "pSP", "linear"
STATES = (KappaState.MEETS, KappaState.MISSES, KappaState.CANNOT_TELL)


@dataclass(frozen=True)
class Model:
    """A model of the bench and the solver that trains it; `stops`: the solver has a stopping
    rule of its own (else it runs until its iteration cap or the run's seconds)."""

    spec: ModelSpec
    solver: str
    stops: bool
    words: str


MODEL_TABLE = {
    "linear": Model(ModelSpec(cross_terms=True), "idca", True, "linear with cross-terms, IDCA"),
    "mlp": Model(ModelSpec(kind="mlp", hidden=(16,)), "ssl_alm", False, "MLP (16), SSL-ALM"),
}


@dataclass(frozen=True)
class Draw:
    """One draw of training and validation rows from the population, and the case it serves."""

    family: str
    model: str
    size: int
    kappa: float
    seed: int

    @property
    def split_seed(self) -> int:
        """The split's (and the solver's) seed: the same for the same case in every run."""
        key = f"{self.seed}:{self.size}:{self.family}:{self.model}:{self.kappa!r}"
        return zlib.crc32(key.encode()) % 2**31

    def words(self) -> str:
        return f"{self.family} {self.model} n={self.size} κ={self.kappa:g} seed {self.seed}"


@dataclass(frozen=True)
class Result:
    """One run: its verdict on validation, its exact training value, the population's value and
    accuracy, and its seconds (the run's clock and wall)."""

    draw: Draw
    mode: str
    state: KappaState | None
    label: str
    train: float
    value: float  # exact value on validation
    low: float | None
    high: float | None
    resolves: float | None
    rows_for: int | None  # rows per group (smallest cell) that would resolve κ
    val_rows: int
    population: float
    accuracy: float  # on the population
    seconds: float
    wall: float
    status: str

    @property
    def kappa(self) -> float:
        return self.draw.kappa

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self) | {"state": self.state and str(self.state)})

    @classmethod
    def from_json(cls, line: str) -> Result:
        fields = json.loads(line)
        state = fields.pop("state")
        return cls(
            **fields
            | {
                "draw": Draw(**fields["draw"]),
                "state": None if state is None else KappaState(state),
            }
        )

    @property
    def below(self) -> bool:
        """The population value is ≤ κ."""
        return self.population <= self.kappa

    @property
    def right(self) -> bool:
        """The state says what the population shows (cannot tell: the population is ≤ κ)."""
        return not self.below if self.state is KappaState.MISSES else self.below


def constraint(family: str, kappa: float) -> ConstraintSpec:
    interval = INTERVAL if family == "pSP" else None
    return ConstraintSpec(family, kappa, interval)


def population(persons: int) -> SyntheticACSSpec:
    """The synthetic census file of `persons` persons of Connecticut and Massachusetts."""
    return SyntheticACSSpec(state="CT,MA", year=2018, task="income", n_persons=persons)


def population_files(spec: SyntheticACSSpec) -> float:
    """The seconds it took to write the population's files now (0 when they were there)."""
    acs = spec.as_acs()
    there = all(
        state_file(Path(acs.root), state, acs.year, acs.horizon).is_file() for state in spec.states
    )
    start = time.perf_counter()
    spec.files()
    return 0.0 if there else time.perf_counter() - start


def draw_rows(dataset: Dataset, draw: Draw) -> Prepared:
    """The draw prepared: `size` training rows, a quarter as many validation rows, the rest
    the population (test)."""
    rows = len(dataset.frame)
    train, val = draw.size / rows, VAL_SHARE * draw.size / rows
    options = PrepareOptions(
        grouping=(GROUPING,), split=(train, val, 1.0 - train - val), seed=draw.split_seed
    )
    return prepare(dataset, options)


def run(prepared: Prepared, draw: Draw, mode: str, seconds: float, iterations: int) -> Result:
    """Solve the draw's case holding κ as `mode` says ("off": solve once), and judge it on
    train and validation."""
    model = MODEL_TABLE[draw.model]
    problem = Problem(prepared, model.spec, constraint(draw.family, draw.kappa), interval=INTERVAL)
    card = solver_card(model.solver)
    config = card.Config() if model.stops else card.Config(iterations=iterations)
    budget = Budget(max_seconds=GUARD_SECONDS if model.stops else seconds)
    start = time.perf_counter()
    if mode == "off":
        solution = solve(problem, model.solver, config, budget, seed=draw.split_seed)
    else:
        solution = solve_honouring(
            problem, model.solver, mode, config, budget, seed=draw.split_seed
        )
    wall = time.perf_counter() - start
    intervals = problem.interval_report(solution.params, splits=("val",), seed=draw.split_seed)
    metrics = {
        "train": solution.metrics["train"],
        "val": solution.metrics["val"] | intervals.get("val", {}),
    }
    last = solution.last_surrogate()
    verdict = judge(
        solution.status,
        metrics,
        quantity_name(draw.family),
        draw.kappa,
        reason=solution.reason,
        surrogate_violation=None if last is None else last.max_violation,
        tolerance=float(getattr(config, "epsilon", 0.0) or 0.0),
    )
    check = verdict.check("val")
    test = solution.metrics["test"]
    return Result(
        draw=draw,
        mode=mode,
        state=check.state,
        label=str(verdict.label),
        train=solution.metrics["train"]["constraint"],
        value=check.value,
        low=check.low,
        high=check.high,
        resolves=check.resolves,
        rows_for=check.rows_for(draw.kappa),
        val_rows=len(prepared.val),
        population=test["constraint"],
        accuracy=test["accuracy"],
        seconds=solution.seconds,
        wall=wall,
        status=str(solution.status),
    )


def warm_up(prepared: Prepared, models: Iterable[str], family: str, kappa: float) -> None:
    """A short untimed solve of each model's solver, so that no timed run compiles its kernels."""
    for name in models:
        model = MODEL_TABLE[name]
        problem = Problem(prepared, model.spec, constraint(family, kappa), interval=INTERVAL)
        with contextlib.suppress(UserError):  # the timed runs say why
            solve(problem, model.solver, budget=Budget(max_iterations=5, max_seconds=5))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a handful of small cases (see the end of the text above)",
    )
    parser.add_argument("--seeds", type=int, nargs="+", help=f"default {' '.join(map(str, SEEDS))}")
    parser.add_argument(
        "--kappas", type=float, nargs="+", help=f"default {' '.join(map(str, KAPPAS))}"
    )
    parser.add_argument(
        "--families", nargs="+", choices=FAMILIES, help=f"default {' '.join(FAMILIES)}"
    )
    parser.add_argument("--models", nargs="+", choices=MODELS, help=f"default {' '.join(MODELS)}")
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        help=f"training rows (validation: a quarter as many); default {' '.join(map(str, SIZES))}",
    )
    parser.add_argument(
        "--modes",
        nargs="*",
        choices=MODES,
        help=f"holding modes of table (4); default {' '.join(MODES)}; none: no table (4)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        help=f"wall budget of a run of the MLP's solver, which has no stopping "
        f"rule (default {SECONDS:g}; --quick {QUICK['seconds']:g})",
    )
    parser.add_argument(
        "--persons",
        type=int,
        default=PERSONS,
        help=f"the population's persons (default {PERSONS:,}); fewer make a smaller population "
        "for a quick check that the bench runs; a --results FILE holds one population's results",
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="threads of IDCA's compiled loops (default 1)"
    )
    parser.add_argument(
        "--results",
        type=Path,
        help="a file of results, one JSON line each: read back, and added to",
    )
    parser.add_argument(
        "--stored",
        action="store_true",
        help="run nothing: the tables over the grid's results in --results",
    )
    args = parser.parse_args()
    if args.stored and args.results is None:
        parser.error("--stored reads the results of --results FILE")
    use_threads(args.threads)
    quick = QUICK if args.quick else {}
    seeds = args.seeds or quick.get("seeds", SEEDS)
    kappas = args.kappas or quick.get("kappas", KAPPAS)
    families = args.families or quick.get("families", FAMILIES)
    models = args.models or quick.get("models", MODELS)
    sizes = args.sizes or quick.get("sizes", SIZES)
    modes = MODES if args.modes is None else tuple(args.modes)
    seconds = args.seconds or quick.get("seconds", SECONDS)
    iterations = quick.get("iterations", MLP_ITERATIONS)

    start = time.perf_counter()
    spec = population(args.persons)
    written = population_files(spec)
    dataset = spec.load()
    print(
        f"population: {len(dataset.frame):,} rows of {spec.n_persons:,} persons"
        + (f", files written in {written:.0f} s" if written else ""),
        file=sys.stderr,
    )
    # every draw with the modes it is run in: the cases in CASE_MODE, the modes' subset in each
    plan: dict[Draw, list[str]] = {}
    for seed in seeds:
        for size in sizes:
            for family in families:
                for model in models:
                    for kappa in kappas:
                        plan[Draw(family, model, size, kappa, seed)] = [CASE_MODE]
    for seed in seeds:
        for kappa in kappas:
            draw = Draw(MODE_FAMILY, MODE_MODEL, sizes[0], kappa, seed)
            runs = plan.setdefault(draw, [])
            runs.extend(mode for mode in modes if mode not in runs)
    cases = {draw for draw in plan if draw.family in families and draw.model in models}
    kept = stored(args.results)
    results: list[Result] = []
    errors: list[tuple[Draw, str, str]] = []
    test_rows: list[int] = []
    warmed = False
    done, total = 0, sum(len(runs) for runs in plan.values())
    for draw, runs in plan.items():
        if args.stored:  # the grid's results that FILE holds, none run
            results += [kept[draw, mode] for mode in runs if (draw, mode) in kept]
            continue
        if all((draw, mode) in kept for mode in runs):
            results += [kept[draw, mode] for mode in runs]
            done += len(runs)
            continue
        prepared = draw_rows(dataset, draw)
        test_rows.append(len(prepared.test))
        if not warmed:
            warm_up(prepared, sorted({MODE_MODEL, *models}), draw.family, draw.kappa)
            warmed = True
        for mode in runs:
            done += 1
            head = f"[{time.perf_counter() - start:6.0f} s] {done}/{total} {draw.words()} {mode}:"
            if (draw, mode) in kept:
                results.append(kept[draw, mode])
                continue
            try:
                result = run(prepared, draw, mode, seconds, iterations)
            except UserError as error:
                errors.append((draw, mode, str(error)))
                print(f"{head} refused ({error})", file=sys.stderr)
                continue
            results.append(result)
            if args.results is not None:
                with args.results.open("a") as file:
                    file.write(result.to_json() + "\n")
            print(
                f"{head} {result.state}, train {result.train:.4f}, val {result.value:.4f} "
                f"[{fmt(result.low)}, {fmt(result.high)}], population "
                f"{result.population:.4f}, {result.wall:.0f} s",
                file=sys.stderr,
            )
        del prepared
    case_results = [r for r in results if r.mode == CASE_MODE and r.draw in cases]
    mode_results = [
        r
        for r in results
        if r.draw.family == MODE_FAMILY and r.draw.model == MODE_MODEL and r.draw.size == sizes[0]
    ]
    header(len(dataset.frame), spec, written, test_rows, seeds, models, sizes, seconds, iterations)
    for draw, mode, why in errors:
        print(f"refused: {draw.words()} {mode}: {why}")
    if errors:
        print()
    calibration(case_results, families, models, sizes)
    coverage(case_results, families, models, sizes)
    unresolved(case_results, families, sizes, kappas)
    if modes:
        compare_modes(mode_results, modes, kappas, sizes[0])
    print(
        f"\n(5) wall time of the bench: {time.perf_counter() - start:.0f} s "
        f"({len(results)} runs, {sum(r.wall for r in results):.0f} s of them in solves)"
    )


def stored(path: Path | None) -> dict[tuple[Draw, str], Result]:
    """The results kept in `path` (none without one, or before it exists), by draw and mode."""
    if path is None or not path.is_file():
        return {}
    results = [Result.from_json(line) for line in path.read_text().splitlines() if line.strip()]
    return {(r.draw, r.mode): r for r in results}


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def lower_bound(k: int, n: int) -> float:
    """One-sided 95 % Clopper–Pearson lower bound of a share k/n."""
    return 0.0 if k == 0 else float(beta.ppf(1.0 - GOAL, k, n - k + 1))


def share(k: int, n: int) -> str:
    """The cells k/n, share and its lower bound."""
    if n == 0:
        return f"{k:>5}/{n:<5} {'—':>6} {'—':>6}"
    return f"{k:>5}/{n:<5} {k / n:>6.3f} {lower_bound(k, n):>6.3f}"


def header(
    rows: int,
    spec: SyntheticACSSpec,
    written: float,
    test_rows: list[int],
    seeds: Iterable[int],
    models: Iterable[str],
    sizes: Iterable[int],
    seconds: float,
    iterations: int,
) -> None:
    wrote = f"; files written in {written:.0f} s" if written else " (files from the data cache)"
    drawn = (
        f"; population (test) rows per draw {min(test_rows):,}–{max(test_rows):,}"
        if test_rows
        else "; population (test) rows per draw: the rest of the file"
    )
    print(
        f"Population: synthetic ACS income, {', '.join(spec.states)}, {spec.n_persons:,} persons, "
        f"{rows:,} rows{wrote}; groups by SEX{drawn}"
    )
    print(
        f"Training rows {', '.join(f'{s:,}' for s in sizes)} (validation a quarter as many); "
        f"seeds {', '.join(map(str, seeds))}; pSP on I = [5%, 30%), DP and EO at threshold 0"
    )
    for name in models:
        model = MODEL_TABLE[name]
        budget = (
            f"guard budget {GUARD_SECONDS:g} s"
            if model.stops
            else f"{iterations:,} iterations per solve, {seconds:g} s per run"
        )
        print(f"model {name}: {model.words} ({budget})")
    print(
        f"Cases hold κ on the training data ('{CASE_MODE}'); the verdict speaks of validation; "
        "the population value is the exact value on the test rows\n"
    )


def subsets(
    results: list[Result], families: Iterable[str], models: Iterable[str], sizes: Iterable[int]
) -> list[tuple[str, list[Result]]]:
    """(name, results) over all cases, then per family, model and training size."""
    out = [("all", results)]
    out += [(family, [r for r in results if r.draw.family == family]) for family in families]
    out += [(model, [r for r in results if r.draw.model == model]) for model in models]
    out += [(f"n={size:,}", [r for r in results if r.draw.size == size]) for size in sizes]
    return out


def calibration(
    results: list[Result], families: Iterable[str], models: Iterable[str], sizes: Iterable[int]
) -> None:
    print(
        "(1) The verdict's state on validation against the population value. right: meets → "
        "population ≤ κ, misses → population > κ (goal: share ≥ 0.95), cannot tell → "
        "population ≤ κ (no goal); lower: one-sided 95 % Clopper–Pearson bound"
    )
    print(f"{'state':<12} {'cases':<10} {'right':>5}/{'n':<5} {'share':>6} {'lower':>6}")
    for state in STATES:
        for name, part in subsets(results, families, models, sizes):
            chosen = [r for r in part if r.state is state]
            if not chosen and name != "all":
                continue
            first = str(state) if name == "all" else ""
            print(f"{first:<12} {name:<10} {share(sum(r.right for r in chosen), len(chosen))}")
    print("\nBy verdict label (it also weighs the training value: rule 5 of engine.verdict):")
    print(f"{'label':<26} {'pop ≤ κ':>7}/{'n':<5} {'share':>6}")
    for label in sorted({r.label for r in results}):
        chosen = [r for r in results if r.label == label]
        below = sum(r.below for r in chosen)
        print(f"{label:<26} {below:>7}/{len(chosen):<5} {below / len(chosen):>6.3f}")
    wrong = [r for r in results if r.state in (KappaState.MEETS, KappaState.MISSES) and not r.right]
    print(f"\nWrong calls: {len(wrong)}")
    for r in wrong:
        print(
            f"  {r.draw.words()}: {r.state}, train {r.train:.4f}, val {r.value:.4f} "
            f"[{fmt(r.low, 4)}, {fmt(r.high, 4)}] on {r.val_rows:,} rows, population "
            f"{r.population:.4f} ({r.label}, {r.status})"
        )
    print()


def coverage(
    results: list[Result], families: Iterable[str], models: Iterable[str], sizes: Iterable[int]
) -> None:
    print(
        "(2) Coverage of the population value by the validation interval (goal ≥ 0.95; "
        "above the high end: goal ≤ 0.025)"
    )
    print(f"{'cases':<10} {'in':>5}/{'n':<5} {'share':>6} {'lower':>6} | {'above':>6} {'below':>6}")
    for name, part in subsets(results, families, models, sizes):
        part = [r for r in part if r.low is not None and r.high is not None]
        if not part:
            continue
        inside = sum(r.low <= r.population <= r.high for r in part)
        above = sum(r.population > r.high for r in part) / len(part)
        below = sum(r.population < r.low for r in part) / len(part)
        print(f"{name:<10} {share(inside, len(part))} | {above:>6.3f} {below:>6.3f}")
    print()


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def unresolved(
    results: list[Result], families: Iterable[str], sizes: Iterable[int], kappas: Iterable[float]
) -> None:
    print(
        "(3) Cannot tell: the smallest κ validation resolves against the case's κ (medians), "
        "and the rows per group (smallest cell) that would resolve κ"
    )
    print(
        f"{'family':<6} {'train':>7} {'val':>6} {'κ':>5} | {'cannot':>6}/{'n':<3} "
        f"{'resolves':>8} {'÷ κ':>6} {'rows for κ':>10}"
    )
    for family in families:
        for size in sizes:
            for kappa in kappas:
                part = [
                    r
                    for r in results
                    if r.draw.family == family and r.draw.size == size and r.kappa == kappa
                ]
                if not part:
                    continue
                unsure = [r for r in part if r.state is KappaState.CANNOT_TELL]
                resolves = median([r.resolves for r in unsure if r.resolves is not None])
                ratio = None if resolves is None else resolves / kappa
                needed = median([r.rows_for for r in unsure if r.rows_for is not None])
                val = round(statistics.mean(r.val_rows for r in part))
                print(
                    f"{family:<6} {size:>7,} {val:>6,} {kappa:>5g} | {len(unsure):>6}/"
                    f"{len(part):<3} {fmt(resolves, 4):>8} {fmt(ratio, 2):>6} "
                    f"{'—' if needed is None else f'{needed:,.0f}':>10}"
                )
    print()


def compare_modes(
    results: list[Result], modes: Iterable[str], kappas: Iterable[float], size: int
) -> None:
    print(
        f"(4) Holding modes on the same draws: {MODE_FAMILY}, {MODEL_TABLE[MODE_MODEL].words}, "
        f"{size:,} training rows. pop ≤ κ: share of runs whose population value is ≤ κ; "
        "train ≤ κ: exact training value ≤ κ; val meets: runs the verdict on validation says "
        "meet κ, and the share of them whose population value is ≤ κ; pop acc: mean "
        "population accuracy; s: mean run seconds (solver clock), wall: mean wall seconds"
    )
    print(
        f"{'mode':<5} {'κ':>5} {'runs':>4} | {'pop ≤ κ':>7} {'train ≤ κ':>9} | "
        f"{'val meets':>9} {'pop ≤ κ':>7} | {'pop acc':>7} {'s':>6} {'wall':>6}"
    )
    for mode in modes:
        for kappa in (None, *kappas):
            part = [r for r in results if r.mode == mode and (kappa is None or r.kappa == kappa)]
            if not part:
                continue
            meets = [r for r in part if r.state is KappaState.MEETS]
            right = fmt(sum(r.below for r in meets) / len(meets)) if meets else "—"
            print(
                f"{mode if kappa is None else '':<5} {'all' if kappa is None else f'{kappa:g}':>5} "
                f"{len(part):>4} | {mean(part, lambda r: r.below):>7.3f} "
                f"{mean(part, lambda r: r.train <= r.kappa):>9.3f} | {len(meets):>9} "
                f"{right:>7} | {mean(part, lambda r: r.accuracy):>7.4f} "
                f"{mean(part, lambda r: r.seconds):>6.1f} {mean(part, lambda r: r.wall):>6.1f}"
            )


def mean(results: list[Result], value: Callable[[Result], float]) -> float:
    return statistics.mean(float(value(r)) for r in results)


if __name__ == "__main__":
    main()
