"""Group-wise thresholds with equal selection rates: the post-processing for statistical parity
(after Hardt et al. 2016, deterministic): its options, the unconstrained solver's, and its card.
Implementation: `engine.solvers.baselines.group_thresholds`.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.solvers.card import SolverCard
from engine.solvers.reference.cards import UnconstrainedConfig


@dataclass(frozen=True)
class GroupThresholdsConfig(UnconstrainedConfig):
    """The unconstrained solver's options (the model whose scores are thresholded)."""


CARDS = (
    SolverCard(
        "group_thresholds",
        GroupThresholdsConfig,
        "baselines",
        "equal-selection-rate thresholds: an unconstrained model by L-BFGS, then one threshold "
        "per group, chosen for the most correct training decisions among those whose "
        "groups' selection rates lie within κ of each other (after Hardt et al. 2016)",
        "engine.solvers.baselines.group_thresholds:GroupThresholds",
        needs={
            C.GRADIENTS: "L-BFGS on the parameters of any model trains the scored model",
            C.SMOOTH: "L-BFGS with a strong-Wolfe line search",
            C.SELECTION_RATE_GAPS: "a group's threshold sets its selection rate, and the "
            "thresholds are chosen so that the rates' largest gap is at most κ",
        },
        classifier_only="it thresholds scores into decisions of a binary label",
    ),
)
