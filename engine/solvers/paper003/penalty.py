"""The regularisation (penalty) baseline of paper 003, App. G.4: plain subgradient descent on

    (114)  f0(w) + (2λ/(β − α)) · max_{p ∈ Î} max_k |mean_k σ(h − θ_p) − p|        over (w, θ)
    (119)  f0(w) + (λ/(β − α)) · max_{k, k'} |c_k − c_k'|,  c_k = min{s_k, β} − min{s_k, α}

with s_k = mean_k σ(h − θ̂). σ, τ, I = [α, β) and the grid Î are those of the run's pSP / pDP
constraint; its κ plays no part in the penalty (it still sets the "inside" grid and the logged
surrogate rows). The step is constant and the last iterate is reported (G.4.2).

Oracle counts (paper 001 spec §5, `engine.oracles.OracleCounts`): a step scores every training
row and takes the gradient of f0 (one objective gradient), evaluates the penalised rates of every
group (one constraint evaluation) and a subgradient of the worst term (one vector–Jacobian
product: one constraint gradient).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.errors import UserError
from engine.models import Params
from engine.oracles import OracleCounts
from engine.problem import Problem
from engine.solvers.base import Solver, StepInfo
from engine.solvers.paper003.cards import PenaltyConfig
from engine.status import StopCode


@dataclass(frozen=True)
class PenaltyValue:
    """The penalty term at a point and one subgradient of it in the scores and in θ."""

    value: float
    d_scores: np.ndarray
    d_theta: np.ndarray


class Penalty(Solver):
    """Subgradient descent on f0 + λ·(surrogate pSP or pDP) (paper 003, App. G.4)."""

    def __init__(self, problem: Problem, config: PenaltyConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.design = problem.design()
        self.bound = problem.bound
        self.psp = problem.constraint.family == "pSP"
        if self.psp and self.bound.grid.size == 0:
            raise UserError(
                "the pSP penalty (114) needs grid points p; with κ = 1 the 'inside' grid is "
                "empty. Use κ < 1 or grid='literal'."
            )
        self.w = problem.init_params()["w"]
        aux = self.bound.aux_init(torch.from_numpy(self.design.matvec(self.w)))
        self.theta = aux["theta"].numpy().copy() if self.psp else np.zeros(0)
        self.t = 0
        self.counts = OracleCounts()

    def penalty(self, h: np.ndarray, theta: np.ndarray) -> PenaltyValue:
        """(114) or (119) at scores h (and θ for pSP), with a subgradient of the worst term."""
        if self.psp:
            return self._psp_penalty(h, theta)
        return self._pdp_penalty(h)

    def _slopes(self, h: np.ndarray, cut: float) -> np.ndarray:
        """d/dh σ((h − cut)/τ) per sample (the ramp's kinks take 1[· > 0] of each part)."""
        plus, minus = self.bound.sigma.part_slopes(torch.from_numpy(h - cut))
        return (plus - minus).numpy()

    def _psp_penalty(self, h: np.ndarray, theta: np.ndarray) -> PenaltyValue:
        bound = self.bound
        with torch.no_grad():
            rates = bound.rates(torch.from_numpy(h), {"theta": torch.from_numpy(theta)}).numpy()
        gaps = rates - bound.grid[None, :]  # (G, |Î|)
        k, p = np.unravel_index(int(np.argmax(np.abs(gaps))), gaps.shape)
        scale = 2.0 * self.config.lam / (bound.beta - bound.alpha)  # paper 003, eq. 114
        sign = np.sign(gaps[k, p])
        idx = bound.data.index[k].numpy()
        slope = sign * scale * self._slopes(h[idx], theta[p]) / idx.size
        d_scores = np.zeros_like(h)
        d_scores[idx] = slope
        d_theta = np.zeros_like(theta)
        d_theta[p] = -slope.sum()
        return PenaltyValue(float(scale * abs(gaps[k, p])), d_scores, d_theta)

    def _pdp_penalty(self, h: np.ndarray) -> PenaltyValue:
        bound = self.bound
        alpha, beta = bound.alpha, bound.beta
        with torch.no_grad():
            s = bound.rates(torch.from_numpy(h)).numpy()
        clipped = np.minimum(s, beta) - np.minimum(s, alpha)  # paper 003, eq. 20
        top, low = int(np.argmax(clipped)), int(np.argmin(clipped))
        scale = self.config.lam / (beta - alpha)  # paper 003, eq. 119
        d_scores = np.zeros_like(h)
        cut = float(bound.spec.threshold)
        for k, sign in ((top, 1.0), (low, -1.0)):
            # d c_k / d s_k = 1[s_k < β] − 1[s_k < α]; d s_k / d h_i = σ'(h_i − θ̂)/n_k
            dc = float(s[k] < beta) - float(s[k] < alpha)
            idx = bound.data.index[k].numpy()
            d_scores[idx] += sign * scale * dc * self._slopes(h[idx], cut) / idx.size
        return PenaltyValue(float(scale * (clipped[top] - clipped[low])), d_scores, np.zeros(0))

    def step(self) -> StepInfo:
        h = self.design.matvec(self.w)
        loss, loss_grad = self.problem.loss_and_grad_scores(h)
        pen = self.penalty(h, self.theta)
        self.counts.tally(
            len(h), objective_gradients=1, constraint_values=1, constraint_gradients=1
        )
        d_w = self.design.rmatvec(loss_grad + pen.d_scores)
        eta = self.config.step
        self.w = self.w - eta * d_w
        self.theta = self.theta - eta * pen.d_theta
        self.t += 1
        done = self.t >= self.config.iterations
        return StepInfo(
            iterations=1,
            objective=loss + pen.value,
            state={"f0": loss, "penalty": pen.value, "step": eta} | self.counts.state(len(h)),
            done=done,
            reason=f"all {self.t} iterations done" if done else "",
            stop=StopCode.ITERATION_CAP,
        )

    def candidate(self) -> Params:
        """The last iterate (paper 003, G.4.2)."""
        params = {"w": self.w.copy()}
        if self.psp:
            params["aux.theta"] = self.theta.copy()
        return params
