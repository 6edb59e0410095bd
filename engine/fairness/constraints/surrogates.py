"""Smooth or piecewise-linear stand-ins for the step 1[x > 0], each split into two convex parts.

Every surrogate is written as σ(x/τ) = σ⁺(x/τ) − σ⁻(x/τ) with σ⁺ and σ⁻ convex, so any mean of
σ over an affine function of the scores is a difference of convex functions (paper 003, Sec. 5
and App. D). The subgradient taken at a kink of max{x, 0} is 1[x > 0] (torch's relu), which
spec 003 §6.2.3 allows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import Tensor

from engine import kernels
from engine.errors import UserError

MeanMethod = Literal["bucketed", "direct"]


def ramp_plus(x: Tensor) -> Tensor:
    """σ⁺(x) = max{x + ½, 0}  (paper 003, Sec. 7.1)."""
    return torch.relu(x + 0.5)


def ramp_minus(x: Tensor) -> Tensor:
    """σ⁻(x) = max{x − ½, 0}  (paper 003, Sec. 7.1)."""
    return torch.relu(x - 0.5)


def sigmoid_plus(x: Tensor) -> Tensor:
    """Convex part of the logistic sigmoid: s(x) for x ≤ 0, its tangent ½ + x/4 for x > 0.

    The sigmoid is convex on x ≤ 0 and concave on x ≥ 0 with s'(0) = ¼, so continuing it by the
    tangent at 0 gives a convex C¹ function; the remainder below is convex too.
    """
    return torch.sigmoid(torch.clamp(x, max=0.0)) + 0.25 * torch.relu(x)


def sigmoid_minus(x: Tensor) -> Tensor:
    """Convex part removed from `sigmoid_plus`: 0 for x ≤ 0, ½ + x/4 − s(x) for x > 0."""
    r = torch.relu(x)
    return 0.25 * r + 0.5 - torch.sigmoid(r)


@dataclass(frozen=True)
class Surrogate:
    """σ(x/τ) for the ramp (paper 003, Sec. 7.1) or the logistic sigmoid (paper 003, Sec. 5)."""

    name: Literal["ramp", "sigmoid"]
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if self.name not in ("ramp", "sigmoid"):
            raise UserError(f"Unknown surrogate {self.name!r}; use 'ramp' or 'sigmoid'.")
        if not self.temperature > 0:
            raise UserError(f"The surrogate temperature must be > 0, got {self.temperature!r}.")

    def __call__(self, x: Tensor) -> Tensor:
        z = x / self.temperature
        if self.name == "ramp":
            return torch.clamp(z + 0.5, 0.0, 1.0)
        return torch.sigmoid(z)

    def plus(self, x: Tensor) -> Tensor:
        z = x / self.temperature
        return ramp_plus(z) if self.name == "ramp" else sigmoid_plus(z)

    def minus(self, x: Tensor) -> Tensor:
        z = x / self.temperature
        return ramp_minus(z) if self.name == "ramp" else sigmoid_minus(z)

    def part_slopes(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(d/dx σ⁺(x/τ), d/dx σ⁻(x/τ)): one subgradient each, 1[· > 0] at the ramp's kinks."""
        return self.part_slope(x, "plus"), self.part_slope(x, "minus")

    def part_slope(self, x: Tensor, part: Literal["plus", "minus"]) -> Tensor:
        """d/dx σ⁺(x/τ) or d/dx σ⁻(x/τ), as in `part_slopes`."""
        z = x / self.temperature
        if self.name == "ramp":
            kink = -0.5 if part == "plus" else 0.5
            return (z > kink).to(x.dtype) / self.temperature
        s = torch.sigmoid(z)
        slope = s * (1.0 - s)
        if part == "plus":
            return torch.where(z > 0, torch.full_like(z, 0.25), slope) / self.temperature
        return torch.where(z > 0, 0.25 - slope, torch.zeros_like(z)) / self.temperature

    def inverse(self, rate: Tensor) -> Tensor:
        """The x with σ(x/τ) = rate, for rate in (0, 1) (the ramp is inverted on its slope)."""
        if self.name == "ramp":
            return self.temperature * (rate - 0.5)
        return self.temperature * torch.logit(rate)

    def mean_parts(
        self, h: Tensor, thresholds: Tensor, method: MeanMethod = "bucketed"
    ) -> tuple[Tensor, Tensor]:
        """(mean_i σ⁺((h_i − t)/τ), mean_i σ⁻((h_i − t)/τ)) for every t in `thresholds`."""
        single = h.new_zeros(h.shape[0], dtype=torch.long)
        plus, minus = self.group_mean_parts(h, thresholds, single, 1, method)
        return plus[0], minus[0]

    def group_mean_parts(
        self,
        h: Tensor,
        thresholds: Tensor,
        codes: Tensor,
        n_groups: int,
        method: MeanMethod = "bucketed",
    ) -> tuple[Tensor, Tensor]:
        """`mean_parts` within every group at once: two (G, |thresholds|) tables.

        For the ramp, σ^±((h − t)/τ) = max{h − (t ∓ τ/2), 0}/τ, so both parts are means of
        max{h − c, 0} over the 2·|thresholds| cuts c (`group_mean_relu`).
        """
        k = thresholds.shape[0]
        if self.name == "ramp":
            half = 0.5 * self.temperature
            cuts = torch.cat([thresholds - half, thresholds + half])
            means = group_mean_relu(h, cuts, codes, n_groups, method) / self.temperature
            return means[:, :k], means[:, k:]
        diff = h[:, None] - thresholds[None, :]
        return (
            _group_means(self.plus(diff), codes, n_groups),
            _group_means(self.minus(diff), codes, n_groups),
        )

    def crossing(self, h: Tensor, rates: Tensor, method: MeanMethod = "bucketed") -> Tensor:
        """For each rate r, the threshold t where the decreasing mean_i σ((h_i − t)/τ) crosses
        r, by bisection (64 halvings of [min h − 40τ, max h + 40τ]).

        For the ramp each halving reads the mean from the sorted scores' prefix sums
        (`sorted_ramp_means`), so no halving passes over the samples."""
        scores = h.detach().to(torch.float64)
        if self.name == "ramp":
            mean = self._sorted_ramp_mean(scores.numpy())
        else:
            mean = lambda t: self.mean(scores, torch.from_numpy(t), method).numpy()  # noqa: E731
        span = 40.0 * self.temperature
        target = rates.detach().to(torch.float64).numpy()
        lo = np.full_like(target, float(scores.min()) - span)
        hi = np.full_like(target, float(scores.max()) + span)
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            above = mean(mid) > target
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        return torch.from_numpy(0.5 * (lo + hi))

    def _sorted_ramp_mean(self, h: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """t ↦ mean_i σ((h_i − t)/τ) for the ramp, from h sorted once (see `crossing`)."""
        ordered = np.sort(h)
        prefix = np.concatenate([[0.0], np.cumsum(ordered)])
        return lambda t: sorted_ramp_means(ordered, prefix, t, self.temperature)[0]

    def mean(self, h: Tensor, thresholds: Tensor, method: MeanMethod = "bucketed") -> Tensor:
        """mean_i σ((h_i − t)/τ) for every t in `thresholds`."""
        if self.name == "ramp":
            plus, minus = self.mean_parts(h, thresholds, method=method)
            return plus - minus
        return self(h[:, None] - thresholds[None, :]).mean(dim=0)


def sorted_ramp_means(
    ordered: np.ndarray, prefix: np.ndarray, thresholds: np.ndarray, tau: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """mean_i σ((h_i − t)/τ) of the ramp at each threshold t, from the scores sorted ascending
    and their prefix sums (prefix[0] = 0), by two binary searches per t; and the positions
    (first, past] of the sorted scores on each ramp's slope, t − τ/2 < h ≤ t + τ/2. Those
    above it count 1, those on it (h − t)/τ + ½."""
    first = np.searchsorted(ordered, thresholds - 0.5 * tau, side="right")
    past = np.searchsorted(ordered, thresholds + 0.5 * tau, side="right")
    on_slope = past - first
    ramp = (prefix[past] - prefix[first] - on_slope * thresholds) / tau + 0.5 * on_slope
    return (ordered.size - past + ramp) / ordered.size, first, past


def _group_means(values: Tensor, codes: Tensor, n_groups: int) -> Tensor:
    """(G, c) means over the rows of each group of an (n, c) tensor."""
    members = torch.nn.functional.one_hot(codes, n_groups).to(values.dtype)  # (n, G)
    return (members.T @ values) / members.sum(dim=0)[:, None]


def mean_relu(h: Tensor, cuts: Tensor, method: MeanMethod = "bucketed") -> Tensor:
    """mean_i max{h_i − c, 0} for each c in `cuts`; differentiable in h and in cuts."""
    return group_mean_relu(h, cuts, h.new_zeros(h.shape[0], dtype=torch.long), 1, method)[0]


def group_mean_relu(
    h: Tensor, cuts: Tensor, codes: Tensor, n_groups: int, method: MeanMethod = "bucketed"
) -> Tensor:
    """(G, c): the mean over group k of max{h_i − c, 0}, for every group k and cut c.

    "direct" builds the (n, c) matrix of max{h_i − c, 0}. "bucketed" (spec 003 §7: the means need
    not cost n·c) sorts the c cuts and puts each h_i in bucket b, the number of cuts below it; with
    S_b and N_b the sum and count of a group's samples in bucket b, the samples above sorted cut
    c_j are those in buckets b > j, so Σ max{h_i − c_j, 0} = Σ_{b > j} (S_b − N_b·c_j): one pass
    over the samples (`engine.kernels.bucket_sums`). A sample equal to a cut is not above it and
    gets the subgradient 0 there, as relu does in the direct form. Both forms are differentiable
    in h and in the cuts.
    """
    if h.shape[0] == 0:
        raise UserError("A group has no samples in this batch, so its rate is undefined.")
    if method == "direct":
        return _group_means(torch.relu(h[:, None] - cuts[None, :]), codes, n_groups)
    if method != "bucketed":
        raise UserError(f"Unknown method {method!r}; use 'bucketed' or 'direct'.")
    if cuts.shape[0] == 0:
        return h.new_zeros(n_groups, 0)
    return _BucketedMeanRelu.apply(h, cuts, codes, n_groups)


class _BucketedMeanRelu(torch.autograd.Function):
    """The bucketed form of `group_mean_relu` with its subgradients:
    ∂/∂h_i = Σ_{c_j < h_i} grad[k_i, j] / n_{k_i} and ∂/∂c_j = −Σ_k grad[k, j]·N_above[k, j]/n_k."""

    @staticmethod
    def forward(ctx, h: Tensor, cuts: Tensor, codes: Tensor, n_groups: int) -> Tensor:
        means, bucket, above_counts, order = kernels.group_mean_relu(
            h.detach().to(torch.float64).numpy(),
            codes.numpy(),
            cuts.detach().to(torch.float64).numpy(),
            n_groups,
        )
        ctx.n_groups = n_groups
        ctx.save_for_backward(
            codes, torch.from_numpy(bucket), torch.from_numpy(order), torch.from_numpy(above_counts)
        )
        return torch.from_numpy(means).to(h.dtype)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None, None]:
        codes, bucket, order, above_counts = ctx.saved_tensors
        sizes = torch.bincount(codes, minlength=ctx.n_groups).to(torch.float64)
        per_size = grad[:, order].to(torch.float64) / sizes[:, None]  # (G, c), cuts sorted
        below = torch.nn.functional.pad(torch.cumsum(per_size, dim=1), (1, 0))  # Σ_{j < b}
        d_h = below[codes, bucket]
        d_sorted = -(per_size * above_counts).sum(dim=0)
        d_cuts = torch.empty_like(d_sorted).index_copy_(0, order, d_sorted)
        return d_h.to(grad.dtype), d_cuts.to(grad.dtype), None, None
