"""How precisely one split can measure a constraint family's exact value: the standard error σ
of that value on the split's rows, for a model whose groups do not differ at all.

Every family below compares shares of groups: pSP and pDP the share of each group scored above
a shared threshold, clipped to I and divided by its width (paper 003, eq. 62), DP the share
predicted positive, EOpp and EO the same within the positive (and negative) labels. A share p̂
of n rows drawn independently has variance p(1 − p)/n, so the difference of two independent
groups' shares has the standard error of a two-proportion difference,

    σ(p) = √(p(1 − p) · (1/n_a + 1/n_b))

(e.g. Agresti, *Categorical Data Analysis*, §3.1.2, or any text's two-sample test of
proportions). Which p, which groups:
- pSP and pDP: at a threshold where the groups' rank is p ∈ I, each clipped rank moves as its
  share above the threshold, divided by β − α; σ is σ(p)/(β − α) at the p ∈ [α, β] nearest ½,
  where p(1 − p) is largest. pSP is the largest such difference over thresholds, so for groups that
  do not differ its value sits above zero: on Adult's validation sizes (2,700 and 5,400 rows,
  I = [5 %, 30 %)) it averages 1.3 σ and exceeds 2 σ one time in ten (simulated). Below about
  2 σ the split cannot tell a model that meets κ from one that does not.
- DP: σ(p) with p(1 − p) at its largest, ¼ (the model's positive rate is not known in advance,
  and ¼ errs on the side of noise).
- EOpp: the same within the positive labels; EO: the larger of the positive and negative
  labels' (its value is the larger of the two gaps).
Among several groups the gap of largest σ is that of the two smallest (the rows are the split's
groups, or its (group, label) cells for EOpp and EO), and a family's value is its largest gap.

The other families (group losses, the hinge excess, AUC gaps) are not differences of shares:
no σ is given for them (None), and a search that uses σ falls back to the exact values alone.
"""

from __future__ import annotations

import math

import numpy as np

from engine.fairness.constraint_spec import ConstraintSpec

PROPORTION_FAMILIES = ("pSP", "pDP", "DP", "EOpp", "EO")


def proportion_gap_se(p: float, n_a: int, n_b: int) -> float:
    """σ(p): the standard error of the difference of two independent shares, each of rows
    with probability p, from n_a and n_b rows."""
    return math.sqrt(p * (1.0 - p) * (1.0 / n_a + 1.0 / n_b))


def value_noise(spec: ConstraintSpec, groups: np.ndarray, y: np.ndarray | None) -> float | None:
    """The standard error σ of the exact value of `spec`'s family on a split with these group
    ids and 0/1 labels (None for a family that is no difference of shares, or a split with
    fewer than two groups in a cell that matters)."""
    family = spec.family
    if family in ("pSP", "pDP"):
        alpha, beta = spec.interval if spec.interval is not None else (0.0, 1.0)
        widest = min(max(0.5, alpha), beta)  # p(1 − p) is largest at the p ∈ I nearest ½
        se = _smallest_pair_se(groups, widest)
        return None if se is None else se / (beta - alpha)
    if family == "DP":
        return _smallest_pair_se(groups, 0.5)
    if family in ("EOpp", "EO") and y is not None:
        labels = (1,) if family == "EOpp" else (1, 0)
        cells = [_smallest_pair_se(groups[y == label], 0.5) for label in labels]
        return None if None in cells else max(cells)
    return None


def _smallest_pair_se(groups: np.ndarray, p: float) -> float | None:
    """σ(p) of the two smallest groups among `groups` (None with fewer than two)."""
    counts = np.bincount(groups) if groups.size else np.zeros(0, dtype=np.int64)
    smallest = np.sort(counts[counts > 0])[:2]
    if len(smallest) < 2:
        return None
    return proportion_gap_se(p, int(smallest[0]), int(smallest[1]))
