"""Compiled single-pass loops for the per-step work of the switching-subgradient solvers, and
the products of a CSR design with vectors.

A switching step (paper 003, Alg. 2) needs, besides one X̃·w, the ramp means of every group at
every cut and the product of X̃ᵀ with one constraint row's subgradient. Written as whole-array
operations these take a dozen passes over the n samples each; here each is one loop (numba), so
their cost is close to that of reading the data once. `cache=True` keeps the machine code on disk
after the first compilation.

The CSR products read the matrix's values in their own type (float32 for large one-hot data: half
the bytes to read) and add in float64; scipy would first copy a float32 matrix to float64 on every
product with a float64 vector. Positions are read unsigned: numba checks every signed index for
wrap-around (x[-1]), which in the per-non-zero loops costs as much as the arithmetic.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit


def unsigned_csr(matrix: sp.csr_array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR arrays (indptr, indices, data) of `matrix`, its positions viewed as unsigned
    integers of the same width (no copy)."""
    return (
        matrix.indptr.view(np.dtype(matrix.indptr.dtype.str.replace("i", "u"))),
        matrix.indices.view(np.dtype(matrix.indices.dtype.str.replace("i", "u"))),
        matrix.data,
    )


@njit(cache=True, nogil=True)
def csr_matvec(indptr, indices, data, x, out) -> None:
    """out = M·x for M in CSR, each row's sum in float64."""
    for i in range(out.shape[0]):
        acc = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            acc += data[q] * x[indices[q]]
        out[i] = acc


@njit(cache=True, nogil=True)
def csr_rmatvec(indptr, indices, data, r, out) -> None:
    """out = Mᵀ·r for M in CSR (out has M's column count), rows added in order."""
    out[:] = 0.0
    for i in range(r.shape[0]):
        v = r[i]
        for q in range(indptr[i], indptr[i + 1]):
            out[indices[q]] += v * data[q]


@njit(cache=True, nogil=True)
def csr_rmatmat(indptr, indices, data, R, out) -> None:
    """out = Mᵀ·R for M in CSR and R of shape (rows of M, m); out (columns of M, m)."""
    out[:] = 0.0
    for i in range(R.shape[0]):
        for q in range(indptr[i], indptr[i + 1]):
            j, a = indices[q], data[q]
            for k in range(R.shape[1]):
                out[j, k] += a * R[i, k]


@njit(cache=True, nogil=True)
def group_mean_relu(
    h: np.ndarray, codes: np.ndarray, cuts: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(G, c) means over each group of max{h_i − c_j, 0}, in one pass over the samples.

    Each sample goes to bucket b = the number of cuts strictly below h_i; with S and N the sum of
    h and the count per (group, bucket), the samples above sorted cut j are those in buckets
    b > j, so the sum of max{h_i − c_j, 0} is Σ_{b > j} (S_b − N_b·c_j). Also returned, for the
    subgradients: each sample's bucket, the count above each sorted cut (G, c), and the order
    that sorts the cuts.
    """
    order = np.argsort(cuts)
    sorted_cuts = cuts[order]
    sums = np.zeros((n_groups, cuts.shape[0] + 1))
    counts = np.zeros((n_groups, cuts.shape[0] + 1))
    bucket = np.empty(h.shape[0], dtype=np.int64)
    for i in range(h.shape[0]):
        b = bucket_of(h[i], sorted_cuts)
        bucket[i] = b
        sums[codes[i], b] += h[i]
        counts[codes[i], b] += 1.0
    means = np.empty((n_groups, cuts.shape[0]))
    above = bucket_means(sums, counts, sorted_cuts, order, means)
    return means, bucket, above, order


@njit(cache=True, nogil=True, inline="always")
def bucket_of(x: float, sorted_cuts: np.ndarray) -> int:
    """The number of cuts strictly below x (binary search)."""
    lo, hi = 0, sorted_cuts.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_cuts[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def bucket_means(
    sums: np.ndarray,
    counts: np.ndarray,
    sorted_cuts: np.ndarray,
    order: np.ndarray,
    means: np.ndarray,
) -> np.ndarray:
    """Fill `means` (G, c), in the cuts' own order, from the per-(group, bucket) sums and counts;
    returns the count of each group's samples above each sorted cut."""
    n_groups, n_cuts = means.shape
    above = np.empty((n_groups, n_cuts))
    for g in range(n_groups):
        size = counts[g].sum()
        above_sum, above_count = 0.0, 0.0
        for j in range(n_cuts - 1, -1, -1):
            above_sum += sums[g, j + 1]
            above_count += counts[g, j + 1]
            above[g, j] = above_count
            means[g, order[j]] = (above_sum - above_count * sorted_cuts[j]) / size
    return above


@njit(cache=True, nogil=True)
def csr_rows_transpose_product(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    rows: np.ndarray,
    values: np.ndarray,
    n_columns: int,
) -> np.ndarray:
    """Σ_k values_k · X[rows_k, :] for a CSR matrix X, i.e. X[rows]ᵀ·values; rows whose value is
    zero cost nothing, so a ramp subgradient (zero outside its band) touches only its band."""
    out = np.zeros(n_columns)
    for k in range(rows.shape[0]):
        v = values[k]
        if v != 0.0:
            r = rows[k]
            for p in range(indptr[r], indptr[r + 1]):
                out[indices[p]] += v * data[p]
    return out


@njit(cache=True, nogil=True)
def csr_rows_dense(indptr, indices, data, rows, n_columns: int) -> np.ndarray:
    """The rows `rows` of a CSR matrix as a dense float64 array (a minibatch: a few rows of a
    large sparse matrix, without scipy's per-call indexing overhead)."""
    out = np.zeros((rows.shape[0], n_columns))
    for k in range(rows.shape[0]):
        r = rows[k]
        for p in range(indptr[r], indptr[r + 1]):
            out[k, indices[p]] += data[p]
    return out
