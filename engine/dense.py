"""Dense float64 copies of sparse data, made only when they fit in memory.

Large one-hot data are kept sparse (CSR, float32); a model that needs a dense matrix (an MLP, a
solver that works on X̃ itself) gets a dense copy, which at a million rows can take gigabytes. It
is refused with the numbers, before the copy is attempted, when it would take more than
`SHARE_OF_AVAILABLE` of the memory available now: an out-of-memory kill would end the run (or
the app) without a word.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from engine.data.memory import GB, available_bytes
from engine.errors import UserError

SHARE_OF_AVAILABLE = 0.5  # the rest is left to the solver's own arrays and to other processes


def check_dense_fits(n_rows: int, n_columns: int, what: str) -> None:
    """Refuse, with the sizes, a dense float64 array of this shape that would not fit (nothing is
    refused where the available memory cannot be told)."""
    needed = 8 * n_rows * n_columns
    available = available_bytes()
    if available is None or needed <= SHARE_OF_AVAILABLE * available:
        return
    raise UserError(
        f"{what} would need a dense copy of {n_rows:,} rows × {n_columns:,} columns "
        f"({needed / GB:.1f} GB of float64), more than the {SHARE_OF_AVAILABLE * available / GB:.1f}"
        f" GB that can be spared ({SHARE_OF_AVAILABLE:.0%} of the {available / GB:.1f} GB "
        "available); use fewer rows or features"
    )


def to_dense(matrix: np.ndarray | sp.sparray, what: str) -> np.ndarray:
    """`matrix` as a dense float64 array (itself when it already is one); `what` names, for the
    refusal, what needs it."""
    if not sp.issparse(matrix):
        return matrix
    check_dense_fits(*matrix.shape, what)
    return matrix.toarray().astype(np.float64, copy=False)
