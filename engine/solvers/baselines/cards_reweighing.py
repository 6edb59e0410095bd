"""Reweighing (Kamiran & Calders 2012, "Data preprocessing techniques for classification without
discrimination", Sec. 4.2), the pre-processing baseline users know from AIF360: its options, the
unconstrained solver's, and its card. Implementation: `engine.solvers.baselines.reweighing`.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.solvers.card import SolverCard
from engine.solvers.reference.cards import UnconstrainedConfig


@dataclass(frozen=True)
class ReweighingConfig(UnconstrainedConfig):
    """The unconstrained solver's options: reweighing changes the rows' weights, not the fit."""


CARDS = (
    SolverCard(
        "reweighing",
        ReweighingConfig,
        "baselines",
        "reweighing (Kamiran & Calders 2012, Sec. 4.2): each training row of group s and label "
        "c weighs P(s)·P(c)/P(s, c), which makes the label independent of the group in the "
        "weighted data; then the weighted objective is minimised without constraint by L-BFGS",
        "engine.solvers.baselines.reweighing:Reweighing",
        needs={
            C.GRADIENTS: "L-BFGS on the parameters of any model fits the weighted objective",
            C.SMOOTH: "L-BFGS with a strong-Wolfe line search",
            C.MINIBATCH_LOSS: "the weights multiply each row's own loss (Kamiran & Calders "
            "2012, Sec. 4.2: a classifier learnt on the weighted data)",
            C.SELECTION_RATE_GAPS: "its weights remove the dependence of the label on the "
            "group, the statistical parity Kamiran & Calders 2012 aim at (Sec. 2)",
        },
        classifier_only="its weights balance the cells of a binary label and the group "
        "(Kamiran & Calders 2012, Sec. 4.2)",
        kappa_free="κ plays no part: the weights make the label independent of the group in "
        "the weighted training data whatever κ is (Kamiran & Calders 2012, Sec. 4.2), and the "
        "verdict then says whether the model's gap is within κ",
    ),
)
