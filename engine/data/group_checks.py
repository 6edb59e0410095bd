"""Whether each group is large enough for a rank-band constraint, checked before a run (no torch).

pSP (paper 003, model (15)) holds each group's rank in a band of width κ(β − α) around every
grid point p; ranks of a group of n_k training rows move in steps of 1/n_k, so binding refuses a
band that holds less than one sample of some group (`check_rank_band`, spec 003 §6.1.5). With
the "inside" grid and κ = 1 the constraint has no rows at all and nothing is refused. pDP only
warns about thin bands, so it is never refused here. This module states that rule once: the
binding raises the sentence `rank_band_problem` writes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from engine.data.grouping import OTHER

REFUSING_FAMILIES = frozenset({"pSP"})  # the families whose binding refuses a thin band


def rank_band_problems(
    counts: Mapping[str, int],
    family: str,
    kappa: float,
    interval: tuple[float, float],
    *,
    sizes: Mapping[str, int] | None = None,
    grid: str = "inside",
) -> list[str]:
    """One sentence per group whose training rows `counts[name]` the rank band cannot hold.

    `sizes` are the groups' rows in the whole data set (what the minimum group size compares);
    with them the sentence names the minimum group size that would merge the group. Empty
    exactly when binding `family` with κ, I = (α, β) and `grid` to these groups succeeds.
    """
    alpha, beta = interval
    if family not in REFUSING_FAMILIES or _vacuous(kappa, alpha, beta, grid):
        return []
    band = kappa * (beta - alpha)
    return [
        rank_band_problem(name, n, band, len(counts), (sizes or {}).get(name))
        for name, n in counts.items()
        if n > 0 and band * n < 1.0  # a group without training rows is refused at preparation
    ]


def rank_band_problem(
    name: str, n: int, band: float, n_groups: int, size: int | None = None
) -> str:
    """The sentence for a group of `n` > 0 training rows (`size` in the whole data set) of which
    the rank band κ(β − α) = `band` holds less than one, with the changes that fix it."""
    fixes = ["binary grouping"] if n_groups > 2 else []
    if name != OTHER:
        above = str(size) if size is not None else "its row count"
        fixes.append(f"a minimum group size above {above} to merge it into '{OTHER}'")
    fixes.append(f"a band of at least {_at_least(1 / n):g} (a larger κ or a wider interval I)")
    remedy = ", ".join(fixes[:-1]) + (" or " if len(fixes) > 1 else "") + fixes[-1]
    return (
        f"The rank band κ(β − α) = {band:.4g} holds {band * n:.2f} samples of group {name!r} "
        f"({n} training rows), but it must hold at least one: use {remedy}."
    )


def _vacuous(kappa: float, alpha: float, beta: float, grid: str) -> bool:
    """κ = 1 on the inside grid leaves no grid point (engine.fairness.constraint_spec.psp_grid)."""
    return grid == "inside" and beta - kappa * (beta - alpha) <= alpha


def _at_least(value: float) -> float:
    """`value` rounded up to four decimals, strictly above it when it is already round."""
    return math.floor(value * 10_000 + 1) / 10_000
