"""Compiled switching-subgradient steps (paper 003, Alg. 2) on the IDCA subproblem (31) for the
common case: pSP model (15) with the ramp surrogate and a linear model on a CSR design.

The generic step in `idca.py` spends most of its time on a dozen array operations and their
Python dispatch around the two passes over the data a step really needs. Here a run of steps is
one call: each step is one pass over the rows computing h = X̃·v while it buckets the scores among
the ramp cuts (the group means of both ramp parts follow from the buckets), then one pass for the
chosen direction: X̃ᵀ·∇f0 on an objective step, or the sum of x̃_i over the active band of one
group on a constraint step. Both passes run on CHUNKS fixed row ranges at once, on as many
threads as `engine.threads` allows, each range adding into its own sums, which are then added
in range order: the steps are the same on any number of threads. Tests check them against the
generic step iterate by iterate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from engine.design import BlockForm
from engine.fairness.constraints import PSPConstraint
from engine.kernels import bucket_means, bucket_of, csr_matvec
from engine.solvers.switching import TIE_TOLERANCE, TINY_NORM_SQUARED

CHUNKS = 4  # row ranges the passes of a step split into: enough for 4 threads, fixed for all
NEAR_BUCKETS = 8  # buckets a score pass walks from a row's last before searching
LOG_BLOCK = 64  # rows whose factors 1 + e_i ∈ (1, 2] the loss multiplies before one ln: ≤ 2⁶⁴


@dataclass(frozen=True)
class RampPSPData:
    """What the compiled steps read: the design in block form (`engine.design.BlockForm`), ζ,
    the constraint's group codes and sizes, its grid Î and band κ(β − α), and the ramp width τ."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    valued: np.uint64  # entries at the start of every row whose values may differ from 1
    width: np.uint64  # columns of the block rows
    block: np.ndarray
    expand: tuple[np.ndarray, np.ndarray, np.ndarray]  # CSR of the block-vector map
    expand_t: tuple[np.ndarray, np.ndarray, np.ndarray]  # and of its transpose
    zeta: np.ndarray
    codes: np.ndarray
    group_sizes: np.ndarray
    group_rows: np.ndarray  # the rows of group 0, then of group 1, ..., each in row order
    group_starts: np.ndarray  # where each group's rows start in `group_rows`, and the end
    temperature: float
    grid: np.ndarray  # the rank levels p of Î
    band: float  # κ(β − α)

    @classmethod
    def build(cls, form: BlockForm, zeta: np.ndarray, bound: PSPConstraint) -> RampPSPData:
        # Unsigned positions: numba checks every signed index for wrap-around (x[-1]), which
        # in the per-non-zero loops costs as much as the arithmetic.
        codes = bound.data.codes
        sizes = np.bincount(codes)
        indptr, indices, data = _unsigned_csr(form.rows)
        return cls(
            indptr,
            indices,
            data,
            valued=_valued_prefix(indptr, data),
            width=np.uint64(form.rows.shape[1]),
            block=form.block.astype(_narrowest_unsigned(form.block.max(initial=0))),
            expand=_unsigned_csr(form.expand),
            expand_t=_unsigned_csr(form.expand.T),
            zeta=np.ascontiguousarray(zeta, dtype=np.float64),
            codes=codes.astype(np.int64),
            group_sizes=sizes.astype(np.float64),
            group_rows=np.argsort(codes, kind="stable").astype(np.uint64),
            group_starts=np.concatenate([[0], np.cumsum(sizes)]).astype(np.uint64),
            temperature=float(bound.spec.temperature),
            grid=np.asarray(bound.grid, dtype=np.float64),
            band=float(bound.band),
        )


