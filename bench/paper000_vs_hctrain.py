"""FairFront's paper-000 solvers (SGD, ALM, SSL-ALM) against the reference package
humancompatible-train 0.4.2 on the same problem, in one run, with ratios measured in that run.

The problem is paper 000's Exp. 1 on the data `python -m engine run --data acs --state CT
--year 2018 --task income --acs-root ../shared/data/acs/pums --attribute RAC1P --grouping binary
--drop-protected --model mlp --hidden 64 32 --constraint group_loss_gap --kappa 0.005` prepares
(the engine's own parser reads that command line here): an MLP 64-32 (ReLU, logit output) on
BCE-with-logits, constrained by −δ ≤ ℓ_white − ℓ_nonwhite ≤ δ (pairs="all": the pairwise
difference of Exp. 1, not eq. 4's "vs_mean"), δ = 0.005, 8 rows per objective batch, 8 rows
per group per constraint batch. Both sides get the same float64 arrays (our Prepared object's
train split), the same architecture in float64, the same initial weights (the ones our solver
draws from its seed), the same hyper-parameters (our paper-000 configs, which hold the paper's
Exp. 1 values) and the same wall-clock budget per run. Iterations are counted for both; the final
parameters are evaluated on the full train and test splits by one function for both.

ALM and SSL-ALM run in two pairings (`FORMS`), each our `augmentation` against the hc-train call
nearest to it:
- "slack" (paper 000, Alg. 2: c + s = 0, s ≥ 0, duals free, reset to 0 at ‖y‖ ≥ M_y) against
  hc-train's `augmentation="quadratic"`, which is neither that nor HPR: its surrogate is
  f + yᵀc + (ρ/2)‖[c]₊‖² (weight y + ρ[c]₊ on ∇c), y ← y + ηc clamped to [0, 100]. Not like for
  like: hc-train has no slack form.
- "hpr" (Hestenes–Powell–Rockafellar: weight max(0, y + ρc) on ∇c, y ← max(0, y + ηc), reset to 0
  at ‖y‖ ≥ M_y) against hc-train's `augmentation="hpr"` (what its ALM runs for is_ineq=True with
  penalty > 0 unless "quadratic" is passed; spec 000 §5 item 1): like for like in the form, with
  three differences of detail: its dual step is the gradient step on L_ρ in y,
  y ← y + (η/ρ)(max(0, y + ρc) − y), which is ours where y + ρc ≥ 0 (for η ≤ ρ, as here) and
  everywhere at η = ρ, but where y + ρc < 0 shrinks y by the factor 1 − η/ρ where ours subtracts
  η|c|; it uses one constraint batch for the dual step, ∇c and the c inside the max (ours: ζ1,
  and an independent ζ2 inside the max, as paper 000's eq. 10); and it clamps y to [0, 100]
  instead of the reset.

    .venv/bin/python bench/paper000_vs_hctrain.py [--seconds 30] [--seeds 0 1 2]
        [--algorithms sgd alm ssl_alm] [--forms slack hpr] [--acs-root ../shared/data/acs/pums]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.cli import build_parser  # noqa: E402
from engine.cli.run_commands import run_spec_from_args  # noqa: E402
from engine.data.prepared import Prepared  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.mlp import init_mlp_params  # noqa: E402
from engine.problem import Problem  # noqa: E402
from engine.runs.frontier import mean_and_spread  # noqa: E402
from engine.solvers import Budget, solve  # noqa: E402
from engine.solvers.paper000.cards_alm import ALMConfig, SSLALMConfig  # noqa: E402
from engine.solvers.paper000.cards_sgd import SGDConfig  # noqa: E402

DELTA = 0.005
HIDDEN = (64, 32)
ALGORITHMS = {
    "sgd": ("SGD", SGDConfig()),
    "alm": ("ALM", ALMConfig()),
    "ssl_alm": ("SSL-ALM", SSLALMConfig()),
}
# our augmentation -> the hc-train 0.4.2 `augmentation` it is paired with, and whether that pair
# is the same method
FORMS = {"slack": ("quadratic", False), "hpr": ("hpr", True)}
IMPLEMENTATIONS = ("FairFront", "hc-train 0.4.2")


@dataclass(frozen=True)
class Pairing:
    """One of our solvers in one form (None: SGD, which has none) and hc-train's counterpart."""

    algorithm: str
    form: str | None = None

    @property
    def config(self) -> SGDConfig | SSLALMConfig:
        config = ALGORITHMS[self.algorithm][1]
        return config if self.form is None else dataclasses.replace(config, augmentation=self.form)

    @property
    def theirs(self) -> str | None:
        """hc-train's augmentation, None for SGD."""
        return None if self.form is None else FORMS[self.form][0]

    @property
    def like_for_like(self) -> bool:
        return self.form is None or FORMS[self.form][1]

    @property
    def name(self) -> str:
        return ALGORITHMS[self.algorithm][0]

    def side(self, implementation: str) -> str:
        """The implementation with its form, e.g. "hc-train 0.4.2 (quadratic)"."""
        form = self.form if implementation == IMPLEMENTATIONS[0] else self.theirs
        return implementation if form is None else f"{implementation} ({form})"


