"""Plain minibatch SGD (paper 000, Sec. 2.4): x ← x − η ∇f(x, ξ) with ξ a uniform batch, the
unconstrained baseline of the stochastic solvers, for any model. Its step takes the gradient of
`batch_terms()`, which the penalised baselines (`engine.solvers.penalised_sgd`) extend with a
penalty."""

from __future__ import annotations

import numpy as np
import torch

from engine.models import Params
from engine.sampling import BatchSampler
from engine.solvers.base import Solver, StepInfo
from engine.solvers.catalogue.paper000 import SGDConfig
from engine.status import StopCode


class SGD(Solver):
    def __init__(self, problem, config: SGDConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        start = problem.init_params(int(rng.integers(2**31)))
        self.params = {k: torch.from_numpy(v.copy()).requires_grad_() for k, v in start.items()}
        train = problem.data.train
        self.sampler = BatchSampler(train.groups, problem.data.n_groups, rng)
        self.t = 0

    def batch_terms(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """This step's objective estimate and the penalty added to it (plain SGD: none), from
        the step's minibatches, drawn here in order."""
        batch = self.sampler.objective(self.config.batch_size)
        return self.problem.batch_objective(self.params, batch.rows), None

    def step(self) -> StepInfo:
        value, penalty = self.batch_terms()
        total = value if penalty is None else value + penalty
        grads = torch.autograd.grad(total, list(self.params.values()))
        with torch.no_grad():
            for param, grad in zip(self.params.values(), grads, strict=True):
                param -= self.config.step * grad
        self.t += 1
        done = self.t >= self.config.iterations
        state = {"batch_loss": float(value.detach())}
        if penalty is not None:
            state["batch_penalty"] = float(penalty.detach())
        return StepInfo(
            iterations=1,
            objective=state["batch_loss"],
            state=state,
            done=done,
            reason=f"all {self.t} iterations done" if done else "",
            stop=StopCode.ITERATION_CAP,
        )

    def candidate(self) -> Params:
        return {k: v.detach().numpy().copy() for k, v in self.params.items()}
