"""The square pair loss of paper 004 over every pair of two sets of scores, in O(|A| + |B|).

Paper 004 replaces the indicator of a mis-ordered pair by ℓ(t) = c1 (t − c2)² (Sec. 2). Averaged
over all pairs (a, b) ∈ A × B, it has the moment form (spec 004 §5)

    L(A, B) = mean_{a,b} c1 (h_a − h_b − c2)² = c1 [(m_A − m_B − c2)² + v_A + v_B],

with m and v the mean and (population) variance of each set's scores, so no pair is ever formed.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


def square_pair_loss(
    h_a: np.ndarray, h_b: np.ndarray, c1: float, c2: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """L(A, B) and its gradients in h_a and h_b.

    ∂L/∂h_a = 2c1 (h_a − m_B − c2)/|A| = 2c1 [(h_a − m_A) + (m_A − m_B − c2)]/|A|, and likewise
    ∂L/∂h_b = 2c1 [(h_b − m_B) − (m_A − m_B − c2)]/|B|: the mean over b of the pair derivatives.
    """
    m_a, m_b = float(np.mean(h_a)), float(np.mean(h_b))
    d = m_a - m_b - c2
    centred_a, centred_b = h_a - m_a, h_b - m_b
    value = c1 * (d * d + float(np.mean(centred_a**2)) + float(np.mean(centred_b**2)))
    d_a = (2.0 * c1 / len(h_a)) * (centred_a + d)
    d_b = (2.0 * c1 / len(h_b)) * (centred_b - d)
    return value, d_a, d_b


class Lemma1Terms(NamedTuple):
    """Per-sample F and G of paper 004, Lemma 1 (eq. 8), and their derivatives: arrays of shape
    (samples, terms), one column per pair of sets (G, G')."""

    F: np.ndarray
    G: np.ndarray
    dF_dh: np.ndarray
    dG_dh: np.ndarray
    dF_da: np.ndarray
    dF_db: np.ndarray


def lemma1_terms(
    h: np.ndarray,
    weight_a: np.ndarray,
    weight_b: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    c1: np.ndarray,
    c2: np.ndarray,
) -> Lemma1Terms:
    """F_{G,G'}(w, a, b; z) and G_{G,G'}(w; z) of paper 004, eq. (8), for every sample z and
    every term, with G's factor 2√c1 instead of the printed 2c1 (spec 004 §1: only then does
    min_{a,b} max_α E[F + αG − α²] equal L(G, G') when c1 ≠ 1).

    `weight_a` and `weight_b` (samples, terms) are I_G(z)/p_G and I_G'(z)/p_G'; a, b, c1, c2 have
    one entry per term. The mean over the samples of F + αG − α² is then, at a = E[h|G],
    b = E[h|G'], α = √c1(E[h|G] − E[h|G']), the moment form `square_pair_loss`.
    """
    h = h[:, None]
    da, db = h - a, h - b
    F = (
        c1 * c2**2
        - 2 * c1 * c2 * h * weight_a
        + 2 * c1 * c2 * h * weight_b
        + c1 * da**2 * weight_a
        + c1 * db**2 * weight_b
    )
    dG_dh = 2 * np.sqrt(c1) * (weight_a - weight_b)
    return Lemma1Terms(
        F=F,
        G=h * dG_dh,
        dF_dh=2 * c1 * ((da - c2) * weight_a + (db + c2) * weight_b),
        dG_dh=dG_dh,
        dF_da=-2 * c1 * da * weight_a,
        dF_db=-2 * c1 * db * weight_b,
    )
