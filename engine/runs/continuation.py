"""Continuation sweeps: each point of a κ sweep starts from a tighter point's model.

A chain goes from tight κ to loose: a tighter κ's model satisfies every looser κ's constraint,
so each point starts inside its feasible set, where switching methods (paper 003, Alg. 2 and
spec 003 §3.2) must start, and improves its objective from there, as a cold start from the fair
w⁰ = 0 does, but from further along; IDCA's stopping rule (f0 no longer falling over `patience`
outer iterations) ends it. The other way, a looser κ's model lies outside the tighter κ's feasible
set: restoring feasibility from it leaves the run on the constraint's boundary at a worse model
(less accurate and less fair on test than its cold twin on Adult), where it stalls
(bench/frontier_speed.py measures the sweep both cold and warm).

The points of one line of the sweep (the runs that differ only in κ: one solver, interval, seed
and setting) are ordered from tight to loose κ and dealt in turn to `chains` chains: each
chain's first point starts cold and every later one from the point before it in its chain, so
`chains` runs of a line go at once. A chain never leaves its line: another interval's model
was fitted to another constraint, and meets this one's κ only by chance. The store starts a run
only once the run it starts from has ended (`Store.queued`), and the worker checks then that
the model it would start from is a feasible tighter one (`worker.warm_start`); when it is not,
the point starts cold and says why.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict

from engine.fairness.families import quantity_name
from engine.runs.reference_key import reference_key
from engine.runs.spec import RunSpec


def continuation_specs(specs: list[RunSpec], chains: int) -> list[RunSpec]:
    """`specs` in their order, each point of a line of a constrained solver that takes a warm
    start (`SolverCard.warm_start`) set to start from its predecessor in its chain; the others
    as they are. `chains` < 1 leaves every spec cold."""
    if chains < 1:
        return list(specs)
    lines: dict[str, list[int]] = defaultdict(list)
    for index, spec in enumerate(specs):
        if spec.constraint is not None and spec.card.warm_start:
            lines[_line_key(spec)].append(index)
    warm = list(specs)
    for members in lines.values():
        ordered = sorted(members, key=lambda i: specs[i].constraint.kappa)
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


def queue_order(specs: list[RunSpec]) -> list[RunSpec]:
    """The order to queue a sweep's runs in, for the queue takes them oldest first among those
    that can start: the runs without a constraint first (the references a frontier is read
    against, drawn before its points), then the chains, each in its own order, the chain of the
    tightest first point first: a cold start at the tightest κ is the slowest run of its line
    (on Adult, κ = 0.01 takes about twice as long as κ = 0.05: bench/app_latency.py), and its
    chain the longest, so it starts soonest. A reference that differs from an earlier one only
    in I goes last: by then that one has finished, and it takes its model instead of training
    (`engine.runs.reference_reuse`), where two workers would otherwise train both at once."""

    def first(chain: list[RunSpec]) -> tuple[bool, float]:
        held = chain[0].constraint
        return held is not None, 0.0 if held is None else held.kappa

    trained: set[str] = set()
    now, later = [], []
    for chain in sorted(chains_of(specs), key=first):
        key = reference_key(chain[0]) if len(chain) == 1 else None
        (later if key in trained else now).append(chain)
        if key is not None:
            trained.add(key)
    return [spec for chain in now + later for spec in chain]


def infeasible_start(source: RunSpec, train_value: float | None, spec: RunSpec) -> str:
    """Why the model of the run of spec `source` and exact training value
    `train_value` of its constrained quantity is no feasible tighter start for `spec`, in
    words ("" when it is one): it must come from the same data, split and model, be held to
    the same family on the same interval at a κ no looser, and meet this run's κ on the
    training data. A continuation sweep's chains ensure all but the last; the last a tight run
    may miss (it holds κ on train only as far as its budget allows), and a start outside the
    feasible set stalls on its boundary at a worse model (paper 003's switching steps assume a
    feasible start, spec 003 §3.2)."""
    if (source.data, source.prepare, source.model) != (spec.data, spec.prepare, spec.model):
        return "was trained on other data, another split or another model"
    if source.family != spec.family:
        return f"was held to {source.family or 'no constraint'}, not {spec.family}"
    if tuple(source.interval) != tuple(spec.interval):
        return "was held on another interval"
    kappa = spec.constraint.kappa
    if source.kappa > kappa:
        return f"was held to a looser κ than this run's κ = {kappa:g}"
    quantity = quantity_name(spec.constraint.family)
    if train_value is None:
        return f"has no exact training {quantity} to tell whether it meets κ = {kappa:g}"
    if train_value > kappa:
        return f"does not meet κ = {kappa:g}: its exact training {quantity} is {train_value:.4g}"
    return ""


def _line_key(spec: RunSpec) -> str:
    """Everything of a spec but its κ and its warm start."""
    fields = spec.to_dict()
    fields.pop("warm_start", None)
    fields["constraint"] = {k: v for k, v in fields["constraint"].items() if k != "kappa"}
    return json.dumps(fields, sort_keys=True, default=str)
