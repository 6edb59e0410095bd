"""What every constraint family shares: group encoding, the bound-constraint contract, DC parts.

A family is bound to data once (`bind`), giving an immutable object whose `surrogate` returns
the named rows g(scores, aux) ≤ 0 and whose `exact` returns the metric the rows stand for.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Self

import numpy as np
import torch
from scipy import sparse
from torch import Tensor

from engine.data.group_checks import rank_band_problem
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.constraints.batch_rows import AutogradRows, BatchRows
from engine.fairness.families import check_constraint
from engine.variables import Box, Kind

Aux = Mapping[str, Tensor]


def group_name(key: Any) -> str:
    """The text used for a group in row names; intersections are joined with '|'."""
    if isinstance(key, tuple):
        return "|".join(str(k) for k in key)
    return str(key)


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True, eq=False)
class Members:
    """Membership of the samples in overlapping subgroups (`engine.data.subgroups`): a sparse
    0/1 matrix, samples × subgroups, and the subgroups' names. Only a family that constrains
    subgroups reads it (paper 001's intersectional hinge); the others use the groups."""

    matrix: sparse.csr_matrix
    names: tuple[str, ...]
    features: np.ndarray  # subgroups × features describing each (its thresholds' levels)

    def on(self, matrix: sparse.csr_matrix) -> Members:
        """Other samples' membership of the same subgroups."""
        if matrix.shape[1] != len(self.names):
            raise UserError(
                f"Expected membership of {len(self.names)} subgroups, got {matrix.shape[1]}."
            )
        return Members(sparse.csr_matrix(matrix), self.names, self.features)


@dataclass(frozen=True, eq=False)
class GroupData:
    """Group membership (and labels, when given) of the samples a constraint is bound to.

    `keys` is the group vocabulary fixed by the first `bind` (sorted values, or the names of
    integer ids in id order); a batch is encoded against it so that row names never depend on
    which groups a batch happens to contain.
    """

    keys: tuple[Any, ...]
    codes: np.ndarray
    positive: np.ndarray | None
    index: tuple[Tensor, ...]
    members: Members | None = None

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(group_name(k) for k in self.keys)

    @property
    def counts(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=len(self.keys))

    @cached_property
    def code_tensor(self) -> Tensor:
        """`codes` as a tensor, for per-group sums by index."""
        return torch.from_numpy(self.codes)

    @classmethod
    def encode(
        cls,
        groups: Sequence[Any] | np.ndarray,
        y: Sequence[Any] | np.ndarray | None = None,
        vocabulary: tuple[Any, ...] | None = None,
    ) -> GroupData:
        arr = np.asarray(groups)
        if arr.ndim == 2:
            rows = [tuple(_py(v) for v in r) for r in arr.tolist()]
        elif arr.ndim == 1:
            rows = [_py(v) for v in arr.tolist()]
        else:
            raise UserError(
                "Group membership must be one value per sample, or one row of attributes per "
                f"sample for intersectional groups; got an array of shape {arr.shape}."
            )
        if len(rows) == 0:
            raise UserError("No samples: the group membership is empty.")
        if vocabulary is None:
            try:
                keys = tuple(sorted(set(rows)))
            except TypeError as exc:
                raise UserError(
                    "Group values must be comparable (all numbers or all text)."
                ) from exc
        else:
            keys = tuple(vocabulary)
        lookup = {k: i for i, k in enumerate(keys)}
        try:
            codes = np.fromiter((lookup[r] for r in rows), dtype=np.int64, count=len(rows))
        except KeyError as exc:
            raise UserError(
                f"Group {group_name(exc.args[0])!r} was not present when the constraint was bound; "
                f"known groups: {[group_name(k) for k in keys]}."
            ) from None
        return cls._coded(keys, codes, y)

    @classmethod
    def from_ids(
        cls,
        ids: np.ndarray,
        keys: tuple[Any, ...],
        y: Sequence[Any] | np.ndarray | None = None,
        members: Members | None = None,
    ) -> GroupData:
        """Samples whose groups are already the integers 0..len(keys)−1 (the prepared data's
        group ids, `keys` their names): no value is looked up, so a minibatch costs an index
        per group, not a dictionary look-up per row. `members`: their subgroups, if any."""
        codes = np.asarray(ids)
        if codes.ndim != 1 or codes.size == 0 or codes.dtype.kind not in "iu":
            raise UserError("Group ids must be a non-empty one-dimensional array of integers.")
        if codes.min() < 0 or codes.max() >= len(keys):
            raise UserError(
                f"Group ids must lie in 0..{len(keys) - 1}; got {codes.min()} to {codes.max()}."
            )
        if members is not None and members.matrix.shape[0] != codes.size:
            raise UserError(
                f"Subgroup membership has {members.matrix.shape[0]} rows for {codes.size} samples."
            )
        data = cls._coded(tuple(keys), codes.astype(np.int64, copy=False), y)
        return data if members is None else dataclasses.replace(data, members=members)

    @classmethod
    def _coded(
        cls, keys: tuple[Any, ...], codes: np.ndarray, y: Sequence[Any] | np.ndarray | None
    ) -> GroupData:
        positive = None if y is None else _positive_labels(y, len(codes))
        index = tuple(torch.from_numpy(np.flatnonzero(codes == i)) for i in range(len(keys)))
        return cls(keys=keys, codes=codes, positive=positive, index=index)


def _positive_labels(y: Sequence[Any] | np.ndarray, n: int) -> np.ndarray:
    arr = np.asarray(y)
    if arr.shape != (n,):
        raise UserError(
            f"Labels must be one value per sample: expected {n}, got shape {arr.shape}."
        )
    if arr.dtype == bool:
        return arr.copy()
    try:
        values = set(np.unique(arr).tolist())
    except TypeError as exc:
        raise UserError("Labels must be numbers: 0/1 or −1/+1.") from exc
    if not (values <= {0, 1} or values <= {-1, 1}):
        raise UserError(f"Labels must be 0/1 or −1/+1, got the values {sorted(values)[:5]}.")
    return arr == 1


@dataclass(frozen=True)
class Linearization:
    """Value and one subgradient of each row of a convex part, at a point.

    `d_scores` has shape (m, n); `d_aux[name]` has shape (m, *aux[name].shape). With a linear
    model h = X w, the subgradient in w of row i is X.T @ d_scores[i].
    """

    value: Tensor
    d_scores: Tensor
    d_aux: Mapping[str, Tensor]


@dataclass(frozen=True)
class RowSubgradient:
    """A subgradient of one row: in the scores and one tensor per auxiliary variable.

    `d_scores` holds the entries of the samples `rows` (all n samples when None); the others are
    zero. A row that involves one group only (pSP, paper 003 eq. 15) touches n_k samples.
    """

    d_scores: Tensor
    d_aux: Mapping[str, Tensor]
    rows: Tensor | None = None


@dataclass(frozen=True)
class DCParts:
    """f = f⁺ − f⁻ row by row, both convex in (scores, aux) (paper 003, eq. 27).

    They are convex in the model weights only when the scores are affine in them; a solver that
    needs convexity in w should require an affine model.
    """

    plus_fn: Callable[[Tensor, Aux], Tensor]
    minus_fn: Callable[[Tensor, Aux], Tensor]
    plus_lin_fn: Callable[[Tensor, Aux], Linearization] | None = None
    minus_lin_fn: Callable[[Tensor, Aux], Linearization] | None = None
    plus_row_fn: Callable[[Tensor, Aux, int], RowSubgradient] | None = None

    def plus(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        return self.plus_fn(scores, aux or {})

    def minus(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        return self.minus_fn(scores, aux or {})

    def plus_linearization(self, scores: Tensor, aux: Aux | None = None) -> Linearization:
        if self.plus_lin_fn is not None:
            return self.plus_lin_fn(scores.detach(), _detached(aux))
        return _linearize(self.plus_fn, scores, aux or {})

    def plus_row_subgradient(self, scores: Tensor, aux: Aux | None, row: int) -> RowSubgradient:
        """One subgradient of the single row f⁺_row at (scores, aux): what a switching step
        along the most violated constraint needs, without the other m − 1 rows' gradients."""
        if self.plus_row_fn is not None:
            return self.plus_row_fn(scores.detach(), _detached(aux), row)
        h = scores.detach().clone().requires_grad_()
        leaves = {k: v.detach().clone().requires_grad_() for k, v in (aux or {}).items()}
        self.plus_fn(h, leaves)[row].backward()
        zero = torch.zeros_like
        return RowSubgradient(
            d_scores=h.grad if h.grad is not None else zero(h),
            d_aux={k: v.grad if v.grad is not None else zero(v) for k, v in leaves.items()},
        )

    def minus_linearization(self, scores: Tensor, aux: Aux | None = None) -> Linearization:
        """f⁻ and a subgradient at (scores, aux): what IDCA freezes each outer step (eq. 32)."""
        if self.minus_lin_fn is not None:
            return self.minus_lin_fn(scores.detach(), _detached(aux))
        return _linearize(self.minus_fn, scores, aux or {})


def _detached(aux: Aux | None) -> dict[str, Tensor]:
    return {k: v.detach() for k, v in (aux or {}).items()}


def _linearize(fn: Callable[[Tensor, Aux], Tensor], scores: Tensor, aux: Aux) -> Linearization:
    """Generic value and Jacobian by autograd (relu's subgradient at 0 is 0)."""
    names = tuple(sorted(aux))
    inputs = (scores.detach(),) + tuple(aux[k].detach() for k in names)

    def flat(*args: Tensor) -> Tensor:
        return fn(args[0], dict(zip(names, args[1:], strict=True)))

    with torch.no_grad():
        value = flat(*inputs)
    jac = torch.autograd.functional.jacobian(flat, inputs, vectorize=True)
    return Linearization(value=value, d_scores=jac[0], d_aux=dict(zip(names, jac[1:], strict=True)))


def pairs_of(count: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(count) for j in range(i + 1, count)]


def pair_rows(table: Tensor, pairs: Sequence[tuple[int, int]]) -> Tensor:
    """Two rows per pair (i, j) from a (G, G) table of "i over j" values: [i, j] then [j, i]."""
    if not pairs:
        return table.new_zeros(0)
    i = torch.tensor([a for a, _ in pairs])
    j = torch.tensor([b for _, b in pairs])
    return torch.stack([table[i, j], table[j, i]], dim=1).reshape(-1)


class BoundConstraint(ABC):
    """A constraint family bound to data: named rows g ≤ 0 and the exact metric behind them.

    Instances are immutable; `with_batch` returns a new object on other samples with the same
    groups and rows.
    """

    family: ClassVar[str]
    needs_labels: ClassVar[bool] = False
    # the rows are means within (group, label) cells (rates given Y, AUC pairs): a batch needs
    # rows of every cell, not only of every group (paper 000, Table 1's D[A, Y = v])
    label_cells: ClassVar[bool] = False
    min_groups: ClassVar[int] = 2
    # the kind and box of each auxiliary variable `aux_init` returns (engine.variables)
    aux_kinds: ClassVar[Mapping[str, tuple[Kind, Box]]] = {}

    spec: ConstraintSpec
    data: GroupData
    rows: tuple[str, ...]

    def __init__(self, spec: ConstraintSpec, data: GroupData) -> None:
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "data", data)
        self._setup()
        object.__setattr__(self, "rows", tuple(self._row_names()))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; bind a new one instead.")

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    # ---- construction ---------------------------------------------------------------------
    @classmethod
    def bind(
        cls,
        spec: ConstraintSpec,
        *,
        groups: Sequence[Any] | np.ndarray,
        y: Sequence[Any] | np.ndarray | None = None,
    ) -> Self:
        """Validate `spec` for this family and bind it to the samples' groups (and labels)."""
        cls._check_spec(spec, y)
        return cls._bound(spec, GroupData.encode(groups, y))

    @classmethod
    def bind_ids(
        cls,
        spec: ConstraintSpec,
        *,
        ids: np.ndarray,
        names: Sequence[str],
        y: Sequence[Any] | np.ndarray | None = None,
        members: Members | None = None,
    ) -> Self:
        """`bind` for samples whose groups are integer ids 0..G−1 named by `names` (and, for a
        family that constrains subgroups, their `members`hip of overlapping subgroups)."""
        cls._check_spec(spec, y)
        return cls._bound(spec, GroupData.from_ids(ids, tuple(names), y, members))

    @classmethod
    def _check_spec(cls, spec: ConstraintSpec, y: Sequence[Any] | np.ndarray | None) -> None:
        if spec.family != cls.family:
            raise UserError(f"Spec family {spec.family!r} given to the {cls.family!r} family.")
        check_constraint(spec)
        if cls.needs_labels and y is None:
            raise UserError(f"The {cls.family} constraint needs the labels y.")

    @classmethod
    def _bound(cls, spec: ConstraintSpec, data: GroupData) -> Self:
        if len(data.keys) < cls.min_groups:
            raise UserError(
                f"The {cls.family} constraint compares groups, but the data has "
                f"{len(data.keys)} group(s): {list(data.names)}."
            )
        bound = cls(spec, data)
        bound._check_data(data)
        return bound

    def with_batch(
        self,
        *,
        groups: Sequence[Any] | np.ndarray,
        y: Sequence[Any] | np.ndarray | None = None,
    ) -> Self:
        """The same constraint on other samples (a minibatch), with the same rows."""
        if self.needs_labels and y is None:
            raise UserError(f"The {self.family} constraint needs the labels y.")
        return self._on(GroupData.encode(groups, y, vocabulary=self.data.keys))

    def with_ids(
        self,
        ids: np.ndarray,
        y: Sequence[Any] | np.ndarray | None = None,
        members: sparse.csr_matrix | None = None,
    ) -> Self:
        """`with_batch` for samples whose groups are the integer ids this constraint was bound
        to with `bind_ids` (a minibatch of the prepared data); `members`: their rows of the
        subgroup membership matrix, needed when the constraint was bound with one."""
        if self.needs_labels and y is None:
            raise UserError(f"The {self.family} constraint needs the labels y.")
        return self._on(GroupData.from_ids(ids, self.data.keys, y, self._members_of(members)))

    def _members_of(self, matrix: sparse.csr_matrix | None) -> Members | None:
        bound = self.data.members
        if bound is None:
            return None
        if matrix is None:
            raise UserError(
                f"The {self.family} constraint was bound to subgroups: give the "
                "samples' subgroup membership too."
            )
        return bound.on(matrix)

    def batch_rows(
        self, ids: np.ndarray, y: np.ndarray | None = None, members: sparse.csr_matrix | None = None
    ) -> BatchRows:
        """The rows on a minibatch (group ids, labels and subgroup membership of its samples,
        as `with_ids` takes them) as numpy functions of the scores, with vector–Jacobian
        products."""
        return AutogradRows(self.with_ids(ids, y, members))

    def _on(self, data: GroupData) -> Self:
        self._check_batch(data)
        return type(self)(self.spec, data)

    def _check_data(self, data: GroupData) -> None:
        self._check_batch(data)

    def _check_batch(self, data: GroupData) -> None:
        empty = [data.names[i] for i, c in enumerate(data.counts) if c == 0]
        if empty:
            raise UserError(f"No samples of group(s) {empty} in this batch.")

    def _setup(self) -> None:  # noqa: B027
        """Precompute what the rows need from `spec` and `data`."""

    @abstractmethod
    def _row_names(self) -> list[str]: ...

    # ---- evaluation -----------------------------------------------------------------------
    @property
    def m(self) -> int:
        return len(self.rows)

    def aux_init(self, scores0: Tensor | None = None) -> dict[str, Tensor]:
        """Starting values of the auxiliary primal variables (none for most families)."""
        return {}

    @abstractmethod
    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        """The (m,) differentiable constraint values; ≤ 0 means feasible."""

    @abstractmethod
    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """The same rows with the surrogate replaced by the exact indicator (or loss)."""

    @abstractmethod
    def exact(self, scores: np.ndarray | Tensor) -> float:
        """The fairness metric the rows stand for, on these samples (from engine.fairness)."""

    @property
    def bound(self) -> float:
        """The level the exact metric is held to (κ, δ or ε)."""
        return float(self.spec.kappa)

    @property
    def dc(self) -> DCParts | None:
        """Convex parts (f⁺, f⁻) with f⁺ − f⁻ = surrogate, or None if the family has none."""
        return None

    def row_features(self) -> np.ndarray:
        """A feature vector per row (rows × features), what a Lagrange-multiplier model maps to
        the row's multiplier (Narasimhan et al. 2020): a one-hot code of the row unless the
        family describes its rows better."""
        return np.eye(self.m)

    def named(self, values: Tensor | np.ndarray) -> dict[str, float]:
        """Row values keyed by row name."""
        arr = values.detach().cpu().numpy() if isinstance(values, Tensor) else np.asarray(values)
        if arr.shape != (self.m,):
            raise ValueError(f"Expected {self.m} row values, got shape {arr.shape}.")
        return dict(zip(self.rows, (float(v) for v in arr), strict=True))

    # ---- helpers for families -------------------------------------------------------------
    def _scores(self, scores: Tensor | np.ndarray) -> Tensor:
        t = torch.as_tensor(scores)
        if t.ndim != 1 or t.shape[0] != self.data.n:
            raise ValueError(f"Expected {self.data.n} scores, got shape {tuple(t.shape)}.")
        if not torch.is_floating_point(t):
            t = t.to(torch.float64)
        return t

    def _numpy(self, scores: Tensor | np.ndarray) -> np.ndarray:
        return self._scores(scores).detach().cpu().to(torch.float64).numpy()

    def _by_group(self, scores: Tensor) -> list[Tensor]:
        return [scores[idx] for idx in self.data.index]


# spec 003 §6.1.5: warn when the rank band holds fewer than this many samples of a group
MIN_BAND_SAMPLES = 5.0


class TinyBandWarning(UserWarning):
    """The rank band κ(β − α) is narrower than a few samples of some group."""


class VacuousConstraintWarning(UserWarning):
    """The constraint holds for every model (κ = 1 with the inside grid), so it has no rows."""


def check_rank_band(band: float, data: GroupData, metric: str, strict: bool) -> None:
    """Warn when the rank band κ(β − α) holds few samples of a group (spec 003 §6.1.5).

    Ranks move in steps of 1/n_k. With `strict` (pSP), a band under one step is refused: most
    grid points p then have no shared θ putting every group's rank in [p, p + κ(β − α)].
    """
    per_group = band * data.counts
    worst = int(np.argmin(per_group))
    if strict and per_group[worst] < 1.0:
        n = int(data.counts[worst])
        raise UserError(rank_band_problem(data.names[worst], n, band, len(data.keys)))
    if per_group[worst] < MIN_BAND_SAMPLES:
        warnings.warn(
            f"The rank band κ(β − α) = {band:.4g} holds only {per_group[worst]:.1f} "
            f"samples of group {data.names[worst]!r}; the exact {metric} will be noisy.",
            TinyBandWarning,
            stacklevel=4,
        )


def interval_of(spec: ConstraintSpec) -> tuple[float, float]:
    """I = [α, β); None means the whole range [0, 1] (full SP or DP)."""
    return spec.interval if spec.interval is not None else (0.0, 1.0)


def fmt(value: float) -> str:
    return f"{value:.6g}" if math.isfinite(value) else str(value)


def fmt_all(values: Sequence[float]) -> list[str]:
    """Short labels for grid values, with more digits only when the short ones would collide."""
    short = [fmt(float(v)) for v in values]
    return short if len(set(short)) == len(short) else [repr(float(v)) for v in values]
