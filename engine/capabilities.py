"""What a run's parts offer and what a solver requires, in one small vocabulary (no torch).

The model, the training objective and the constraint family each offer capabilities; a solver's
card (`engine.solvers.card`) requires some, and the solver can train a combination
exactly when its requirements are included in what the three parts offer together. Every
capability says in words what it means, so that a refusal is a sentence.
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType

from engine.errors import UserError
from engine.models import ModelSpec


class Side(Enum):
    """Which part of a run offers a capability."""

    MODEL = "model"
    OBJECTIVE = "objective"
    FAMILY = "constraint family"


class Capability(Enum):
    """A capability: the side that offers it, and what it means, in words that complete
    "<solver> needs …". Members run model, objective, then family: the order refusals check."""

    AFFINE_SCORES = (Side.MODEL, "scores affine in the model's parameters")
    GRADIENTS = (Side.MODEL, "scores differentiable in the parameters, for backpropagation")
    SMOOTH = (Side.OBJECTIVE, "an objective whose gradient in the scores is Lipschitz")
    CONVEX = (Side.OBJECTIVE, "an objective convex in the scores")
    MINIBATCH_LOSS = (
        Side.OBJECTIVE,
        "an objective that is a mean over samples, so that its value on a uniform minibatch is "
        "an unbiased estimate",
    )
    PAIRWISE_AUC = (
        Side.OBJECTIVE,
        "the square pairwise AUC loss of paper 004, eq. (3), a mean over (positive, negative) pairs",
    )
    SURROGATE = (Side.FAMILY, "differentiable surrogate constraint rows g ≤ 0")
    DC_PARTS = (Side.FAMILY, "difference-of-convex parts f⁺ − f⁻ of the constraint rows")
    MINIBATCH_ROWS = (
        Side.FAMILY,
        "constraint rows whose value on a minibatch with equally many rows of every group is an "
        "unbiased estimate of their value on the data",
    )
    AUC_PAIR_SETS = (
        Side.FAMILY,
        "rows that are sums of square pair losses between sets of samples (paper 004, eqs. 4–5)",
    )
    PENALTY_TERM = (Side.FAMILY, "a penalty term of paper 003's regularisation baseline")
    RATE_MOMENTS = (
        Side.FAMILY,
        "a gap between groups' rates of positive decisions, overall or among the samples of each "
        "label, that fairlearn expresses as a moment: demographic parity, equalized odds or true "
        "positive rate parity",
    )
    SELECTION_RATE_GAPS = (
        Side.FAMILY,
        "a bound on the gaps between groups' overall rates of positive decisions (statistical "
        "parity), which group-wise weights of the training rows or group-wise thresholds act on",
    )
    LOSS_GAP_PENALTY = (
        Side.FAMILY,
        "rows ±(a gap between group losses) − δ, so that Σ[row + δ]₊ sums the absolute gaps",
    )
    # one per quadratic model of paper 003, each with its projection baseline (eqs. 108–110)
    QUADRATIC_GROUP_AUC = (Side.FAMILY, "the quadratic group-AUC rows of paper 003, eq. 102")
    QUADRATIC_INTER = (Side.FAMILY, "the quadratic inter-group AUC rows of paper 003, eq. 105")
    QUADRATIC_INTRA = (Side.FAMILY, "the quadratic intra-group AUC rows of paper 003, eq. 107")

    def __init__(self, side: Side, words: str) -> None:
        self.side = side
        self.words = words

    @property
    def key(self) -> str:
        """The name a listing shows ("dc_parts")."""
        return self.name.lower()


MODEL_KINDS = ("linear", "mlp")  # the values of ModelSpec.kind

# the logistic loss (engine.objectives.LogisticLoss; paper 003, eq. 79; paper 000, eq. 12) is a
# mean over samples of a convex function of the score with derivative bounded by 1 and second
# derivative by 1/4; the squared hinge and the squared loss of paper 002's SVM and ridge
# regression (SquaredHingeLoss, SquaredLoss) are means over samples of convex functions of the
# score with second derivatives at most 2 and exactly 1; the pairwise AUC loss
# (engine.objectives.PairwiseAUCLoss; paper 004, eq. 3) is a convex quadratic in the scores, but
# a mean over pairs, whose minibatch plug-in is biased (spec 004 §5)
_MEAN_OF_CONVEX = frozenset({Capability.SMOOTH, Capability.CONVEX, Capability.MINIBATCH_LOSS})
OBJECTIVES = MappingProxyType(
    {
        "logistic": _MEAN_OF_CONVEX,
        "pairwise_auc": frozenset({Capability.SMOOTH, Capability.CONVEX, Capability.PAIRWISE_AUC}),
        "squared_hinge": _MEAN_OF_CONVEX,
        "squared": _MEAN_OF_CONVEX,
    }
)


def model_offers(model: ModelSpec) -> frozenset[Capability]:
    """Every model has scores differentiable (almost everywhere, for ReLU layers) in its
    parameters; the linear model's, with or without group cross-terms, are affine in them."""
    if model.affine:
        return frozenset({Capability.GRADIENTS, Capability.AFFINE_SCORES})
    return frozenset({Capability.GRADIENTS})


def objective_offers(objective: str) -> frozenset[Capability]:
    """What the training objective named `objective` (`Objective.name`) offers."""
    try:
        return OBJECTIVES[objective]
    except KeyError:
        raise UserError(
            f"unknown objective {objective!r}; the objectives are: {', '.join(OBJECTIVES)}"
        ) from None


def model_kinds_offering(capabilities: frozenset[Capability]) -> list[str]:
    """The kinds of model that offer every one of `capabilities`."""
    return [kind for kind in MODEL_KINDS if capabilities <= model_offers(ModelSpec(kind))]