def pairings(algorithms: list[str], forms: list[str]) -> list[Pairing]:
    """SGD once, ALM and SSL-ALM once per form."""
    return [Pairing(a, form) for a in algorithms for form in ([None] if a == "sgd" else forms)]


def engine_argv(acs_root: Path) -> list[str]:
    return [
        "run",
        "--data",
        "acs",
        "--state",
        "CT",
        "--year",
        "2018",
        "--task",
        "income",
        "--acs-root",
        str(acs_root),
        "--attribute",
        "RAC1P",
        "--grouping",
        "binary",
        "--drop-protected",
        "--model",
        "mlp",
        "--hidden",
        *map(str, HIDDEN),
        "--constraint",
        "group_loss_gap",
        "--kappa",
        str(DELTA),
    ]


def build_problem(acs_root: Path) -> Problem:
    """The Problem `python -m engine run …` builds, with the constraint's pairs set to "all"
    (Exp. 1: the pairwise gap ℓ_a − ℓ_b within ±δ)."""
    spec = run_spec_from_args(build_parser().parse_args(engine_argv(acs_root)))
    prepared = load_prepared(spec.data, spec.prepare)
    constraint = dataclasses.replace(spec.constraint, pairs="all")
    return Problem(prepared, spec.model, constraint, interval=spec.interval)


# ---- one evaluation for both implementations ----------------------------------------------
def evaluate(scores: np.ndarray, y: np.ndarray, groups: np.ndarray) -> dict[str, float]:
    """Mean BCE-with-logits, the two group losses and max(|ℓ_0 − ℓ_1| − δ, 0) on a full split."""
    h = torch.as_tensor(scores, dtype=torch.float64)
    loss = F.binary_cross_entropy_with_logits(
        h, torch.as_tensor(y, dtype=torch.float64), reduction="none"
    ).numpy()
    l0, l1 = (float(loss[groups == g].mean()) for g in (0, 1))
    return {
        "loss": float(loss.mean()),
        "l0": l0,
        "l1": l1,
        "violation": max(abs(l0 - l1) - DELTA, 0.0),
    }


def evaluate_splits(score_fn, prepared: Prepared) -> dict[str, dict[str, float]]:
    return {
        s: evaluate(score_fn(s), prepared.split(s).y, prepared.split(s).groups)
        for s in ("train", "test")
    }


def init_seed(seed: int) -> int:
    """The seed our paper-000 solvers draw first from default_rng(seed) for their initial
    weights (engine.solvers.paper000.sgd / alm), so both sides start from the same point."""
    return int(np.random.default_rng(seed).integers(2**31))


