"""Partial statistical parity (pSP) as model (15) of paper 003, with shared thresholds θ_p.

For every grid point p of Î and every group k (paper 003, eq. 15):
    lower:  p − mean_k σ((h − θ_p)/τ) ≤ 0
    upper:  mean_k σ((h − θ_p)/τ) − p − κ(β − α) ≤ 0
One θ_p per grid point is shared by all groups (Lemma 5.1); ranks stay per group.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from scipy import sparse
from torch import Tensor

from engine.fairness.families import options_of
from engine.variables import Box, Kind

from .base import (
    Aux,
    BoundConstraint,
    DCParts,
    GroupData,
    Linearization,
    RowSubgradient,
    TinyBandWarning,
    VacuousConstraintWarning,
    check_rank_band,
    fmt_all,
    interval_of,
)
from .batch_rows import AutogradRows, BatchRows
from .exact import exact_metric
from .psp_rows import RampPSPRows
from .surrogates import Surrogate

__all__ = ["PSPConstraint", "TinyBandWarning", "VacuousConstraintWarning"]


class PSPConstraint(BoundConstraint):
    """pSP ≤ κ on I through model (15) of paper 003; aux variable "theta" of shape (|Î|,)."""

    family = "pSP"
    # the shared thresholds θ_p, minimised with the weights, unbounded (paper 003, eq. 15)
    aux_kinds = {"theta": (Kind.MINIMISED, Box())}

    def _setup(self) -> None:
        alpha, beta = interval_of(self.spec)
        self._set("alpha", alpha)
        self._set("beta", beta)
        self._set("band", self.spec.kappa * (beta - alpha))
        grid = self.spec.rank_levels()
        self._set("grid", grid)
        self._set("_p", torch.as_tensor(grid, dtype=torch.float64))
        self._set("sigma", Surrogate(self.spec.surrogate, self.spec.temperature))
        self._set("method", options_of(self.spec).mean_method)

    def _row_names(self) -> list[str]:
        return [
            f"pSP[p={p},g={g}]:{side}"
            for p in fmt_all(self.grid)
            for g in self.data.names
            for side in ("lower", "upper")
        ]

    def _check_data(self, data: GroupData) -> None:
        super()._check_data(data)
        if self.grid.size == 0:
            warnings.warn(
                "κ = 1 makes pSP ≤ κ hold for every model (Lemma 5.1 has no p), so this "
                "constraint has no rows.",
                VacuousConstraintWarning,
                stacklevel=3,
            )
            return
        check_rank_band(self.band, data, "pSP", strict=True)

    # ---- pieces ---------------------------------------------------------------------------
    def _theta(self, aux: Aux | None, like: Tensor) -> Tensor:
        if aux is None or "theta" not in aux:
            raise ValueError("pSP needs aux['theta'] (see aux_init).")
        theta = aux["theta"]
        if theta.shape != self._p.shape:
            raise ValueError(
                f"theta must have shape {tuple(self._p.shape)}, got {tuple(theta.shape)}."
            )
        return theta.to(like.dtype)

    def rates(self, scores: Tensor, aux: Aux | None) -> Tensor:
        """(G, |Î|) surrogate rates mean_k σ((h − θ_p)/τ), as the means of σ⁺ − σ⁻."""
        a_plus, a_minus = self._parts(scores, aux)
        return a_plus - a_minus

    def _rows(self, lower: Tensor, upper: Tensor) -> Tensor:
        # (G, P) each -> rows ordered (p, group, side)
        return torch.stack([lower.T, upper.T], dim=-1).reshape(-1)

    def _targets(self) -> Tensor:
        p = self._p
        return p + 0.5 * torch.clamp(1.0 - p, max=self.band)

    # ---- contract -------------------------------------------------------------------------
    def aux_init(self, scores0: Tensor | None = None) -> dict[str, Tensor]:
        """A θ that makes every row feasible when possible (spec 003 §6.2.1).

        With equal scores c (w = 0 gives c = 0), θ_p = c − τσ⁻¹(p + κ(β − α)/2): for the ramp
        this is spec's θ_p = ½ − p − κ(β − α)/2. Otherwise each group's feasible θ-interval is
        found by bisection and θ_p is the middle of their intersection (of the gap between them
        when they do not meet, as a best effort).
        """
        target = self._targets()
        if scores0 is None:
            c = 0.0
        else:
            h = self._scores(scores0).detach().to(torch.float64)
            if bool(torch.all(h == h[0])):
                c = float(h[0])
            else:
                return {"theta": self._bisect_theta(h)}
        return {"theta": c - self.sigma.inverse(target)}

    def _bisect_theta(self, h: Tensor) -> Tensor:
        p = self._p
        hi_rate = torch.minimum(p + self.band, torch.ones_like(p))
        groups = self._by_group(h)
        with torch.no_grad():
            left = torch.stack([self.sigma.crossing(hk, hi_rate, self.method) for hk in groups])
            right = torch.stack([self.sigma.crossing(hk, p, self.method) for hk in groups])
        return 0.5 * (left.max(dim=0).values + right.min(dim=0).values)

    def batch_rows(
        self, ids: np.ndarray, y: np.ndarray | None = None, members: sparse.csr_matrix | None = None
    ) -> BatchRows:
        """The ramp's rows in closed form, with a sparse Jacobian (`RampPSPRows`); the sigmoid's
        through autograd."""
        bound = self.with_ids(ids, y, members)
        if self.spec.surrogate != "ramp":
            return AutogradRows(bound)
        return RampPSPRows(
            bound.data.codes,
            len(bound.data.keys),
            bound.grid,
            bound.band,
            float(self.spec.temperature),
        )

    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        rates = self.rates(scores, aux)
        p = self._p.to(rates.dtype)
        # paper 003, eq. 15
        return self._rows(p - rates, rates - p - self.band)

    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """Rows of (15) with σ replaced by 1[h > θ_p]: the discretised Lemma 5.1 condition (14)."""
        h = self._scores(scores).detach().to(torch.float64)
        theta = self._theta(aux, h).detach()
        rates = torch.stack(
            [(hk[:, None] > theta[None, :]).to(h.dtype).mean(0) for hk in self._by_group(h)]
        )
        p = self._p
        return self._rows(p - rates, rates - p - self.band).numpy()

    def exact(self, scores: np.ndarray | Tensor) -> float:
        return float(
            exact_metric("pSP")(self._numpy(scores), self.data.codes, self.alpha, self.beta)
        )

    @property
    def dc(self) -> DCParts:
        return DCParts(
            plus_fn=self._dc_plus,
            minus_fn=self._dc_minus,
            plus_lin_fn=lambda h, aux: self._dc_linearization(h, aux, minus=False),
            minus_lin_fn=lambda h, aux: self._dc_linearization(h, aux, minus=True),
            plus_row_fn=self._dc_plus_row,
        )

    def _dc_plus_row(self, scores: Tensor, aux: Aux, row: int) -> RowSubgradient:
        """Closed-form subgradient of f⁺ of one row (p, k, side) of model (15), O(n_k)."""
        h = self._scores(scores)
        theta = self._theta(aux, h)
        n_groups = len(self.data.keys)
        p_index, rest = divmod(row, 2 * n_groups)
        k, side = divmod(rest, 2)
        idx = self.data.index[k]
        part = "minus" if side == 0 else "plus"  # Example D.3: lower rows σ⁻, upper rows σ⁺
        slope = self.sigma.part_slope(h[idx] - theta[p_index], part) / idx.numel()
        d_theta = theta.new_zeros(theta.shape[0])
        d_theta[p_index] = -slope.sum()
        return RowSubgradient(d_scores=slope, d_aux={"theta": d_theta}, rows=idx)

    def _dc_linearization(self, scores: Tensor, aux: Aux, minus: bool) -> Linearization:
        """Closed-form subgradients of the parts (spec 003 §6.2.4), O(n·|Î|), no autograd.

        Row (p, k) of mean_k σ^±((h − θ_p)/τ) has ∂/∂h_i = σ^±'((h_i − θ_p)/τ)/(τ n_k) for i in
        group k and ∂/∂θ_p = −Σ_i ∂/∂h_i. Lower rows of f⁺ use σ⁻ and of f⁻ use σ⁺; upper rows
        the other way round (Example D.3).
        """
        h = self._scores(scores)
        theta = self._theta(aux, h)
        n_grid, n_groups = self.grid.size, len(self.data.keys)
        d_scores = h.new_zeros(n_grid, n_groups, 2, h.shape[0])
        for k, idx in enumerate(self.data.index):
            slope_plus, slope_minus = self.sigma.part_slopes(h[idx][None, :] - theta[:, None])
            lower, upper = (slope_plus, slope_minus) if minus else (slope_minus, slope_plus)
            d_scores[:, k, 0, idx] = lower / idx.numel()
            d_scores[:, k, 1, idx] = upper / idx.numel()
        d_theta = -d_scores.sum(dim=-1)  # (P, G, 2)
        eye = torch.eye(n_grid, dtype=h.dtype)
        d_aux = {"theta": (d_theta[..., None] * eye[:, None, None, :]).reshape(self.m, n_grid)}
        value = self._dc_minus(h, aux) if minus else self._dc_plus(h, aux)
        return Linearization(
            value=value, d_scores=d_scores.reshape(self.m, h.shape[0]), d_aux=d_aux
        )

    def _parts(self, scores: Tensor, aux: Aux) -> tuple[Tensor, Tensor]:
        """(G, |Î|) means of σ⁺ and σ⁻ of (h − θ_p)/τ per group."""
        h = self._scores(scores)
        theta = self._theta(aux, h)
        codes, n_groups = self.data.code_tensor, len(self.data.keys)
        return self.sigma.group_mean_parts(h, theta, codes, n_groups, self.method)

    def _dc_plus(self, scores: Tensor, aux: Aux) -> Tensor:
        # paper 003, Example D.3 (ρ = 0): lower f⁺ = mean σ⁻, upper f⁺ = mean σ⁺
        a_plus, a_minus = self._parts(scores, aux)
        return self._rows(a_minus, a_plus)

    def _dc_minus(self, scores: Tensor, aux: Aux) -> Tensor:
        # paper 003, Example D.3: lower f⁻ = mean σ⁺ − p, upper f⁻ = mean σ⁻ + p + κ(β − α)
        a_plus, a_minus = self._parts(scores, aux)
        p = self._p.to(a_plus.dtype)
        return self._rows(a_plus - p, a_minus + p + self.band)
