"""Every solver at its defaults on every bundled data set: how many runs give a model worth
looking at.

The data sets are those of `bench/kappa_holds.py` (Adult by sex, COMPAS by race, German credit
by sex, Law school by race White / not, ACS income Connecticut by RAC1P White / not) and
Communities and Crime, grouped by its first protected column. Each solver runs once per data
set at its card's defaults, as a page or `run` would make the run (`RunSpec`, queued in a run
store under `--home` and made by the background workers, so a second call reuses what the
first made): the family is its paper's (pSP for paper 003, DP for 001, the group-loss gap for
000, the AUC gap for 004: the one of these whose source is the solver's paper), else the first
of them it solves (a reference solver runs under pSP, which it only reports), else the first
family it solves (paper 003's quadratic AUC families); the model linear with group
cross-terms, or, for a solver that trains networks only, an MLP of 16 hidden units; κ = 0.05
(for paper 003's quadratic AUC families, whose κ bounds a surrogate of another scale, the middle
of its a9a grid: `Family.surrogate_kappa`), I = [5 %, 30 %); κ held on the training data where
the solver can. A combination the problem refuses (a group too small for a rank band, a solver that needs another
objective) is printed with the reason and left out of the counts.

Printed: one line per run (data set, solver, family, status, the verdict's label, the exact
test value with its 95 % interval, test accuracy against the majority rate), then the summary
against the targets of the defaults: ≥ 95 % of the runs not degenerate (no better than always
predicting the majority class), and ≥ 80 % of the runs whose model κ bounds (a constrained
solver's, not a penalty's, whose weight sets the trade-off) within κ + 2σ on test, σ the test
split's sampling noise (the half-width of the value's 95 % interval over 1.96).

    .venv/bin/python bench/defaults_quality.py [--seconds 30] [--data adult compas ...]
        [--solvers idca ssg ...] [--home DIR]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kappa_holds import SOURCES, Source, _classic  # noqa: E402

from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.errors import UserError  # noqa: E402
from engine.fairness.constraint_spec import ConstraintSpec  # noqa: E402
from engine.fairness.families import family_entry  # noqa: E402
from engine.models import ModelSpec  # noqa: E402
from engine.objectives import objective_type  # noqa: E402
from engine.runs import RunSpec, Store  # noqa: E402
from engine.runs.results import run_verdict  # noqa: E402
from engine.runs.submit import submit, wait  # noqa: E402
from engine.solvers import Budget  # noqa: E402
from engine.solvers.catalogue import solver_card, solver_names  # noqa: E402
from engine.solvers.honour_rules import run_honour  # noqa: E402
from engine.verdict import Label  # noqa: E402

KAPPA = 0.05
INTERVAL = (0.05, 0.30)
FAMILIES = ("pSP", "DP", "group_loss_gap", "auc_gap")  # papers 003, 001, 000 and 004
LINEAR = ModelSpec(cross_terms=True)
NETWORK = ModelSpec(kind="mlp", hidden=(16,))
DATA = {
    **{name: SOURCES[name] for name in ("adult", "compas", "german", "law", "acs-ct")},
    "crime": Source("Communities and Crime by racepctblack", partial(_classic, "crime", "auto")),
}
NOT_DEGENERATE_GOAL = 0.95
WITHIN_GOAL = 0.80
Z95 = 1.96


def run_spec(data: str, solver: str, seconds: float, scratch: Path) -> RunSpec:
    """The run of `solver` at its defaults on data set `data` (see the module's text)."""
    card = solver_card(solver)
    solved = [f for f in FAMILIES if f in card.families()] or list(card.families())
    own = [f for f in solved if family_entry(f).source.startswith(f"paper {card.paper},")]
    family = (own or solved)[0]
    model = LINEAR if card.refusal(LINEAR, family) is None else NETWORK
    spec, grouping = DATA[data].make(scratch)
    kappa = family_entry(family).surrogate_kappa or KAPPA
    constraint = ConstraintSpec(family, kappa, INTERVAL if family in ("pSP", "pDP") else None)
    spec = RunSpec(
        data=spec,
        prepare=PrepareOptions(grouping=(grouping,)),
        model=model,
        constraint=constraint,
        interval=INTERVAL,
        solver=solver,
        objective=objective_type(card.default_objective)(),
        budget=Budget(max_seconds=seconds),
        honour=run_honour(None, [solver], family),
    )
    spec.validate()
    return spec


def within(test: dict, kappa: float) -> bool | None:
    """Whether the exact test value is within κ + 2σ (None: no value or no interval)."""
    value, low, high = (test.get(k) for k in ("constraint", "constraint_low", "constraint_high"))
    if value is None or low is None or high is None or not math.isfinite(value):
        return None
    sigma = (high - low) / (2 * Z95)
    return value <= kappa + 2 * sigma


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--data", nargs="+", choices=list(DATA), default=list(DATA))
    parser.add_argument("--solvers", nargs="+", choices=solver_names(), default=solver_names())
    parser.add_argument("--home", type=Path, help="the run store (default: a temporary one)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp())
    store = Store(args.home or scratch / "runs")
    specs, refused = [], []
    for data in args.data:
        for solver in args.solvers:
            try:
                specs.append((data, run_spec(data, solver, args.seconds, scratch)))
            except (UserError, OSError) as error:
                refused.append((data, solver, str(error)))
    print(
        f"{len(specs)} runs of {args.seconds:g} s, {len(refused)} combinations refused; "
        f"store {store.home}",
        file=sys.stderr,
    )
    submit([spec for _, spec in specs], store, workers=2)
    wait(store, [spec.run_id for _, spec in specs])
    report(store, specs, refused)


def report(store: Store, specs: list[tuple[str, RunSpec]], refused: list) -> None:
    header = (
        f"{'data':7} {'solver':18} {'family':15} {'status':10} {'verdict':34} "
        f"{'test value (95 %)':24} {'accuracy':>8} {'majority':>8}"
    )
    print(header)
    degenerate, constrained, held = 0, 0, 0
    for data, spec in specs:
        row = store.run(spec.run_id)
        verdict = run_verdict(store, row)
        test = store.metrics(row.id).get("test", {})
        value, low, high = (
            test.get(k) for k in ("constraint", "constraint_low", "constraint_high")
        )
        shown = "—" if value is None else f"{value:.4f}"
        if low is not None and high is not None:
            shown += f" ({low:.3f}–{high:.3f})"
        degenerate += verdict.label is Label.DEGENERATE
        card = solver_card(spec.solver)
        exact = not family_entry(spec.constraint.family).kappa_scale
        if card.constrained and not card.kappa_free and exact:  # κ bounds its model's value
            constrained += 1
            held += bool(within(test, KAPPA))
        accuracy, majority = test.get("accuracy"), test.get("majority")
        print(
            f"{data:7} {spec.solver:18} {spec.constraint.family:15} {row.status:10} "
            f"{verdict.summary[:34]:34} {shown:24} {_num(accuracy):>8} {_num(majority):>8}"
        )
    for data, solver, reason in refused:
        print(f"{data:7} {solver:18} refused: {reason}")
    total = len(specs)
    print(
        f"\nnot degenerate: {total - degenerate} of {total} "
        f"({(total - degenerate) / max(total, 1):.0%}; goal ≥ {NOT_DEGENERATE_GOAL:.0%})"
    )
    print(
        f"constrained runs within κ + 2σ on test: {held} of {constrained} "
        f"({held / max(constrained, 1):.0%}; goal ≥ {WITHIN_GOAL:.0%})"
    )


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


if __name__ == "__main__":
    main()
