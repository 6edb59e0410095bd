"""Partial demographic parity (pDP) as model (21) of paper 003.

With s_k = mean_k σ((h − θ̂)/τ) and the clipped rate c_k = min{s_k, β} − min{s_k, α}
(Lemma 5.2, eq. 20), each pair of groups (k, k') gives two rows:
    upper:  c_k − c_k' − κ(β − α) ≤ 0        lower:  c_k' − c_k − κ(β − α) ≤ 0
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .base import (
    Aux,
    BoundConstraint,
    DCParts,
    GroupData,
    check_rank_band,
    interval_of,
    pair_rows,
    pairs_of,
)
from .exact import exact_metric
from .surrogates import Surrogate


class PDPConstraint(BoundConstraint):
    """pDP ≤ κ on I at the decision threshold θ̂ = spec.threshold (paper 003, eq. 13, 21)."""

    family = "pDP"

    def _setup(self) -> None:
        alpha, beta = interval_of(self.spec)
        self._set("alpha", alpha)
        self._set("beta", beta)
        self._set("band", self.spec.kappa * (beta - alpha))
        self._set("sigma", Surrogate(self.spec.surrogate, self.spec.temperature))
        self._set("pairs", pairs_of(len(self.data.keys)))

    def _check_data(self, data: GroupData) -> None:
        super()._check_data(data)
        check_rank_band(self.band, data, "pDP", strict=False)

    def _row_names(self) -> list[str]:
        names = self.data.names
        return [
            f"pDP[{names[i]},{names[j]}]:{side}"
            for i, j in self.pairs
            for side in ("upper", "lower")
        ]

    def _pair_rows(self, table: Tensor) -> Tensor:
        """Rows from a (G, G) table of "k over k'" values: upper (k, k') is [k, k'], lower [k', k]."""
        return pair_rows(table, self.pairs)

    def _theta_hat(self, like: Tensor) -> Tensor:
        return torch.full((1,), float(self.spec.threshold), dtype=like.dtype)

    def rates(self, scores: Tensor) -> Tensor:
        """(G,) surrogate positive rates s_k."""
        h = self._scores(scores)
        t = self._theta_hat(h)
        return torch.cat([self.sigma.mean(hk, t) for hk in self._by_group(h)])

    def _clipped_gaps(self, s: Tensor) -> Tensor:
        c = torch.clamp(s, max=self.beta) - torch.clamp(s, max=self.alpha)  # paper 003, eq. 20
        return c[:, None] - c[None, :] - self.band

    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        return self._pair_rows(self._clipped_gaps(self.rates(scores)))

    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """Rows with σ replaced by 1[h > θ̂]: exactly the condition of Lemma 5.2 (eq. 20)."""
        h = self._scores(scores).detach().to(torch.float64)
        s = torch.stack([(hk > self.spec.threshold).to(h.dtype).mean() for hk in self._by_group(h)])
        return self._pair_rows(self._clipped_gaps(s)).numpy()

    def exact(self, scores: np.ndarray | Tensor) -> float:
        return float(
            exact_metric("pDP")(
                self._numpy(scores),
                self.data.codes,
                self.alpha,
                self.beta,
                threshold=float(self.spec.threshold),
            )
        )

    @property
    def dc(self) -> DCParts:
        return DCParts(plus_fn=self._dc_plus, minus_fn=self._dc_minus)

    def _m(self, scores: Tensor) -> tuple[Tensor, Tensor]:
        """M_k^c = max{A⁻_k + c, A⁺_k} for c = α and c = β (paper 003, eq. 84 with the mean)."""
        h = self._scores(scores)
        t = self._theta_hat(h)
        parts = [self.sigma.mean_parts(hk, t) for hk in self._by_group(h)]
        a_plus = torch.cat([a for a, _ in parts])
        a_minus = torch.cat([b for _, b in parts])
        return torch.maximum(a_minus + self.alpha, a_plus), torch.maximum(
            a_minus + self.beta, a_plus
        )

    def _dc_plus(self, scores: Tensor, aux: Aux) -> Tensor:
        # row (k, k'): f⁺ = M_k^α + M_k'^β  (spec 003 §2.6, from eq. 84 / Example D.5)
        m_alpha, m_beta = self._m(scores)
        return self._pair_rows(m_alpha[:, None] + m_beta[None, :])

    def _dc_minus(self, scores: Tensor, aux: Aux) -> Tensor:
        # row (k, k'): f⁻ = M_k^β + M_k'^α + κ(β − α)
        m_alpha, m_beta = self._m(scores)
        return self._pair_rows(m_beta[:, None] + m_alpha[None, :] + self.band)
