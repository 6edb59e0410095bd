"""The penalised SGD baselines of paper 000: regularised SGD (eq. 13, Exp. 2) and SGD-Fairret
(Sec. 4.2.1, Exp. 1), their options with the paper's defaults, and their cards. Both are SGD
(`SGDConfig`) with a penalty added to the batch loss. Implementations:
`engine.solvers.paper000.penalised_sgd`."""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.options import option
from engine.solvers.card import SolverCard
from engine.solvers.paper000.cards_sgd import SGDConfig


@dataclass(frozen=True)
class SGDPenaltyConfig(SGDConfig):
    per_group: int = option(
        8,
        "rows of every group per group-loss batch (paper 000's code: batch_size of each group)",
        minimum=1,
    )
    penalty: float = option(
        0.4, "penalty weight λ of eq. 13 (paper 000, Exp. 2, Table 12: 0.4)", minimum=0
    )


@dataclass(frozen=True)
class SGDFairretConfig(SGDConfig):
    step: float = option(
        0.05, "learning rate (paper 000, Table 8: 0.05; fairret.yaml's setting differs)", above=0
    )
    batch_size: int = option(
        8, "rows per batch, split equally among the groups (paper 000's code: bs 8)", minimum=1
    )
    multiplier: float = option(
        3.0,
        "weight of the accuracy-equality penalty (paper 000, Table 8: 3; fairret.yaml: 0.5)",
        minimum=0,
    )


CARDS = (
    SolverCard(
        "sgd_penalty",
        SGDPenaltyConfig,
        "000",
        "minibatch SGD on the loss + λ Σ_i |ℓ_i − mean_j ℓ_j|, the group losses on J rows "
        "of every group (paper 000, eq. 13, Exp. 2 baseline); any model",
        "engine.solvers.paper000.penalised_sgd:SGDPenalty",
        needs={
            C.GRADIENTS: "it steps along backpropagated gradients",
            C.MINIBATCH_LOSS: "paper 000, Exp. 2: the loss is taken on a batch",
            C.MINIBATCH_ROWS: "paper 000, Exp. 2: the group losses are taken on J rows "
            "of every group",
            C.LOSS_GAP_PENALTY: "paper 000, eq. 13: its penalty",
        },
    ),
    SolverCard(
        "sgd_fairret",
        SGDFairretConfig,
        "000",
        "minibatch SGD on group-balanced batches, loss + multiplier · Fairret's "
        "NormLoss(Accuracy) (paper 000, Exp. 1 baseline); its own criterion is accuracy "
        "equality, so a chosen constraint is only reported; any model",
        "engine.solvers.paper000.penalised_sgd:SGDFairret",
        constrained=False,
        needs={
            C.GRADIENTS: "it steps along backpropagated gradients",
            C.MINIBATCH_LOSS: "paper 000, Exp. 1: it steps on group-balanced batches",
        },
        classifier_only="its penalty, Fairret's NormLoss(Accuracy), compares the "
        "groups' accuracies on 0/1 labels (paper 000, Exp. 1)",
    ),
)
