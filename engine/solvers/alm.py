"""SSL-ALM (paper 000, Alg. 2, after Huang, Zhang & Alacaoglu 2025) and ALM (the same with μ = 0),
any model.

c(x) ≤ 0 becomes c(x) + s = 0 with slacks s ≥ 0, one per constraint row, so the primal variable
is x = (weights, aux, s) on 𝒳 = Rⁿ × R^m_{≥0}; aux are the family's auxiliary variables (pSP's θ),
stepped with the weights from `bound.aux_init(scores of x_0)`. Start: s_0 = 0, y_0 = 0, z_0 = x_0.
Step k, with an objective batch ξ and two independent constraint batches ζ1, ζ2 (drawn in that
order) and C(x, ζ) = c(x, ζ) + s:
  y_{k+1} = y_k + η C(x_k, ζ1), reset to 0 if ‖y_{k+1}‖₂ ≥ M_y,
  G = ∇f(x_k, ξ) + ∇C(x_k, ζ1)ᵀ (y_{k+1} + ρ C(x_k, ζ2)) + μ (x_k − z_k)        (eq. 10),
  x_{k+1} = proj_𝒳(x_k − τ G),   z_{k+1} = z_k + β (x_k − z_k).
The reported iterate is the last one.
"""

from __future__ import annotations

import numpy as np
import torch

from engine.models import Params
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers.base import Solver, StepInfo
from engine.solvers.catalogue.p000_alm import SSLALMConfig
from engine.status import StopCode

SLACK = "slack"  # the key of s in the primal variables


class SSLALM(Solver):
    """SSL-ALM (paper 000, Alg. 2); ALM is its μ = 0 config. StepInfo.state has the batch loss,
    the duals "dual.<row>", the slacks "slack.<row>" and whether the safeguard reset y."""

    def __init__(self, problem: Problem, config: SSLALMConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        start = problem.init_params(int(rng.integers(2**31)))
        aux = problem.bound.aux_init(torch.from_numpy(problem.scores(start)))
        m = problem.bound.m
        # paper 000, Alg. 2, input: x_0 = (weights, s_0 = 0), y_0 = 0, z_0 = x_0
        self.x = {k: torch.from_numpy(v.copy()) for k, v in start.items()}
        self.x |= {f"aux.{k}": v.detach().clone() for k, v in aux.items()}
        self.x[SLACK] = torch.zeros(m, dtype=torch.float64)
        self.z = {k: v.clone() for k, v in self.x.items()}
        self.y = torch.zeros(m, dtype=torch.float64)
        self.sampler = BatchSampler(problem.data.train.groups, problem.data.n_groups, rng)
        self.t = 0

    def _constraint(self, x: dict[str, torch.Tensor], rows: np.ndarray) -> torch.Tensor:
        """C(x, ζ) = c(x, ζ) + s, the slacked constraint rows on the batch `rows`."""
        aux = {k[4:]: v for k, v in x.items() if k.startswith("aux.")}
        return self.problem.batch_constraint(_weights(x), rows, aux) + x[SLACK]

    def step(self) -> StepInfo:
        cfg = self.config
        # paper 000, Alg. 2, step 1: ξ, then the independent ζ1 and ζ2
        xi = self.sampler.objective(cfg.batch_size).rows
        zeta1 = self.sampler.per_group(cfg.per_group).rows
        zeta2 = self.sampler.per_group(cfg.per_group).rows
        x = {k: v.detach().clone().requires_grad_() for k, v in self.x.items()}
        objective = self.problem.batch_objective(_weights(x), xi)
        c1 = self._constraint(x, zeta1)
        with torch.no_grad():
            c2 = self._constraint(x, zeta2)
            # steps 2–3: dual ascent with the safeguard (the paper-era code's norm test)
            y = self.y + cfg.eta * c1
            reset = bool(torch.linalg.vector_norm(y) >= cfg.dual_bound)
            self.y = torch.zeros_like(y) if reset else y
        # step 4 (eq. 10): G is the gradient of f + (y + ρ c2)ᵀ c1 + (μ/2)‖x − z‖² with y, c2 fixed
        proximal = sum(((x[k] - self.z[k]) ** 2).sum() for k in x)
        surrogate = objective + (self.y + cfg.rho * c2) @ c1 + cfg.mu / 2 * proximal
        grads = dict(zip(x, torch.autograd.grad(surrogate, list(x.values())), strict=True))
        with torch.no_grad():
            for name, value in self.x.items():
                # step 6, with the pre-update x_k; step 5: projected step, slacks clipped at 0
                self.z[name] = self.z[name] + cfg.beta * (value - self.z[name])
                moved = value - cfg.tau * grads[name]
                self.x[name] = moved.clamp_min(0.0) if name == SLACK else moved
        loss = float(objective.detach())
        self.t += 1
        done = self.t >= cfg.iterations
        rows = self.problem.bound.rows
        state: dict[str, float | str] = {"batch_loss": loss, "dual_reset": float(reset)}
        state |= {f"dual.{r}": float(v) for r, v in zip(rows, self.y, strict=True)}
        state |= {f"slack.{r}": float(v) for r, v in zip(rows, self.x[SLACK], strict=True)}
        return StepInfo(
            iterations=1,
            objective=loss,
            state=state,
            done=done,
            reason=f"all {self.t} iterations done" if done else "",
            stop=StopCode.ITERATION_CAP,
        )

    def candidate(self) -> Params:
        """The last iterate's weights and auxiliary variables (paper 000: the last x_K)."""
        return {k: v.detach().numpy().copy() for k, v in self.x.items() if k != SLACK}


def _weights(x: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The model's weights among the primal variables (not the aux variables, not s)."""
    return {k: v for k, v in x.items() if k != SLACK and not k.startswith("aux.")}
