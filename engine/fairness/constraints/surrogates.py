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

import torch
from torch import Tensor

from engine.errors import UserError

MeanMethod = Literal["auto", "sorted", "direct"]

# "auto" sorts only for many cuts: an n × |cuts| pass is cheaper than a sort up to about this many
DIRECT_UP_TO_CUTS = 64


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
        z = x / self.temperature
        if self.name == "ramp":
            plus = (z + 0.5 > 0).to(x.dtype)
            minus = (z - 0.5 > 0).to(x.dtype)
        else:
            s = torch.sigmoid(z)
            slope = s * (1.0 - s)
            plus = torch.where(z > 0, torch.full_like(z, 0.25), slope)
            minus = torch.where(z > 0, 0.25 - slope, torch.zeros_like(z))
        return plus / self.temperature, minus / self.temperature

    def inverse(self, rate: Tensor) -> Tensor:
        """The x with σ(x/τ) = rate, for rate in (0, 1) (the ramp is inverted on its slope)."""
        if self.name == "ramp":
            return self.temperature * (rate - 0.5)
        return self.temperature * torch.logit(rate)

    def mean_parts(
        self, h: Tensor, thresholds: Tensor, method: MeanMethod = "auto"
    ) -> tuple[Tensor, Tensor]:
        """(mean_i σ⁺((h_i − t)/τ), mean_i σ⁻((h_i − t)/τ)) for every t in `thresholds`.

        For the ramp, σ^±((h − t)/τ) = max{h − (t ∓ τ/2), 0}/τ, and the mean of max{h − c, 0}
        over all c comes from one sort and suffix sums (spec 003 §7) instead of an n × |t| matrix.
        """
        if self.name == "ramp":
            half = 0.5 * self.temperature
            cuts = torch.cat([thresholds - half, thresholds + half])
            means = mean_relu(h, cuts, method=method) / self.temperature
            k = thresholds.shape[0]
            return means[:k], means[k:]
        diff = h[:, None] - thresholds[None, :]
        return self.plus(diff).mean(dim=0), self.minus(diff).mean(dim=0)

    def all_group_mean_parts(
        self, h: Tensor, thresholds: Tensor, means: Callable[[Tensor], Tensor]
    ) -> tuple[Tensor, Tensor]:
        """`mean_parts` for every group at once: one (n, ·) pass over all samples, then `means`
        (n, c) → (G, c) averages each group; the direct form, for few thresholds."""
        if self.name == "ramp":
            half = 0.5 * self.temperature
            cuts = torch.cat([thresholds - half, thresholds + half])
            grouped = means(torch.relu_(h[:, None] - cuts[None, :])) / self.temperature
            k = thresholds.shape[0]
            return grouped[:, :k], grouped[:, k:]
        diff = h[:, None] - thresholds[None, :]
        return means(self.plus(diff)), means(self.minus(diff))

    def mean(self, h: Tensor, thresholds: Tensor, method: MeanMethod = "auto") -> Tensor:
        """mean_i σ((h_i − t)/τ) for every t in `thresholds`."""
        if self.name == "ramp":
            plus, minus = self.mean_parts(h, thresholds, method=method)
            return plus - minus
        return self(h[:, None] - thresholds[None, :]).mean(dim=0)


def mean_relu(h: Tensor, cuts: Tensor, method: MeanMethod = "auto") -> Tensor:
    """mean_i max{h_i − c, 0} for each c in `cuts`; differentiable in h and in cuts.

    "sorted": sort h once; with suffix sums S_j = Σ_{i ≥ j} h_(i), the mean is
    (S_j − c·(n − j))/n where j is the first sorted position with h_(j) > c. Points equal to c
    get the subgradient 0, as relu does in the "direct" form. "auto" takes "direct" for up to
    DIRECT_UP_TO_CUTS cuts and "sorted" beyond.
    """
    n = h.shape[0]
    if n == 0:
        raise UserError("A group has no samples in this batch, so its rate is undefined.")
    if method == "auto":
        method = "direct" if cuts.shape[0] <= DIRECT_UP_TO_CUTS else "sorted"
    if method == "direct":
        return torch.relu(h[:, None] - cuts[None, :]).mean(dim=0)
    if method != "sorted":
        raise UserError(f"Unknown method {method!r}; use 'auto', 'sorted' or 'direct'.")
    hs, _ = torch.sort(h)
    suffix = torch.flip(torch.cumsum(torch.flip(hs, dims=(0,)), dim=0), dims=(0,))
    suffix = torch.cat([suffix, suffix.new_zeros(1)])
    j = torch.searchsorted(hs.detach(), cuts.detach().contiguous(), right=True)
    count = (n - j).to(h.dtype)
    return (suffix[j] - cuts * count) / n