def _unsigned_csr(matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR arrays with unsigned positions; column indices in 32 bits (less to read per
    non-zero) when they fit; float32 values kept as they are (half the bytes to read; the
    loops add in float64)."""
    csr = sp.csr_array(matrix)
    index_type = np.uint32 if csr.shape[1] < 2**32 else np.uint64
    value_type = np.float32 if csr.dtype == np.float32 else np.float64
    return csr.indptr.astype(np.uint64), csr.indices.astype(index_type), csr.data.astype(value_type)


def _narrowest_unsigned(largest: int) -> type:
    """The narrowest unsigned integer type that holds 0..`largest`: a per-row array the steps
    read on every pass over the rows costs fewer bytes to read."""
    return next(
        t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if largest <= np.iinfo(t).max
    )


def _valued_prefix(indptr: np.ndarray, data: np.ndarray) -> np.uint64:
    """How many entries at the start of each row hold all its values other than 1: one-hot
    entries are exactly 1 and the encoder puts the numeric features first, so a row's score
    reads the values of its first few entries only (the ones column and the numbers)."""
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr).astype(np.int64))
    place = np.arange(len(data)) - indptr[rows].astype(np.int64)  # each entry's place in its row
    return np.uint64(place[data != 1].max(initial=-1) + 1)


@dataclass(frozen=True)
class StepsWorkspace:
    """What the compiled steps keep per row between calls, each row's score and bucket among
    the ramp cuts, and where the linearisation sums the block rows per (chunk, group, bucket)."""

    scores: np.ndarray
    bucket: np.ndarray
    bucket_rows: np.ndarray

    @classmethod
    def of(cls, problem: RampPSPData) -> StepsWorkspace:
        n, n_groups = len(problem.zeta), len(problem.group_sizes)
        size, n_cuts = len(problem.expand[0]) - 1, 2 * len(problem.grid)
        return cls(
            np.empty(n),
            np.zeros(n, dtype=np.uint64),
            np.zeros((CHUNKS, n_groups, n_cuts + 1, size)),
        )


@dataclass
class StepsResult:
    """The last of the steps taken: `branch` 1 objective / 0 constraint, its worst subproblem
    row value g_i(v) and step scale; `objective` is the latest g0 computed. `objective_steps`
    of the `steps` were objective steps (for the oracle counts)."""

    steps: int
    stationary: bool
    objective: float
    best_objective: float
    violation: float
    scale: float
    branch: int
    objective_steps: int


def ramp_psp_steps(
    problem: RampPSPData,
    v: np.ndarray,
    theta: np.ndarray,
    center: tuple[np.ndarray, np.ndarray],
    linearization: tuple[np.ndarray, np.ndarray, np.ndarray],
    best: tuple[float, np.ndarray, np.ndarray],
    objective: float,
    settings: tuple[float, float, float],
    steps: int,
    workspace: StepsWorkspace,
) -> StepsResult:
    """Up to `steps` switching steps on subproblem (31) centred at (w^k, θ^k) = `center`, with
    f⁻ frozen as (value, ∂_w, ∂_θ) = `linearization`. `v`, `theta` and the best iterate's arrays
    are updated in place; `settings` = (ε, μ, longest move). Stops early at a zero direction.
    `workspace` carries the rows' buckets from the linearisation or the last call."""
    epsilon, mu, max_step = settings
    out = _steps(
        problem.indptr,
        problem.indices,
        problem.data,
        problem.valued,
        problem.width,
        problem.block,
        *problem.expand,
        *problem.expand_t,
        problem.zeta,
        problem.codes,
        problem.group_sizes,
        problem.group_rows,
        problem.group_starts,
        problem.temperature,
        v,
        theta,
        center[0],
        center[1],
        *linearization,
        best[1],
        best[2],
        best[0],
        objective,
        epsilon,
        mu,
        max_step,
        steps,
        workspace.scores,
        workspace.bucket,
        workspace.bucket_rows,
    )
    done, stationary, objective, best_objective, violation, scale, branch, objective_steps = out
    return StepsResult(
        done, bool(stationary), objective, best_objective, violation, scale, branch, objective_steps
    )


@njit(cache=True, nogil=True, inline="always")
def _row_score(indptr, indices, data, valued, u, i, offset):
    """⟨row i, u_b⟩ for the block vector u_b starting at `offset`; past the row's first `valued`
    entries every value is 1, so those add u alone (the same sums, without reading values)."""
    start, end = indptr[i], indptr[i + 1]
    split = min(start + valued, end)
    acc = 0.0
    for q in range(start, split):
        acc += data[q] * u[offset + indices[q]]
    for q in range(split, end):
        acc += u[offset + indices[q]]
    return acc


@njit(cache=True, nogil=True, inline="always")
def _add_row(indptr, indices, data, valued, out, i, offset, weight):
    """out[offset:] += weight · row i, reading the values of its first `valued` entries only
    (as `_row_score`)."""
    start, end = indptr[i], indptr[i + 1]
    split = min(start + valued, end)
    for q in range(start, split):
        out[offset + indices[q]] += weight * data[q]
    for q in range(split, end):
        out[offset + indices[q]] += weight


@njit(cache=True, nogil=True, inline="always")
def ramp_kinks(theta, tau, cuts):
    """Fill `cuts` with the kinks θ_p − τ/2 of σ⁺ then θ_p + τ/2 of σ⁻; their sorting order and
    the sorted kinks."""
    n_grid = theta.shape[0]
    cuts[:n_grid] = theta - 0.5 * tau
    cuts[n_grid:] = theta + 0.5 * tau
    order = np.argsort(cuts)
    return order, cuts[order]


@njit(cache=True, nogil=True, inline="always")
def bucket_bounds(n_cuts):
    """−∞, room for the sorted cuts, +∞: bucket b is (bounds[b], bounds[b + 1]]."""
    bounds = np.empty(n_cuts + 2)
    bounds[0], bounds[-1] = -np.inf, np.inf
    return bounds


@njit(cache=True, nogil=True)
def _steps(
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
    zeta,
    codes,
    group_sizes,
    group_rows,
    group_starts,
    tau,
    v,
    theta,
    center_w,
    center_theta,
    minus,
    minus_dw,
    minus_dtheta,
    best_v,
    best_theta,
    best_objective,
    objective,
    epsilon,
    mu,
    max_step,
    steps,
    h,
    bucket,
    bucket_rows,
):
    n, d = zeta.shape[0], v.shape[0]
    n_grid, n_groups, m = theta.shape[0], group_sizes.shape[0], minus.shape[0]
    size, n_cuts = e_ptr.shape[0] - 1, 2 * n_grid
    n_slots = n_groups * (n_cuts + 1)
    starts = np.linspace(0, n, CHUNKS + 1).astype(np.int64)
    u = np.empty(size)  # block vectors, u_b = u[b·width : (b + 1)·width]
    block_grad = np.empty(size)
    chunk_grad = np.empty((CHUNKS, size))
    chunk_loss = np.empty(CHUNKS)
    # bucket[i]: the number of cuts below h_i, kept by the score passes (a row whose score
    # stays between the same cuts is not searched again)
    cuts = np.empty(n_cuts)
    bounds = bucket_bounds(n_cuts)
    slots = codes.astype(np.uint32) * np.uint32(n_cuts + 1)  # sample i's (group, 0) slot
    chunk_sums = np.empty((CHUNKS, n_slots))
    chunk_counts = np.empty((CHUNKS, n_slots))
    sums = np.empty(n_slots)
    counts = np.empty(n_slots)
    means = np.empty((n_groups, 2 * n_grid))
    d_w = np.empty(d)
    d_theta = np.empty(n_grid)
    g = np.empty(m)
    linear_w = np.empty(m)
    violation, scale, branch, objective_steps = np.nan, 0.0, 0, 0
    for step in range(steps):
        # scores and the ramp means: σ^±((h − θ_p)/τ) = max{h − (θ_p ∓ τ/2), 0}/τ
        order, sorted_cuts = ramp_kinks(theta, tau, cuts)
        bounds[1:-1] = sorted_cuts
        csr_matvec(e_ptr, e_idx, e_val, v, u)
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
            False,
            bounds,
            sorted_cuts,
            h,
            bucket,
            bucket_rows,
            chunk_sums,
            chunk_counts,
        )
        add_chunks(chunk_sums, sums)
        add_chunks(chunk_counts, counts)
        sums_2d = sums.reshape((n_groups, n_cuts + 1))
        counts_2d = counts.reshape((n_groups, n_cuts + 1))
        bucket_means(sums_2d, counts_2d, sorted_cuts, order, means)
        # g_i(v) of eq. 31–32, rows ordered (p, group, side); f⁺: lower σ⁻, upper σ⁺ (Ex. D.3)
        dv = v - center_w
        dth = theta - center_theta
        proximal = 0.5 * mu * (dv @ dv + dth @ dth)
        np.dot(minus_dw, dv, out=linear_w)  # one matrix-vector product for all rows
        for r in range(m):
            p, rest = divmod(r, 2 * n_groups)
            k, side = divmod(rest, 2)
            plus = means[k, n_grid + p] if side == 0 else means[k, p]
            # row r's θ-subgradient is zero but at θ_p (`idca_linearization`)
            linear = linear_w[r] + minus_dtheta[r, p] * dth[p]
            g[r] = plus / tau - (minus[r] + linear) + proximal
            if not np.isfinite(g[r]):
                return step, False, np.nan, best_objective, np.nan, 0.0, 0, objective_steps
        worst = np.argmax(g >= g.max() - TIE_TOLERANCE)  # as `switching.worst_row`
        violation = g[worst]
        if violation <= epsilon:  # objective step: logistic loss and X̃ᵀ∇f0 in one pass
            branch = 1
            objective_steps += 1
            _loss_pass(
                indptr, indices, data, valued, width, block, zeta, h, starts, chunk_grad, chunk_loss
            )
            add_chunks(chunk_grad, block_grad)
            block_grad /= n
            csr_matvec(et_ptr, et_idx, et_val, block_grad, d_w)
            objective = chunk_loss.sum() / n + proximal
            if objective < best_objective:
                best_objective = objective
                best_v[:] = v
                best_theta[:] = theta
            d_w += mu * dv
            d_theta[:] = mu * dth
            numerator = epsilon
        else:  # constraint step along row (p, k, side) of f⁺ minus its frozen f⁻ subgradient
            branch = 0
            p, rest = divmod(worst, 2 * n_groups)
            k, side = divmod(rest, 2)
            kink = n_grid + p if side == 0 else p  # lower rows: σ⁻ at θ_p + τ/2; upper: σ⁺
            above = np.argmax(order == kink) + 1  # the buckets above the kink
            active = counts_2d[k, above:].sum()
            block_grad[:] = 0.0
            # Σ x̃_i over the group's samples above it, from their rows: with many cuts a step
            # moves thousands of samples between buckets, so per-bucket sums of the rows would
            # cost more to keep than this pass over one group's rows
            for r in range(group_starts[k], group_starts[k + 1]):
                i = group_rows[r]
                if bucket[i] >= above:
                    _add_row(indptr, indices, data, valued, block_grad, i, block[i] * width, 1.0)
            csr_matvec(et_ptr, et_idx, et_val, block_grad, d_w)
            slope = 1.0 / (tau * group_sizes[k])
            d_w *= slope
            d_w += mu * dv - minus_dw[worst]
            d_theta[:] = mu * dth - minus_dtheta[worst]
            d_theta[p] -= active * slope
            numerator = violation
        norm_squared = d_w @ d_w + d_theta @ d_theta
        if norm_squared < TINY_NORM_SQUARED:  # spec 003 §6.2.3: a zero direction
            return (
                step + 1,
                True,
                objective,
                best_objective,
                violation,
                0.0,
                branch,
                objective_steps,
            )
        scale = numerator / norm_squared
        if scale * np.sqrt(norm_squared) > max_step:
            scale = max_step / np.sqrt(norm_squared)
        v -= scale * d_w
        theta -= scale * d_theta
    return steps, False, objective, best_objective, violation, scale, branch, objective_steps


