"""AUC-gap constraints of paper 004 with the square-loss surrogate ℓ(t) = c1 (t − c2)².

For sets (G1, G1', G2, G2') fixed by the variant (paper 004, App. A, Ex. 1–5) and
L(A, B) := E[ℓ(h_a − h_b)] over a ∈ A, b ∈ B drawn independently, the rows are (eq. 4–6)
    upper:  L(G1', G1) + L(G2, G2') − 1 − κ ≤ 0     (≈ AUC(G1, G1') − AUC(G2, G2') ≤ κ)
    lower:  L(G2', G2) + L(G1, G1') − 1 − κ ≤ 0     (≈ AUC(G2, G2') − AUC(G1, G1') ≤ κ)
L is computed per sample in O(n): L(A, B) = c1 [(m_A − m_B − c2)² + v_A + v_B] with the means m
and population variances v of the scores in each set, which is the pairwise mean exactly (over
all |A|·|B| pairs, a sample with itself included when the sets overlap, as in Ex. 4 and 5).
With more than two groups every pair (k, k') with k < k' is constrained, k playing the protected
group γ = 1 and the rows of k and k' standing for the whole sample in Ex. 4 and 5 ("ζ = 1" is
"ζ = 1 in k or k'"); G2 = G2' = "all" of Ex. 1 and 4, whose exact AUC is ½, is every sample.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from engine.errors import UserError
from engine.fairness.families import options_of

from .base import Aux, BoundConstraint, DCParts, GroupData, pairs_of
from .exact import exact_metric


def square_pair_loss(h_a: Tensor, h_b: Tensor, c1: float, c2: float) -> Tensor:
    """mean over all pairs (a, b) of c1 (h_a − h_b − c2)², in O(|A| + |B|)."""
    d = h_a.mean() - h_b.mean() - c2
    v_a = (h_a - h_a.mean()).square().mean()
    v_b = (h_b - h_b.mean()).square().mean()
    return c1 * (d.square() + v_a + v_b)


def empirical_auc(h_a: np.ndarray, h_b: np.ndarray) -> float:
    """Pr(h_a > h_b) + ½ Pr(h_a = h_b) over all pairs, by sorting."""
    hb = np.sort(h_b)
    left = np.searchsorted(hb, h_a, side="left")
    right = np.searchsorted(hb, h_a, side="right")
    return float((left + 0.5 * (right - left)).sum() / (h_a.size * h_b.size))


class AUCGap(BoundConstraint):
    """|AUC(G1, G1') − AUC(G2, G2')| ≤ κ through paper 004's square-loss surrogate.

    Options: variant ∈ AUC_GAP_VARIANTS (paper 004, App. A: "group", "inter", "intra" are
    Ex. 1, 2, 3; "average_positive" and "average_negative" the two gaps of Ex. 4; "bpsn" Ex. 5),
    c1 > 0 and c2 > 0 (paper 004 uses c2 = 1 and c1 ∈ {0.5, 1}). The rows are convex in the
    scores.
    """

    family = "auc_gap"
    needs_labels = True
    label_cells = True

    def _setup(self) -> None:
        options = options_of(self.spec)
        self._set("variant", options.variant)
        self._set("c1", float(options.c1))
        self._set("c2", float(options.c2))
        self._set("pairs", pairs_of(len(self.data.keys)))
        self._set("sets", [_sets(self.data, self.variant, k, j) for k, j in self.pairs])

    def _check_batch(self, data: GroupData) -> None:
        super()._check_batch(data)
        for k, j in pairs_of(len(data.keys)):
            if any(s is not None and s.numel() == 0 for s in _sets(data, self.variant, k, j)):
                raise UserError(
                    f"auc_gap ({self.variant}): groups {data.names[k]!r} and {data.names[j]!r} "
                    "need both positive and negative samples."
                )

    def _row_names(self) -> list[str]:
        names = self.data.names
        return [
            f"AUC-{self.variant}[{names[i]},{names[j]}]:{s}"
            for i, j in self.pairs
            for s in ("upper", "lower")
        ]

    def _l(self, h: Tensor, a: Tensor | None, b: Tensor | None) -> Tensor:
        ha = h if a is None else h[a]
        hb = h if b is None else h[b]
        return square_pair_loss(ha, hb, self.c1, self.c2)

    def _convex(self, scores: Tensor) -> Tensor:
        h = self._scores(scores)
        out = []
        for g1, g1p, g2, g2p in self.sets:
            out.append(self._l(h, g1p, g1) + self._l(h, g2, g2p))  # paper 004, eq. 4
            out.append(self._l(h, g2p, g2) + self._l(h, g1, g1p))  # paper 004, eq. 5
        return torch.stack(out) if out else h.new_zeros(0)

    def surrogate(self, scores: Tensor, aux: Aux | None = None) -> Tensor:
        return self._convex(scores) - 1.0 - self.spec.kappa  # paper 004, eq. 6

    def aucs(self, scores: Tensor | np.ndarray) -> np.ndarray:
        """(pairs, 2) exact AUC(G1, G1') and AUC(G2, G2') per pair (AUC(all, all) = ½)."""
        h = self._scores(scores).detach().to(torch.float64).numpy()
        out = []
        for g1, g1p, g2, g2p in self.sets:
            first = empirical_auc(h[g1.numpy()], h[g1p.numpy()])
            second = 0.5 if g2 is None else empirical_auc(h[g2.numpy()], h[g2p.numpy()])
            out.append((first, second))
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)

    def exact_rows(self, scores: Tensor | np.ndarray, aux: Aux | None = None) -> np.ndarray:
        """Rows of problem (2) of paper 004 with the exact AUCs (ties count ½)."""
        auc = self.aucs(scores)
        gap = auc[:, 0] - auc[:, 1]
        return np.stack([gap - self.spec.kappa, -gap - self.spec.kappa], axis=1).reshape(-1)

    def exact(self, scores: np.ndarray | Tensor) -> float:
        fn = exact_metric(f"auc_gap:{self.variant}")
        s = self._numpy(scores)
        if self.variant == "group":
            return float(fn(s, self.data.codes))
        return float(fn(s, self.data.codes, self.data.positive.astype(np.int64)))

    @property
    def dc(self) -> DCParts:
        return DCParts(plus_fn=self._dc_plus, minus_fn=self._dc_minus)

    def _dc_plus(self, scores: Tensor, aux: Aux) -> Tensor:
        return self._convex(scores)

    def _dc_minus(self, scores: Tensor, aux: Aux) -> Tensor:
        h = self._scores(scores)
        return h.new_full((self.m,), 1.0 + self.spec.kappa) + 0.0 * h.sum()


def _sets(
    data: GroupData, variant: str, k: int, j: int
) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
    """(G1, G1', G2, G2') as index tensors for the pair (k, j), k as the protected group γ = 1;
    None stands for all samples."""
    if variant == "group":
        return data.index[k], data.index[j], None, None  # Ex. 1: G2 = G2' = all samples
    pos = torch.as_tensor(data.positive)

    def cell(group: int, positive: bool) -> Tensor:
        idx = data.index[group]
        return idx[pos[idx] == positive]

    def label(positive: bool) -> Tensor:  # {z | ζ = ±1}: both groups of the pair
        return torch.cat([cell(k, positive), cell(j, positive)])

    if variant == "inter":  # Ex. 2 (xAUC)
        return cell(k, True), cell(j, False), cell(j, True), cell(k, False)
    if variant == "intra":  # Ex. 3
        return cell(k, True), cell(k, False), cell(j, True), cell(j, False)
    if variant in ("average_positive", "average_negative"):  # paper 004, App. A, Ex. 4
        positive = variant == "average_positive"
        return cell(k, positive), label(positive), None, None
    return label(True), cell(k, False), cell(k, True), label(False)  # Ex. 5: BPSN, BNSP
