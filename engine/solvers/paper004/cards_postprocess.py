"""Paper 004's post-processing baseline (App. E.2, after Kallus & Zhou 2019): its options, the
unconstrained solver's plus App. E.3's grid of maps, and its card. Implementation:
`engine.solvers.paper004.auc_postprocess`.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.errors import UserError
from engine.options import option
from engine.solvers.card import SolverCard
from engine.solvers.reference.cards import UnconstrainedConfig

MAX_MAPS = 1_000_000  # a grid this large already takes minutes on a large validation split


@dataclass(frozen=True)
class PostProcessConfig(UnconstrainedConfig):
    """The unconstrained solver's options (the AUC model of phase 1) and the grid of maps
    ω1·h + ω2 of the protected group's scores: ω1 = 0, step, …, ≤ scale_max and ω2 = shift_min,
    shift_min + step, …, ≤ shift_max."""

    scale_max: float = option(
        5.0,
        "largest ω1 of the grid, from 0 (paper 004, App. E.3: [0, 5]); ω1 ≥ 0 keeps the order "
        "inside the group",
        minimum=0,
    )
    scale_step: float = option(0.05, "step of ω1 on the grid (paper 004, App. E.3: 0.05)", above=0)
    shift_min: float = option(-3.0, "smallest ω2 of the grid (paper 004, App. E.3: −3)")
    shift_max: float = option(3.0, "largest ω2 of the grid (paper 004, App. E.3: 3)")
    shift_step: float = option(0.1, "step of ω2 on the grid (paper 004, App. E.3: 0.1)", above=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.shift_min > self.shift_max:
            raise UserError("the post-processing grid needs shift_min ≤ shift_max")
        maps = (self.scale_max / self.scale_step + 1) * (
            (self.shift_max - self.shift_min) / self.shift_step + 1
        )
        if maps > MAX_MAPS:
            raise UserError(
                f"the post-processing grid has {maps:,.0f} maps; at most "
                f"{MAX_MAPS:,} are allowed (take larger steps)"
            )


CARDS = (
    SolverCard(
        "auc_postprocess",
        PostProcessConfig,
        "004",
        "post-processing baseline (Kallus & Zhou 2019, as paper 004, App. E.2 runs it): "
        "an unconstrained AUC model by L-BFGS, then the protected group's scores mapped "
        "to ω1·h + ω2, (ω1, ω2) on a grid, the best validation AUC among the maps within "
        "κ on validation (App. E.3); two groups; any model",
        "engine.solvers.paper004.auc_postprocess:AUCPostProcess",
        two_groups_only="it maps the scores of one protected group against the other: "
        "paper 004, App. E.2's binary γ",
        needs={
            C.GRADIENTS: "L-BFGS on the parameters of any model trains the AUC model",
            C.PAIRWISE_AUC: "paper 004, App. E.2: post-processing starts from a model "
            "trained for AUC without constraints",
            C.AUC_PAIR_SETS: "paper 004, App. E.2: the map is tuned to satisfy the "
            "AUC-gap constraints (2)",
        },
        auc_variants=("group", "inter"),
        auc_variants_why="paper 004, App. E.2 runs it on Ex. 1 and 2; an increasing "
        "map of one group's scores leaves the within-group AUCs of "
        "Ex. 3 as they are",
    ),
)