@njit(cache=True, nogil=True, parallel=True)
def score_pass(
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
    first,
    bounds,
    sorted_cuts,
    h,
    bucket,
    bucket_rows,
    chunk_sums,
    chunk_counts,
):
    """h = X̃·v, each sample's bucket among the sorted cuts and the chunk's score sums and
    counts per (group, bucket) slot; the chunks run in parallel. The `first` pass (the
    linearisation's) also sums the block rows per (chunk, group, bucket) into `bucket_rows`."""
    one = np.uint64(1)
    chunk_sums[:] = 0.0
    chunk_counts[:] = 0.0
    for c in prange(starts.shape[0] - 1):
        for i in range(starts[c], starts[c + 1]):
            offset = block[i] * width
            acc = _row_score(indptr, indices, data, valued, u, i, offset)
            h[i] = acc
            b = bucket[i]  # try the last bucket first
            if first or bounds[b] >= acc or acc > bounds[b + one]:
                b = np.uint64(
                    bucket_of(acc, sorted_cuts) if first else _near_bucket(acc, b, bounds)
                )
                if first:
                    for q in range(indptr[i], indptr[i + 1]):
                        bucket_rows[c, codes[i], b, offset + indices[q]] += data[q]
                bucket[i] = b
            chunk_sums[c, slots[i] + b] += acc
            chunk_counts[c, slots[i] + b] += 1.0


