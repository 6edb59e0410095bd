"""`python -m engine run` (train one model) and `python -m engine solvers` (what can train it)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path

from engine.cli.data_args import (
    add_data_arguments,
    data_spec_from_args,
    prepare_options_from_args,
    print_download_progress,
)
from engine.cli.family_flags import add_family_option_arguments, family_options_from_args
from engine.cli.output import write_output
from engine.cli.tuning_commands import tuned_run_command
from engine.data.prepared import Prepared
from engine.data.sources import load_prepared
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import (
    family_names,
    quantity_metric,
    quantity_name,
)
from engine.model_file import save_model
from engine.models import ACTIVATIONS, ModelSpec
from engine.objectives import (
    DEFAULT_OBJECTIVE,
    OBJECTIVE_TYPES,
    Objective,
    PairwiseAUCLoss,
    objective_type,
)
from engine.runs import RunSpec, Store
from engine.runs.execute import build_problem, execute
from engine.runs.export import run_model
from engine.runs.frontier_text import format_front
from engine.runs.fronts import solution_front
from engine.runs.results import (
    front_frontier,
    run_quantity,
    solution_verdict,
)
from engine.runs.submit import submit
from engine.solvers import (
    Budget,
    IterationRecord,
    Solution,
    config_fields,
    config_from_dict,
    solver_card,
    solver_names,
)
from engine.solvers.card import SolverCard
from engine.solvers.honour_rules import (
    DEFAULT_HONOUR,
    HOLDING_WORDS,
    HONOUR_OFF,
    HONOUR_SPLITS,
    run_honour,
)
from engine.solvers.records import RecordKind
from engine.status import WITH_MODEL
from engine.task import Task
from engine.verdict import REPORTED_SPLITS, KappaState, SplitCheck, Verdict

CONSTRAINTS = {name.lower(): name for name in family_names()} | {"none": None}
DEFAULT_CONSTRAINT = {Task.CLASSIFICATION: "psp", Task.REGRESSION: "none"}


def register(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser("run", help="train one model under a fairness constraint")
    add_problem_arguments(run)
    run.add_argument("--out", type=Path, help="write the run (config, trajectory, metrics) as JSON")
    run.add_argument(
        "--save-model",
        type=Path,
        metavar="PATH",
        help="save the trained model with its preprocessing as a model file (.npz) "
        "for `python -m engine predict`",
    )
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    run.add_argument(
        "--tune",
        action="store_true",
        help="tune the solver's options by its paper's protocol first: one run per setting of "
        "its grid (each within the budget), the one its rule picks on validation, then the run "
        "to report; all in the run store (`solvers` lists each solver's grid)",
    )
    add_background_arguments(run)
    run.add_argument(
        "--background",
        action="store_true",
        help="queue the run in the run store and return at once",
    )
    run.set_defaults(handler=run_command)

    listing = commands.add_parser("solvers", help="list the solvers with their options")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=list_solvers)


def add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_arguments(parser)
    problem = parser.add_argument_group("problem")
    problem.add_argument(
        "--constraint",
        choices=sorted(CONSTRAINTS),
        help="constraint family (psp, pdp: paper 003; none: unconstrained); default psp, and "
        "none for a real-valued label, for which no family is defined",
    )
    problem.add_argument(
        "--interval",
        type=float,
        nargs=2,
        default=[0.0, 1.0],
        metavar=("ALPHA", "BETA"),
        help="I = [α, β): each group's ranks counted from the top "
        "(0.05 0.30 = each group's top 5%%–30%% of scores)",
    )
    problem.add_argument("--kappa", type=float, default=0.05, help="tolerance κ")
    problem.add_argument("--grid-size", type=int, default=10, help="|Î| for pSP (paper: 10)")
    problem.add_argument("--surrogate", choices=("ramp", "sigmoid"), default="ramp")
    problem.add_argument(
        "--pairs",
        choices=("all", "vs_mean"),
        default="all",
        help="group_loss_gap: every pair of groups (paper 000, Exp. 1) or each "
        "group against the mean over groups (eq. 4)",
    )
    add_family_option_arguments(problem)
    problem.add_argument("--temperature", type=float, default=1.0)
    problem.add_argument("--model", choices=("linear", "mlp"), default="linear")
    problem.add_argument("--hidden", type=int, nargs="+", default=[64], help="MLP widths")
    problem.add_argument(
        "--activation",
        choices=ACTIVATIONS,
        default="relu",
        help="the MLP's activation after each hidden layer",
    )
    problem.add_argument(
        "--objective",
        choices=list(OBJECTIVE_TYPES),
        help="training objective: for a binary label the logistic loss, paper "
        "002's squared hinge max(0, 1 − ζh)² (ℓ2 SVM) or paper 004's pairwise "
        "AUC square loss c1 (h(ξ) − h(ξ′) − c2)² over (positive, negative) "
        "pairs (eq. 3); for a real-valued label the squared loss ½(h − y)² "
        "(ridge regression with --option l2=...); default: the solver's "
        "(pairwise_auc for a solver that needs it, else logistic), squared for "
        "a real-valued label",
    )
    problem.add_argument(
        "--objective-c1",
        type=float,
        help="pairwise_auc: c1 > 0, default 0.5 (paper 004 uses 0.5 or 1, one loss for "
        "objective and constraint; these set the objective's own)",
    )
    problem.add_argument(
        "--objective-c2", type=float, help="pairwise_auc: c2 > 0, default 1 (paper 004 uses 1)"
    )
    solver = parser.add_argument_group("solver")
    solver.add_argument("--solver", default="idca", help="see `python -m engine solvers`")
    solver.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a solver option, e.g. --option outer_iterations=100",
    )
    solver.add_argument("--iterations", type=int, help="stop after this many iterations")
    solver.add_argument("--seconds", type=float, help="stop after this many seconds")
    solver.add_argument(
        "--honour",
        choices=(*HONOUR_SPLITS, HONOUR_OFF),
        metavar="SPLIT",
        help=f"'train': κ {HOLDING_WORDS['train']}; 'val': κ "
        f"{HOLDING_WORDS['val']}; 'off': solve once, as the solver's paper "
        f"does (default {DEFAULT_HONOUR}; solvers that cannot hold κ solve "
        "once)",
    )
    solver.add_argument(
        "--save-every",
        type=positive_int,
        metavar="N",
        help="save and evaluate the iterate every N iterations",
    )
    solver.add_argument(
        "--save-seconds",
        type=float,
        metavar="T",
        help="save and evaluate the iterate every T seconds of solver time",
    )


def add_background_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--home",
        type=Path,
        default=None,
        help="run store folder (default $FAIRFRONT_HOME or data/runs)",
    )
    parser.add_argument(
        "--workers", type=positive_int, default=2, help="background worker processes"
    )
    parser.add_argument("--force", action="store_true", help="run again even if a result exists")


def positive_int(text: str) -> int:
    """An argparse type: a whole number ≥ 1 (argparse reports anything else as a usage error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a whole number, not '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs a whole number ≥ 1, not {value}")
    return value


def parse_options(pairs: list[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UserError(f"--option takes NAME=VALUE, not '{pair}'")
        options[name.strip()] = value.strip()
    return options


def constraint_from_args(
    args: argparse.Namespace, task: Task, card: SolverCard
) -> ConstraintSpec | None:
    """The constraint of --constraint and its flags; by default pSP for a binary label and none
    for a real-valued one (`task`), for which no family is defined, or for a solver whose
    fairness is a measure it minimises itself (the card's `measure_option`)."""
    default = "none" if card.measure_option else DEFAULT_CONSTRAINT[task]
    family = CONSTRAINTS[args.constraint or default]
    if family is None:
        return None
    if family != "group_loss_gap" and args.pairs != "all":
        raise UserError("--pairs sets the group_loss_gap constraint only")
    options = family_options_from_args(args, family)
    return ConstraintSpec(
        family,
        args.kappa,
        tuple(args.interval),
        pairs=args.pairs,
        surrogate=args.surrogate,
        temperature=args.temperature,
        grid_size=args.grid_size,
        options=options,
    )


def _family(constraint: ConstraintSpec | None) -> str | None:
    return None if constraint is None else constraint.family


def run_spec_from_args(args: argparse.Namespace) -> RunSpec:
    """The RunSpec the data, problem and solver flags describe (validated by the caller)."""
    card = solver_card(args.solver)
    config = config_from_dict(card.Config, parse_options(args.option))
    data = data_spec_from_args(args)
    constraint = constraint_from_args(args, data.label_task, card)
    return RunSpec(
        data=data,
        prepare=dataclasses.replace(prepare_options_from_args(args), cross_terms=False),
        model=ModelSpec(
            kind=args.model,
            cross_terms=args.cross_terms,
            hidden=tuple(args.hidden),
            activation=args.activation,
        ),
        constraint=constraint,
        interval=tuple(args.interval),
        solver=card.name,
        config=dataclasses.asdict(config),
        budget=Budget(
            max_iterations=args.iterations,
            max_seconds=args.seconds,
            save_every=args.save_every,
            save_seconds=args.save_seconds,
        ),
        seed=args.seed,
        objective=objective_from_args(args, card.default_objective, data.label_task),
        honour=run_honour(args.honour, [card.name], _family(constraint)),
    )


def objective_from_args(args: argparse.Namespace, default: str, task: Task) -> Objective:
    """The training objective of --objective, else `default` (the solver's) for a binary label
    and the squared loss for a real-valued one (`task`), the one objective defined for it; its
    c1 and c2 set the pairwise AUC loss only."""
    given = {
        name: value
        for name, value in (("c1", args.objective_c1), ("c2", args.objective_c2))
        if value is not None
    }
    name = args.objective or (default if task is Task.CLASSIFICATION else DEFAULT_OBJECTIVE[task])
    if name == PairwiseAUCLoss.name:
        return PairwiseAUCLoss(**given)
    if given:
        raise UserError("--objective-c1 and --objective-c2 set the pairwise_auc objective only")
    return objective_type(name)()


def run_command(args: argparse.Namespace) -> int:
    spec = run_spec_from_args(args)
    if args.tune:
        return tuned_run_command(args, spec)
    if args.background and args.save_model is not None:
        raise UserError(
            "--save-model saves a run made here; a background run's model is saved "
            "with `python -m engine runs export-model RUN_ID PATH` once it ends"
        )
    if args.background:
        store = Store(args.home)
        (run_id,) = submit([spec], store, force=args.force, workers=args.workers)
        print(run_id)
        print(
            f"queued in {store.home}; follow it with `python -m engine runs show {run_id}`",
            file=sys.stderr,
        )
        return 0
    spec.data.files(print_download_progress)  # what --download allows, with its progress
    spec.validate()  # a solver that cannot solve this problem is refused before data is read
    prepared = load_prepared(spec.data, spec.prepare, use_cache=not args.no_cache)
    problem = build_problem(spec, prepared=prepared)  # its refusal or warnings precede the summary
    card = spec.card
    family = spec.constraint.family if spec.constraint is not None else None
    if not args.quiet:
        print(
            f"{prepared.dataset_name}: {len(prepared.train):,} training rows, "
            f"groups {', '.join(prepared.group_names)}; solver {card.name}",
            file=sys.stderr,
        )
    log = None if args.quiet else ProgressPrinter(family, prepared.task)
    solution = execute(spec, problem, log=log)
    verdict = solution_verdict(spec, solution)
    if solution.front:  # a run that yields a set of models: its front, then the reported one
        front = front_frontier(spec.run_id, spec, solution_front(solution.front), solution.metrics)
        print(format_front(front, spec.run_id, run_quantity(spec)))
    print(format_result(solution, verdict, prepared.task))
    if args.out is not None:
        document = {
            "spec": spec.to_dict(),
            "data": prepared.summary(),
            "result": solution.to_dict(with_scores=True),
            "verdict": verdict.to_dict(),
        }
        write_output(args.out, json.dumps(document, indent=1))
        print(f"written: {args.out}", file=sys.stderr)
    if args.save_model is not None:
        save_run_model(args.save_model, spec, prepared, solution, verdict)
    return 0


def save_run_model(
    path: Path, spec: RunSpec, prepared: Prepared, solution: Solution, verdict: Verdict
) -> None:
    """Save the model of a run made here (`engine.runs.export.run_model`)."""
    if solution.status not in WITH_MODEL:
        raise UserError(
            f"the run ended {solution.status} without a model; nothing was saved in {path}"
        )
    model = run_model(
        spec,
        prepared,
        solution.params,
        spec.run_id,
        verdict,
        solution.metrics,
        str(solution.status),
    )
    save_model(model, path)
    print(
        f"model written: {path} (apply it with `python -m engine predict {path} CSV`)",
        file=sys.stderr,
    )


# the exact metrics shown per split of a model, by the task of its label: a classifier's
# accuracy and AUC, a regression's RMSE and R² (the first also in the progress lines)
SPLIT_SCORES = {Task.CLASSIFICATION: ("accuracy", "auc"), Task.REGRESSION: ("rmse", "r2")}


class ProgressPrinter:
    """Prints one progress line per second at most; exact lines name the constrained quantity."""

    def __init__(self, family: str | None, task: Task) -> None:
        self.last = -1.0
        self.quantity = quantity_name(family, task)
        self.metric = quantity_metric(family, task=task)
        self.score = SPLIT_SCORES[task][0]

    def __call__(self, record: IterationRecord) -> None:
        now = time.perf_counter()
        if record.kind == RecordKind.EXACT:
            v, q, score = record.values, self.quantity, self.score
            print(
                f"    exact  train {score} {_fmt(v.get(f'train.{score}'))} {q} "
                f"{_fmt(v.get(f'train.{self.metric}'))} | val {score} "
                f"{_fmt(v.get(f'val.{score}'))} {q} {_fmt(v.get(f'val.{self.metric}'))}",
                file=sys.stderr,
            )
        elif record.kind == RecordKind.SURROGATE and now - self.last >= 1.0:
            self.last = now
            print(
                f"it {record.iteration:>7}  {record.seconds:7.1f}s  f0 {_fmt(record.objective)}"
                f"  max violation {_fmt(record.max_violation)}",
                file=sys.stderr,
            )


def _fmt(value: float | None) -> str:
    """A number for a table cell; "—" for a missing one (None, NaN or infinite)."""
    return "—" if value is None or not math.isfinite(value) else f"{value:.4f}"


def format_result(solution: Solution, verdict: Verdict, task: Task) -> str:
    """How the run ended, the verdict with its findings, and per split (test first) the scores
    of `SPLIT_SCORES` (a classifier's accuracy and AUC, a regression's RMSE and R²), the first
    with its 95 % interval on held-out splits, and the constrained quantity, named by its
    family, with its interval, beside κ and what the split says of it (`engine.verdict`)."""
    lines = [
        f"{solution.solver}: {solution.status} ({solution.reason}) after "
        f"{solution.iterations:,} iterations, {solution.seconds:.1f} s",
        f"verdict: {verdict.summary}",
    ]
    lines += [f"  - {finding}" for finding in verdict.findings]
    scores = SPLIT_SCORES[task]
    rows = [("split", *scores, verdict.quantity, "κ", "verdict")]
    for split in REPORTED_SPLITS:
        check, metrics = verdict.check(split), solution.metrics.get(split)
        if check is None or not metrics:
            continue
        first = _with_interval(
            metrics.get(scores[0]),
            metrics.get(f"{scores[0]}_low"),
            metrics.get(f"{scores[0]}_high"),
        )
        value = _with_interval(check.value, check.low, check.high)
        kappa = "—" if check.kappa is None else f"{check.kappa:g}"
        rows.append(
            (
                split,
                first,
                *(_fmt(metrics.get(name)) for name in scores[1:]),
                value,
                kappa,
                _state_words(check),
            )
        )
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines += [
        "  ".join(
            cell.ljust(w) if c in (0, len(row) - 1) else cell.rjust(w)
            for c, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    return "\n".join(lines)


def _with_interval(value: float | None, low: float | None, high: float | None) -> str:
    """ "0.8317 (0.826–0.837)": a value with its 95 % interval, the value alone without one."""
    text = _fmt(value)
    return text if low is None or high is None else f"{text} ({low:.3f}–{high:.3f})"


def _state_words(check: SplitCheck) -> str:
    """What a split says of κ, for a table: "meets", "misses (+0.0227)", "cannot tell"."""
    state = check.state
    if state is None:
        return ""
    if state is KappaState.MISSES and not check.has_interval:
        return f"misses (+{check.excess:.4f})"
    return {
        KappaState.MEETS: "meets",
        KappaState.MISSES: "misses",
        KappaState.CANNOT_TELL: "cannot tell",
    }[state]


def list_solvers(args: argparse.Namespace) -> int:
    entries = []
    for name in solver_names():
        card = solver_card(name)
        entries.append(
            {
                "name": name,
                "paper": card.paper,
                "summary": card.summary,
                "needs_constraint": card.constrained,
                "families": card.families() if card.constrained else "any (only reported)",
                "models": card.model_kinds(),
                "requires": [
                    {"capability": c.key, "of": c.side.value, "means": c.words, "why": why}
                    for c, why in card.needs.items()
                ],
                "options": [option.to_dict() for option in config_fields(card.Config)],
                "tuning": card.tuning.words() if card.tuning is not None else None,
            }
        )
    if args.json:
        print(json.dumps(entries, indent=2, default=str))
        return 0
    for entry in entries:
        families = entry["families"]
        families = families if isinstance(families, str) else ", ".join(families)
        models = " and ".join(entry["models"])
        print(
            f"{entry['name']}  (paper {entry['paper']}; constraints: {families}; {models} models)"
        )
        print(f"    {entry['summary']}")
        for need in entry["requires"]:
            print(f"    needs of the {need['of']}: {need['means']} ({need['why']})")
        for opt in entry["options"]:
            default = "(unset)" if opt["optional"] else opt["default"]
            bounds = f" ({opt['range']})" if opt["range"] else ""
            print(f"    --option {opt['name']}={default}{bounds}  {opt['help']}")
        if entry["tuning"]:
            print(f"    --tune: {entry['tuning']}")
        print()
    return 0
