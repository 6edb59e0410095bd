"""Exact Wasserstein-1 distance between groups' score distributions.

For distributions on the real line, W1(P, Q) = integral over p in (0, 1) of
|F_P^{-1}(p) - F_Q^{-1}(p)|, the L1 distance between the quantile functions, which equals the
L1 distance between the CDFs, integral |F_P(t) - F_Q(t)| dt. For empirical distributions both
CDFs are step functions that only change at pooled scores, so the integral is a finite sum over
the gaps between consecutive distinct pooled scores: no histogram, no binning.

Unlike paper 000's "Wd" (a squared W2 between 50-bin histograms of sigmoid scores, see its
released code), this is on the raw score scale; pass sigmoid(scores) for the probability scale.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from engine.fairness.table import GroupTable


def wasserstein_pairs(scores: ArrayLike, groups: ArrayLike) -> np.ndarray:
    """(G, G) exact W1 distance between the score distributions of every two groups."""
    table = GroupTable.build(scores, groups)
    cdf = table.group_cdf[:, :-1]  # F_k on [values[j], values[j+1])
    widths = np.diff(table.values)
    n_groups = table.n_groups
    out = np.zeros((n_groups, n_groups))
    for k in range(n_groups):
        for k2 in range(k + 1, n_groups):
            out[k, k2] = out[k2, k] = float(np.sum(np.abs(cdf[k] - cdf[k2]) * widths))
    return out


def wasserstein_gap(scores: ArrayLike, groups: ArrayLike) -> float:
    """Largest W1 distance between two groups' score distributions."""
    return float(wasserstein_pairs(scores, groups).max())
