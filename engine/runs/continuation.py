"""Continuation sweeps: each point of a κ or I sweep starts from a neighbouring point's model.

A chain goes from tight κ to loose: a tighter κ's model satisfies every looser κ's constraint,
so each point starts inside its feasible set, where switching methods (paper 003, Alg. 2 and
spec 003 §3.2) must start, and improves its objective from there, as a cold start from the fair
w⁰ = 0 does, but from further along; IDCA's stopping rule (f0 no longer falling over `patience`
outer iterations) ends it. The other way, a looser κ's model lies outside the tighter κ's feasible
set: restoring feasibility from it leaves the run on the constraint's boundary at a worse model
(less accurate and less fair on test than its cold twin on Adult), where it stalls
(bench/frontier_speed.py measures the sweep both cold and warm).

The points of one line of the sweep (the runs that differ only in κ and I) are ordered from
tight to loose κ within each interval, intervals in order, and dealt in turn to `chains` chains:
each chain's first point starts cold and every later one from the point before it in its chain,
so `chains` runs of a line go at once. The store starts a run only once the run it starts from
has ended (`Store.queued`); a point whose neighbour ended without a model starts cold and says so.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict

from engine.runs.spec import RunSpec
from engine.solvers.catalogue import solver_card


def continuation_specs(specs: list[RunSpec], chains: int) -> list[RunSpec]:
    """`specs` in their order, each point of a line of a constrained solver that takes a warm
    start (`SolverCard.warm_start`) set to start from its predecessor in its chain; the others
    as they are. `chains` < 1 leaves every spec cold."""
    if chains < 1:
        return list(specs)
    lines: dict[str, list[int]] = defaultdict(list)
    for index, spec in enumerate(specs):
        if spec.constraint is not None and solver_card(spec.solver).warm_start:
            lines[_line_key(spec)].append(index)
    warm = list(specs)
    for members in lines.values():
        ordered = sorted(members, key=lambda i: (specs[i].interval, specs[i].constraint.kappa))
        for chain in range(min(chains, len(ordered))):
            previous: RunSpec | None = None
            for index in ordered[chain::chains]:
                start = None if previous is None else previous.run_id
                warm[index] = dataclasses.replace(specs[index], warm_start=start)
                previous = warm[index]
    return warm


def chains_of(specs: list[RunSpec]) -> list[list[RunSpec]]:
    """The specs grouped into chains, each in the order its runs must go (a run after the run
    it starts from); a spec that neither starts from nor leads to another is a chain alone."""
    by_id = {spec.run_id: spec for spec in specs}
    followers = {s.warm_start: s for s in specs if s.warm_start in by_id}
    heads = [s for s in specs if s.warm_start not in by_id]
    chains = []
    for head in heads:
        chain = [head]
        while chain[-1].run_id in followers:
            chain.append(followers[chain[-1].run_id])
        chains.append(chain)
    return chains


def _line_key(spec: RunSpec) -> str:
    """Everything of a spec but its κ, its interval and its warm start."""
    fields = spec.to_dict()
    fields.pop("interval")
    fields.pop("warm_start", None)
    fields["constraint"] = {k: v for k, v in fields["constraint"].items()
                            if k not in ("kappa", "interval")}  # fmt: skip
    return json.dumps(fields, sort_keys=True, default=str)
