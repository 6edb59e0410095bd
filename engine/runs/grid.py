"""Sweep grids: named settings of a run (axes), each with the values to try, and their Cartesian
product as RunSpecs, one per distinct run id.

The command line (`sweep --grid NAME=V1,V2`) and the pages build their sweeps here, so a point of
one is the same run, with the same id, as the equal point of another or as a single run with
those settings: the store computes it once.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from types import MappingProxyType
from typing import Any

from engine.data.grouping import MODES
from engine.errors import UserError
from engine.models import ACTIVATIONS
from engine.options import config_fields
from engine.runs.spec import RunSpec, with_seed
from engine.solvers.catalogue import solver_card, solver_names
from engine.solvers.honour_rules import honour_refusal

Grid = dict[str, list[Any]]  # axis name → values; the product varies the last axis fastest

OPTION = "option."


@dataclass(frozen=True)
class Axis:
    """One setting a grid can vary. `parse` reads one value from text (a ValueError means the
    text is not of the form `syntax` says); `apply` sets a value on a RunSpec; `show` writes a
    value back as text."""

    name: str
    syntax: str
    parse: Callable[[str], Any]
    apply: Callable[[RunSpec, Any], RunSpec]
    show: Callable[[Any], str] = str


def grid_specs(
    base: RunSpec,
    grid: Mapping[str, Sequence[Any]],
    configs: dict[str, dict] | None = None,
    keep_constraint: bool = False,
) -> list[RunSpec]:
    """Every point of `grid` applied to `base`, validated, in product order, one per run id
    (`grid_points` without the points)."""
    return [spec for _, spec in grid_points(base, grid, configs, keep_constraint)]


def grid_points(
    base: RunSpec,
    grid: Mapping[str, Sequence[Any]],
    configs: dict[str, dict] | None = None,
    keep_constraint: bool = False,
) -> list[tuple[dict[str, Any], RunSpec]]:
    """Every point of `grid` (axis → value) with its RunSpec applied to `base`, validated, in
    product order, one per run id (the first point that gives it).

    A point's solver is set first, with its options from `configs` (default: the base spec's
    for its own solver, the defaults for another), so option axes apply to the point's solver.
    Then, as sweeps always have: a reference solver (its card's `constrained` is False) runs
    without the constraint, so its κ and pairs collapse into one run (unless `keep_constraint`:
    a benchmark judges every solver against the same constraint); a point whose solver cannot
    honour κ (`engine.solvers.honour_rules`) is solved at κ alone, and a grid where no point
    can is refused; a linear model keeps the base's hidden widths and activation, which it
    does not use; and options are written in full, as a single run's are, so equal settings
    give equal run ids."""
    axes = {name: axis(name) for name in grid}
    for name, values in grid.items():
        if not values:
            raise UserError(f"the grid axis {name} has no values")
    configs = configs if configs is not None else {base.solver: base.config}
    _check_options_apply(grid, list(grid.get("solver", [base.solver])))
    varying = [name for name, values in grid.items() if len(values) > 1]
    specs: dict[str, tuple[dict[str, Any], RunSpec]] = {}
    for values in itertools.product(*grid.values()):
        point = dict(zip(grid, values, strict=True))
        try:
            spec = _point_spec(base, point, axes, configs, keep_constraint)
            run_id = spec.run_id
            if run_id not in specs:
                spec.validate()
        except UserError as error:
            if not varying:
                raise
            words = ", ".join(f"{n}={axes[n].show(point[n])}" for n in varying)
            raise UserError(f"the grid point {words}: {error}") from None
        specs.setdefault(run_id, (point, spec))
    if base.honour is not None and not any(spec.honour for _, spec in specs.values()):
        _, first = next(iter(specs.values()))  # no point honours κ: say why for the first
        family = first.constraint.family if first.constraint else None
        raise UserError(str(honour_refusal(first.solver, family)))
    return list(specs.values())


def parse_grid(texts: Sequence[str]) -> Grid:
    """A grid from texts such as "kappa=0.01,0.05" or "model.hidden=64x32,32", in their order."""
    grid: Grid = {}
    for text in texts:
        name, sep, values = text.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UserError(
                f"a grid axis is written NAME=V1,V2, e.g. kappa=0.01,0.05, not '{text}'"
            )
        if name in grid:
            raise UserError(f"the grid axis {name} is given twice; list its values once")
        grid[name] = parse_values(name, values.split(","))
    return grid


def parse_values(name: str, texts: Sequence[str]) -> list[Any]:
    """The values of axis `name` read from their texts, refusing empty ones."""
    chosen = axis(name)
    values = []
    for text in (t.strip() for t in texts):
        if not text:
            raise UserError(
                f"{name} has an empty value; write NAME=V1,V2 with {name} taking {chosen.syntax}"
            )
        try:
            values.append(chosen.parse(text))
        except ValueError:
            raise UserError(f"bad {name} value '{text}': {name} takes {chosen.syntax}") from None
    return values


def axis(name: str) -> Axis:
    """The axis called `name`: one of AXES, or `option.NAME` for a solver option."""
    if name.startswith(OPTION):
        return _option_axis(name.removeprefix(OPTION))
    if name not in AXES:
        raise UserError(
            f"unknown grid axis '{name}'; the axes are {', '.join(AXES)} and "
            f"{OPTION}NAME for a solver option"
        )
    return AXES[name]


def axes_help(width: int = 100) -> str:
    """Each axis with how its values are written (the CLI's help lists them)."""
    rows = [(name, a.syntax) for name, a in AXES.items()]
    rows.append(
        (
            f"{OPTION}NAME",
            "values of the solver option NAME (`python -m engine "
            "solvers`); points whose solver lacks the option leave it out",
        )
    )
    return "\n".join(
        textwrap.fill(syntax, width, initial_indent=f"  {name:<20}", subsequent_indent=" " * 22)
        for name, syntax in rows
    )


def _point_spec(
    base: RunSpec,
    point: dict[str, Any],
    axes: dict[str, Axis],
    configs: dict[str, dict],
    keep_constraint: bool,
) -> RunSpec:
    solver = point.get("solver", base.solver)
    spec = replace(base, solver=solver, config=configs.get(solver, {}))
    for name, value in point.items():
        spec = axes[name].apply(spec, value)
    card = spec.card
    model = spec.model
    if model.kind == "linear":
        model = replace(model, hidden=base.model.hidden, activation=base.model.activation)
    constraint = spec.constraint if card.constrained or keep_constraint else None
    honours = honour_refusal(spec.solver, constraint.family if constraint else None) is None
    filled = replace(
        spec, model=model, constraint=constraint, honour=spec.honour if honours else None
    )
    return filled.with_options_filled()


def _check_options_apply(grid: Mapping[str, Sequence[Any]], solvers: list[str]) -> None:
    """Refuse an option axis that no solver of the grid has: it would change no run."""
    for name in grid:
        option = name.removeprefix(OPTION)
        if name.startswith(OPTION) and not any(option in _options(s) for s in solvers):
            owners = [s for s in solver_names() if option in _options(s)]
            raise UserError(
                f"no solver of this grid ({', '.join(solvers)}) has the option "
                f"{option}; it is an option of {', '.join(owners)}"
            )


@cache
def _options(solver: str) -> frozenset[str]:
    return frozenset(f.name for f in config_fields(solver_card(solver).Config))


def _option_axis(option: str) -> Axis:
    if not any(option in _options(s) for s in solver_names()):
        known = sorted(set().union(*(_options(s) for s in solver_names())))
        raise UserError(
            f"unknown solver option '{option}'; the solvers' options are {', '.join(known)}"
        )

    def apply(spec: RunSpec, text: str) -> RunSpec:
        if option not in _options(spec.solver):
            return spec
        return replace(spec, config={**spec.config, option: text})

    # the text is typed by the point's solver (config_from_dict): one name can be a number for
    # one solver and text for another
    return Axis(OPTION + option, "a value of that solver option", str.strip, apply)


# ---- the axes ------------------------------------------------------------------------------


def _kappa(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(text)
    return value


def _interval(text: str) -> tuple[float, float]:
    alpha, beta = (float(x) for x in text.split(":"))
    return alpha, beta


def _seed(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def _hidden(text: str) -> tuple[int, ...]:
    widths = text.replace("-", "x").split("x")
    if not all(w.strip().isdigit() for w in widths):
        raise ValueError(text)
    return tuple(int(w) for w in widths)


def _boolean(text: str) -> bool:
    words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
    if text.lower() not in words:
        raise ValueError(text)
    return words[text.lower()]


def _grouping(text: str) -> str:
    """A grouping mode, or top-N for the N most frequent values."""
    if text in MODES or (text.startswith("top-") and text[4:].isdigit() and int(text[4:]) >= 1):
        return text
    raise ValueError(text)


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(text)
        return text

    return parse


def _with_constraint(spec: RunSpec, **changes: Any) -> RunSpec:
    """`spec` with its constraint changed; a run without a constraint has nothing to change."""
    if spec.constraint is None:
        return spec
    return replace(spec, constraint=replace(spec.constraint, **changes))


def _with_model(spec: RunSpec, **changes: Any) -> RunSpec:
    return replace(spec, model=replace(spec.model, **changes))


def _set_interval(spec: RunSpec, interval: tuple[float, float]) -> RunSpec:
    """I of the run and of its constraint, as a single run's flags set both (pSP and pDP are
    defined on I; for the other families I sets the pSP that every run reports)."""
    return _with_constraint(replace(spec, interval=tuple(interval)), interval=tuple(interval))


def _set_grouping(spec: RunSpec, text: str) -> RunSpec:
    """Every protected attribute grouped by mode `text` (top-N: top-k with k = N)."""
    mode, k = (text, None) if text in MODES else ("top-k", int(text[4:]))
    grouping = tuple(
        replace(g, mode=mode, k=g.k if k is None else k) for g in spec.prepare.grouping
    )
    return replace(spec, prepare=replace(spec.prepare, grouping=grouping))


def _set_solver(spec: RunSpec, solver: str) -> RunSpec:
    """Another solver starts from its default options."""
    return spec if solver == spec.solver else replace(spec, solver=solver, config={})


AXES: Mapping[str, Axis] = MappingProxyType(
    {
        a.name: a
        for a in (
            Axis(
                "kappa",
                "numbers ≥ 0: κ, or δ for the group-loss gap; a solver without a "
                "constraint ignores it",
                _kappa,
                lambda s, v: _with_constraint(s, kappa=v),
            ),
            Axis(
                "interval",
                "ALPHA:BETA, e.g. 0.05:0.3: I = [α, β) of the run and its constraint",
                _interval,
                _set_interval,
                lambda v: f"{v[0]:g}:{v[1]:g}",
            ),
            Axis(
                "solver",
                "solver names (`python -m engine solvers`)",
                lambda text: solver_card(text).name,
                _set_solver,
            ),
            Axis("seed", "whole numbers ≥ 0: the split and the solver's seed", _seed, with_seed),
            Axis(
                "solver.seed",
                "whole numbers ≥ 0: the solver's seed alone, on the same split (paper "
                "000's repeated runs)",
                _seed,
                lambda s, v: replace(s, seed=v),
            ),
            Axis(
                "grouping",
                f"{', '.join(MODES)} or top-N (e.g. top-2): how the protected "
                "attribute's values become groups",
                _grouping,
                _set_grouping,
            ),
            Axis(
                "model.kind",
                "linear or mlp",
                _choice("linear", "mlp"),
                lambda s, v: _with_model(s, kind=v),
            ),
            Axis(
                "model.hidden",
                "an MLP's widths, first to last, e.g. 64x32 or 64-32",
                _hidden,
                lambda s, v: _with_model(s, hidden=tuple(v)),
                lambda v: "x".join(map(str, v)),
            ),
            Axis(
                "model.activation",
                " or ".join(ACTIVATIONS),
                _choice(*ACTIVATIONS),
                lambda s, v: _with_model(s, activation=v),
            ),
            Axis(
                "model.cross_terms",
                "true or false: group cross-terms",
                _boolean,
                lambda s, v: _with_model(s, cross_terms=v),
            ),
            Axis(
                "constraint.pairs",
                "all, vs_rest or vs_mean: which groups the constraint compares",
                _choice("all", "vs_rest", "vs_mean"),
                lambda s, v: _with_constraint(s, pairs=v),
            ),
        )
    }
)
