"""IQRC, the inexact quadratically regularised constrained method (paper 004, Alg. 3; Ma, Lin,
Yang 2020), for weakly convex models such as the 2-layer sigmoid network of App. E.

Stage s solves the proximal subproblem (28),
    min f0(x) + (ρ̂/2)‖x − x̃(s)‖²  s.t.  f_j(x) + (ρ̂/2)‖x − x̃(s)‖² ≤ 1 + κ,
which is convex for ρ̂ above the weak-convexity modulus, by SFLS (Alg. 1) whose SMD oracle (Alg. 2)
carries d_x = (ρ̂/2)‖x − x̃(s)‖²; its output is x̃(s+1). A stage ends when Alg. 1 halts or after
`stage_calls` oracle calls (the paper bounds neither; ours). The next stage starts at x̃(s+1)
with the level r(0) = f0(x̃(s+1)) + margin (feasible x̃ puts f̂* below it) and keeps ỹ and α.

Alg. 3 outputs x̃(R) for R uniform on {0..S}; like App. E.3 the run reports the best validation
AUC within κ on validation among the iterates and oracle outputs (SFLS's selection).
"""

from __future__ import annotations

import numpy as np

from engine.problem import Problem
from engine.solvers.paper004.cards_sfls import IQRCConfig
from engine.solvers.paper004.sfls import SFLS


class IQRC(SFLS):
    """SFLS restarted on proximal subproblems; its state adds the stage s."""

    def __init__(self, problem: Problem, config: IQRCConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.rho = config.rho  # paper 004, Alg. 3 with App. E.3's ρ̂
        self.stage, self.stage_calls = 0, 0

    def _end_oracle_call(self) -> None:
        self.stage_calls += 1
        super()._end_oracle_call()
        if self.stage_calls >= self.config.stage_calls:
            self._halt()

    def _halt(self) -> None:
        """The stage's SFLS has stopped: x̃(s+1) = its output x̄, then the next stage."""
        self.stage += 1
        if self.stage >= self.config.stages:
            self.halted = True
            return
        self.center = self.x_bar.copy()
        self.x = self.center.copy()
        self.r = self._first_level(self.center)
        self.stage_calls = 0

    def _halt_reason(self) -> str:
        return f"all {self.stage} stages done ({len(self.outputs)} oracle calls)"

    def state(self) -> dict[str, float | str]:
        return super().state() | {"stage": float(self.stage)}
