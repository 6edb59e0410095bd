"""IDCA's frozen part, compiled (paper 003, eq. 32): f⁻ of every pSP row at (w, θ) and one
subgradient of it, for the ramp surrogate on a linear model (Example D.3), in one pass over the
rows that also buckets them for the steps that follow (`engine.solvers.paper003.idca_kernel`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from engine.kernels import bucket_means, csr_matvec
from engine.solvers.paper003.idca_kernel import (
    CHUNKS,
    RampPSPData,
    StepsWorkspace,
    add_chunks,
    bucket_bounds,
    ramp_kinks,
    score_pass,
)


@dataclass(frozen=True)
class MinusLinearization:
    """f⁻ of every row at (w, θ) and one subgradient in w and in θ (eq. 32), and the scores."""

    value: np.ndarray  # (m,)
    d_w: np.ndarray  # (m, d)
    d_theta: np.ndarray  # (m, |Î|)
    scores: np.ndarray  # (n,)


def ramp_psp_minus_linearization(
    problem: RampPSPData, w: np.ndarray, theta: np.ndarray, workspace: StepsWorkspace
) -> MinusLinearization:
    """What IDCA freezes at each outer iteration, in one pass over the rows, which also buckets
    the rows at (w, θ) in `workspace`: where the subproblem's steps start."""
    value, d_w, d_theta = _minus_linearization(
        problem.indptr,
        problem.indices,
        problem.data,
        problem.valued,
        problem.width,
        problem.block,
        *problem.expand,
        *problem.expand_t,
        problem.codes,
        problem.group_sizes,
        problem.temperature,
        problem.grid,
        problem.band,
        w,
        theta,
        workspace.scores,
        workspace.bucket,
        workspace.bucket_rows,
    )
    return MinusLinearization(value, d_w, d_theta, workspace.scores.copy())


@njit(cache=True, nogil=True)
def _minus_linearization(
    indptr,
    indices,
    data,
    valued,
    width,
    block,
    e_ptr,
    e_idx,
    e_val,
    et_ptr,
    et_idx,
    et_val,
    codes,
    group_sizes,
    tau,
    grid,
    band,
    w,
    theta,
    h,
    bucket,
    bucket_rows,
):
    """Example D.3: lower f⁻ = mean σ⁺ − p, upper f⁻ = mean σ⁻ + p + κ(β − α), whose
    subgradients are the mean of x̃_i (and −1 for θ_p) over the group's samples above the part's
    kink, /τ. Samples are bucketed among the sorted kinks and their rows summed per bucket, so
    every row's sum is a suffix sum over buckets (spec 003 §6.2.4, without an n × m matrix).
    The bucketing pass is the steps' own (`score_pass`), into their workspace (h, bucket,
    bucket_rows), which it leaves at (w, θ)."""
    n_grid, n_groups, n = theta.shape[0], group_sizes.shape[0], codes.shape[0]
    n_cuts, size = 2 * n_grid, e_ptr.shape[0] - 1
    n_slots = n_groups * (n_cuts + 1)
    cuts = np.empty(n_cuts)
    order, sorted_cuts = ramp_kinks(theta, tau, cuts)
    position = np.empty(n_cuts, dtype=np.int64)
    position[order] = np.arange(n_cuts)
    u = np.empty(size)
    csr_matvec(e_ptr, e_idx, e_val, w, u)
    starts = np.linspace(0, n, CHUNKS + 1).astype(np.int64)
    slots = codes.astype(np.uint32) * np.uint32(n_cuts + 1)
    chunk_sums = np.empty((CHUNKS, n_slots))
    chunk_counts = np.empty((CHUNKS, n_slots))
    bounds = bucket_bounds(n_cuts)
    bounds[1:-1] = sorted_cuts
    bucket_rows[:] = 0.0
    score_pass(
        indptr,
        indices,
        data,
        valued,
        width,
        block,
        codes,
        slots,
        u,
        starts,
        True,
        bounds,
        sorted_cuts,
        h,
        bucket,
        bucket_rows,
        chunk_sums,
        chunk_counts,
    )
    sums = np.empty((n_groups, n_cuts + 1))
    counts = np.empty((n_groups, n_cuts + 1))
    add_chunks(chunk_sums.reshape((CHUNKS, n_groups, n_cuts + 1)), sums)
    add_chunks(chunk_counts.reshape((CHUNKS, n_groups, n_cuts + 1)), counts)
    rows = np.empty((n_groups, n_cuts + 1, size))  # Σ of block rows per (group, bucket)
    add_chunks(bucket_rows, rows)
    means = np.empty((n_groups, n_cuts))
    above = bucket_means(sums, counts, sorted_cuts, order, means)
    for j in range(n_cuts, 0, -1):  # rows[:, b] becomes the sum over buckets ≥ b
        rows[:, j - 1] += rows[:, j]
    m = n_grid * n_groups * 2
    value = np.empty(m)
    d_w = np.empty((m, w.shape[0]))
    d_theta = np.zeros((m, n_grid))
    for r in range(m):
        p, rest = divmod(r, 2 * n_groups)
        k, side = divmod(rest, 2)
        cut = p if side == 0 else n_grid + p  # lower rows: σ⁺; upper rows: σ⁻
        j = position[cut]
        slope = 1.0 / (tau * group_sizes[k])
        mean = means[k, cut] / tau
        value[r] = mean - grid[p] if side == 0 else mean + grid[p] + band
        csr_matvec(et_ptr, et_idx, et_val, rows[k, j + 1] * slope, d_w[r])
        d_theta[r, p] = -above[k, j] * slope
    return value, d_w, d_theta