# ---- FairFront ------------------------------------------------------------------------------
def run_ours(problem: Problem, pairing: Pairing, seconds: float, seed: int) -> dict:
    wall = time.perf_counter()
    solution = solve(
        problem, pairing.algorithm, pairing.config, Budget(max_seconds=seconds), seed=seed
    )
    wall = time.perf_counter() - wall
    metrics = evaluate_splits(lambda s: problem.scores(solution.params, s), problem.data)
    return {"iterations": solution.iterations, "seconds": solution.seconds, "wall": wall, **metrics}


# ---- humancompatible-train 0.4.2 ------------------------------------------------------------
def cycle(make: callable) -> Iterator[torch.Tensor]:
    """Endless batches from an epoch iterable that is rebuilt when it runs out."""
    while True:
        for batch in make():
            yield torch.as_tensor(batch, dtype=torch.long)


def run_theirs(problem: Problem, pairing: Pairing, seconds: float, seed: int) -> dict:
    from humancompatible.train.dual_optim import ALM, MoreauEnvelope
    from humancompatible.train.fairness.utils import BalancedBatchSampler

    config = pairing.config
    train = problem.data.train
    X = torch.from_numpy(train.X)  # float64, the arrays our solvers use
    y = torch.from_numpy(train.y.astype(np.float64))
    groups = torch.from_numpy(train.groups)
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)

    # the same architecture in float64, loaded with the initial weights our solver starts from
    widths = (X.shape[1], *HIDDEN)
    layers: list[torch.nn.Module] = []
    for a, b in zip(widths[:-1], widths[1:], strict=True):
        layers += [torch.nn.Linear(a, b, dtype=torch.float64), torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers, torch.nn.Linear(widths[-1], 1, dtype=torch.float64))
    start = init_mlp_params(X.shape[1], HIDDEN, init_seed(seed))
    net.load_state_dict({k.removeprefix("layers."): torch.from_numpy(v) for k, v in start.items()})

    # objective batches ξ: a shuffled epoch loader of `batch_size` rows, as torch's DataLoader does
    batch_size = config.batch_size
    objective_batches = cycle(
        lambda: torch.randperm(len(X), generator=generator).split(batch_size)[
            : len(X) // batch_size
        ]
    )
    if pairing.algorithm == "sgd":
        inner = torch.optim.SGD(net.parameters(), lr=config.step)
        primal, dual, constraint_batches = inner, None, None
    else:
        inner = torch.optim.SGD(net.parameters(), lr=config.tau)
        # MoreauEnvelope wraps the primal step with the proximal term μ(x − z), z ← z + β(x − z);
        # with μ = 0 (ALM) the wrapper is a no-op, so plain SGD is the primal optimizer then.
        primal = MoreauEnvelope(inner, mu=config.mu, beta=config.beta) if config.mu else inner
        # is_ineq=True and the augmentation are explicit: the defaults are equality constraints
        # and, with penalty > 0, the HPR augmentation. Duals in float64 (the default float32
        # duals cannot multiply float64 constraints); dual_range left at its (−100, 100), so
        # they are clamped to [0, 100].
        dual = ALM(
            m=2,
            lr=config.eta,
            penalty=config.rho,
            is_ineq=True,
            augmentation=pairing.theirs,
            init_duals=torch.zeros(2, dtype=torch.float64),
        )
        onehot = F.one_hot(groups, 2)
        sampler = BalancedBatchSampler(
            group_onehot=onehot,
            batch_size=2 * config.per_group,
            extend_groups=True,
            generator=generator,
        )
        constraint_batches = cycle(lambda: sampler)

    def constraints(rows: torch.Tensor) -> torch.Tensor:
        """c = (ℓ_0 − ℓ_1 − δ, ℓ_1 − ℓ_0 − δ) ≤ 0 on a batch with `per_group` rows per group."""
        loss = F.binary_cross_entropy_with_logits(
            net(X[rows]).squeeze(-1), y[rows], reduction="none"
        )
        g = groups[rows]
        gap = loss[g == 0].mean() - loss[g == 1].mean()
        return torch.stack([gap - DELTA, -gap - DELTA])

    iterations = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        xi = next(objective_batches)
        inner.zero_grad()  # not primal.zero_grad(): MoreauEnvelope's delegation passes the
        # optimizer twice (set_to_none=<optimizer>), which only works by accident
        objective = F.binary_cross_entropy_with_logits(net(X[xi]).squeeze(-1), y[xi])
        if dual is None:
            objective.backward()
        else:
            dual.forward_update(objective, constraints(next(constraint_batches))).backward()
        primal.step()
        iterations += 1
    elapsed = time.perf_counter() - began

    def scores(split: str) -> np.ndarray:
        with torch.no_grad():
            return net(torch.from_numpy(problem.data.split(split).X)).squeeze(-1).numpy()

    return {
        "iterations": iterations,
        "seconds": elapsed,
        "wall": elapsed,
        **evaluate_splits(scores, problem.data),
    }


