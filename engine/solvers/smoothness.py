"""Step sizes from the problem's own smoothness.

A constant step that a paper (or our own tuning on Adult) gives in absolute units suits only the
scale it was chosen on: on the standardised design X̃ = [1, X] with group cross-terms, ∇f0's
Lipschitz constant L_F = (the objective's curvature in the scores) · λ_max(X̃ᵀX̃) is 1.9 on Adult
by sex but 7.9 on Communities and Crime (552 correlated columns), where the Adult step 0.5 is
four times beyond the 2/L_F at which gradient steps stop decreasing f0. A solver whose card
leaves such a step unset takes 1/(2L_F) from here: the classical safe step of gradient descent
on an L_F-smooth objective, halved because the constraint steps share the path. For a model
whose scores are not affine in its parameters (a network) L_F has no such closed form, and the
card's fallback applies.
"""

from __future__ import annotations

from engine.numerics import top_eigenvalue
from engine.problem import Problem

POWER_ITERATIONS = 100  # at most: each is one X̃v and one X̃ᵀr pass over the training rows
POWER_TOLERANCE = 1e-6  # the relative change of λ_max's estimate that ends them


def objective_lipschitz(problem: Problem) -> float | None:
    """L_F of ∇f0 in a linear model's weights on the training rows: the objective's curvature
    bound in the scores times λ_max(X̃ᵀX̃) (by power iteration); None when the model's scores
    are not affine in its parameters."""
    if not problem.model.affine:
        return None
    design = problem.design()
    top = top_eigenvalue(
        lambda v: design.rmatvec(design.matvec(v)),
        design.shape[1],
        POWER_ITERATIONS,
        POWER_TOLERANCE,
    )
    return problem.objective.curvature(problem.data.train.y) * top


def safe_step(problem: Problem, fallback: float) -> float:
    """1/(2L_F) on the problem (the module's text), or `fallback` where L_F is unknown or 0."""
    lipschitz = objective_lipschitz(problem)
    return fallback if not lipschitz else 0.5 / lipschitz