@njit(cache=True, nogil=True, inline="always")
def _near_bucket(x, last, bounds):
    """The bucket of x (bucket b is (bounds[b], bounds[b + 1]]) found by walking from `last`,
    its bucket before the step: scores move by a few buckets at most, and a walk of a few
    predictable comparisons beats a binary search's unpredictable ones; after `NEAR_BUCKETS`
    the binary search takes over."""
    b = np.int64(last)
    for _ in range(NEAR_BUCKETS):
        if x > bounds[b + 1]:
            b += 1
        elif bounds[b] >= x:
            b -= 1
        else:
            return b
    return bucket_of(x, bounds[1:-1])


@njit(cache=True, nogil=True, parallel=True)
def _loss_pass(
    indptr, indices, data, valued, width, block, zeta, h, starts, chunk_grad, chunk_loss
):
    """Each chunk's logistic loss Σ ln(1 + exp(−ζ_i h_i)) and its X̃ᵀ-sum of the loss's
    derivatives in the scores (engine.objectives.LogisticLoss.value_and_grad, inlined: numba
    cannot call it); the chunks run in parallel. The terms ln(1 + e_i) are summed as the ln of
    their product over LOG_BLOCK rows: one logarithm per block, not per row."""
    chunk_grad[:] = 0.0
    for c in prange(starts.shape[0] - 1):
        loss, product = 0.0, 1.0
        for i in range(starts[c], starts[c + 1]):
            z = -zeta[i] * h[i]  # ln(1 + exp(z)) = max(z, 0) + ln(1 + e), e = exp(−|z|) ≤ 1
            e = np.exp(-abs(z))
            inverse = 1.0 / (1.0 + e)
            loss += max(z, 0.0)
            product *= 1.0 + e
            if (i - starts[c]) % LOG_BLOCK == LOG_BLOCK - 1:
                loss += np.log(product)
                product = 1.0
            r_i = -zeta[i] * (inverse if z >= 0 else e * inverse)
            _add_row(indptr, indices, data, valued, chunk_grad[c], i, block[i] * width, r_i)
        chunk_loss[c] = loss + np.log(product)


@njit(cache=True, nogil=True, inline="always")
def add_chunks(per_chunk, out):
    """out = the sum of the rows of `per_chunk`, in row order."""
    out[:] = per_chunk[0]
    for c in range(1, per_chunk.shape[0]):
        out += per_chunk[c]