# ---- tables ---------------------------------------------------------------------------------
def mean(values) -> float:
    return statistics.fmean(values)


def summary(runs: list[dict]) -> dict[str, float]:
    rates = [r["iterations"] / r["seconds"] for r in runs]
    return {
        "rate": mean(rates),
        "rate_sd": statistics.stdev(rates) if len(rates) > 1 else 0.0,
        "train_loss": mean(r["train"]["loss"] for r in runs),
        "test_loss": mean(r["test"]["loss"] for r in runs),
        "train_viol": mean(r["train"]["violation"] for r in runs),
        "test_viol": mean(r["test"]["violation"] for r in runs),
    }


def print_tables(results: dict[tuple[Pairing, str], list[dict]], pairs: list[Pairing]) -> None:
    print(
        f"\n{'algorithm':<10}{'implementation (form)':<29}{'it/s':>10}{'± sd':>8}"
        f"{'train loss':>12}{'test loss':>11}{'train viol':>12}{'test viol':>11}"
    )
    table = {}
    for pairing in pairs:
        for impl in IMPLEMENTATIONS:
            s = table[pairing, impl] = summary(results[pairing, impl])
            print(
                f"{pairing.name:<10}{pairing.side(impl):<29}{s['rate']:>10,.0f}"
                f"{s['rate_sd']:>8,.0f}{s['train_loss']:>12.4f}{s['test_loss']:>11.4f}"
                f"{s['train_viol']:>12.4f}{s['test_viol']:>11.4f}"
            )
    print(
        "\nours ÷ theirs (iterations/s, target ≥ 2×) and ours − theirs (loss, violation) as the "
        "mean ± standard error over seeds of the per-seed differences, per pairing (ours ↔ "
        "theirs; 'same' says whether the two run the same method; 'not worse' whether no Δ "
        "exceeds two standard errors):"
    )
    print(
        f"{'algorithm':<10}{'forms':<20}{'same':>5}{'it/s ratio':>11}{'≥ 2×':>6}"
        f"{'Δ train loss':>17}{'Δ test loss':>17}{'Δ train viol':>17}{'Δ test viol':>17}"
        f"{'not worse':>11}"
    )
    for pairing in pairs:
        ours, theirs = (table[pairing, impl] for impl in IMPLEMENTATIONS)
        ratio = ours["rate"] / theirs["rate"]
        forms = "-" if pairing.form is None else f"{pairing.form} ↔ {pairing.theirs}"
        deltas = [
            paired_difference(*(results[pairing, impl] for impl in IMPLEMENTATIONS), split, metric)
            for metric in ("loss", "violation")
            for split in ("train", "test")
        ]
        cells = "".join(f"{f'{d:+.4f}±{se:.4f}':>17}" for d, se in deltas)
        not_worse = all(d <= 2 * se for d, se in deltas)
        print(
            f"{pairing.name:<10}{forms:<20}{'yes' if pairing.like_for_like else 'no':>5}"
            f"{ratio:>10.2f}×{'yes' if ratio >= 2 else 'no':>6}{cells}"
            f"{'yes' if not_worse else 'no':>11}"
        )


def paired_difference(
    ours: list[dict], theirs: list[dict], split: str, metric: str
) -> tuple[float, float]:
    """Mean and standard error over seeds of ours − theirs on one split's metric; the runs of
    both lists are in the same seed order."""
    differences = [o[split][metric] - t[split][metric] for o, t in zip(ours, theirs, strict=True)]
    average, se = mean_and_spread(differences, "se")
    return average, se or 0.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_root = Path(__file__).resolve().parents[2] / "shared/data/acs/pums"
    parser.add_argument("--acs-root", type=Path, default=default_root)
    parser.add_argument("--seconds", type=float, default=30.0, help="wall clock per run (30)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="(0 1 2)")
    parser.add_argument(
        "--algorithms",
        nargs="+",
        choices=tuple(ALGORITHMS),
        default=list(ALGORITHMS),
        help="(sgd alm ssl_alm)",
    )
    parser.add_argument(
        "--forms",
        nargs="+",
        choices=tuple(FORMS),
        default=list(FORMS),
        help="our augmentations for ALM and SSL-ALM (slack hpr)",
    )
    args = parser.parse_args()
    if not (args.acs_root / "2018/1-Year/psam_p09.csv").is_file():
        sys.exit(
            f"error: the ACS data is missing: {args.acs_root / '2018/1-Year/psam_p09.csv'} "
            "not found (the shared data folder ../shared/data/acs/pums, or pass --acs-root)"
        )
    try:
        import humancompatible.train  # noqa: F401
    except ImportError:
        sys.exit(
            "error: humancompatible-train is not installed: "
            ".venv/bin/python -m pip install -r requirements-dev.txt"
        )
    torch.set_num_threads(1)  # our driver does this for its runs; theirs run under the same
    pairs = pairings(args.algorithms, args.forms)
    runs = len(pairs) * len(IMPLEMENTATIONS) * len(args.seeds)
    print(
        f"{len(pairs)} pairings × {len(IMPLEMENTATIONS)} implementations × "
        f"{len(args.seeds)} seeds × {args.seconds:g} s = {runs * args.seconds:g} s of training "
        "(plus data preparation and evaluation)"
    )

    problem = build_problem(args.acs_root)
    data = problem.data
    names = " vs ".join(
        f"{g} ({n:,})"
        for g, n in zip(data.group_names, np.bincount(data.train.groups), strict=True)
    )
    print(
        f"problem: {data.dataset_name}; {len(data.train):,} train / {len(data.test):,} test "
        f"rows, {data.train.X.shape[1]} features; groups {names}"
    )
    print(
        f"  MLP {data.train.X.shape[1]}-{'-'.join(map(str, HIDDEN))}-1 (ReLU, logit), float64 "
        "on both sides (same arrays, same initial weights per seed)"
    )
    print(
        f"  constraint group_loss_gap, pairs='all' (paper 000 Exp. 1): "
        f"−δ ≤ ℓ[{data.group_names[0]}] − ℓ[{data.group_names[1]}] ≤ δ, δ = {DELTA}"
    )
    for pairing in pairs:
        theirs = "" if pairing.theirs is None else f"; hc-train augmentation={pairing.theirs!r}"
        print(f"  {pairing.name}: {pairing.config}{theirs}")
    print(
        "  violation = max(|ℓ_0 − ℓ_1| − δ, 0) on the full split; it/s = iterations / the "
        "solver's own seconds (ours: the driver's clock, which pauses for its logging)"
    )

    results: dict[tuple[Pairing, str], list[dict]] = {}
    for pairing in pairs:
        for seed in args.seeds:
            for impl, run in zip(IMPLEMENTATIONS, (run_ours, run_theirs), strict=True):
                out = run(problem, pairing, args.seconds, seed)
                results.setdefault((pairing, impl), []).append(out)
                print(
                    f"  {pairing.name:<8} {pairing.side(impl):<27} seed {seed}: "
                    f"{out['iterations']:>9,} it in {out['seconds']:.1f} s "
                    f"(wall {out['wall']:.1f} s), train loss {out['train']['loss']:.4f}, "
                    f"viol {out['train']['violation']:.4f}",
                    flush=True,
                )
    print_tables(results, pairs)


if __name__ == "__main__":
    main()
