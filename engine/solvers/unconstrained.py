"""Unconstrained logistic regression (or MLP): the reference point of every frontier."""

from __future__ import annotations

import numpy as np
import scipy.optimize
import torch

from engine.models import Params
from engine.solvers.base import Solver, StepInfo
from engine.solvers.catalogue.paper003 import UnconstrainedConfig
from engine.status import StopCode


class Unconstrained(Solver):
    """min f0 by L-BFGS on the flattened parameters (the model's own gradient)."""

    def __init__(self, problem, config: UnconstrainedConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        params = problem.init_params(int(rng.integers(2**31)))
        self.names = list(params)
        self.shapes = [params[k].shape for k in self.names]
        self.x = np.concatenate([params[k].ravel() for k in self.names])
        self.done_iterations = 0

    def _unflatten(self, x: np.ndarray) -> Params:
        out, start = {}, 0
        for name, shape in zip(self.names, self.shapes, strict=True):
            size = int(np.prod(shape))
            out[name] = x[start : start + size].reshape(shape)
            start += size
        return out

    def _value_and_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        problem, l2 = self.problem, self.config.l2
        if problem.model.affine:
            loss, grad_h = problem.loss_and_grad_scores(problem.design().matvec(x))
            grad = problem.design().rmatvec(grad_h)
            return loss + 0.5 * l2 * x @ x, grad + l2 * x
        params = {
            k: torch.from_numpy(v.copy()).requires_grad_() for k, v in self._unflatten(x).items()
        }
        h = problem.torch_scores(params)
        zeta = torch.from_numpy(problem.signed_labels())
        value = torch.nn.functional.softplus(-zeta * h).mean()
        value.backward()
        grad = np.concatenate([params[k].grad.numpy().ravel() for k in self.names])
        return float(value.detach()) + 0.5 * l2 * x @ x, grad + l2 * x

    def step(self) -> StepInfo:
        return self.advance(self.config.chunk)

    def advance(self, max_iterations: int) -> StepInfo:
        """At most `max_iterations` L-BFGS iterations (and `chunk`), so a run's iteration budget
        is kept."""
        budget = min(
            self.config.chunk, max_iterations, self.config.max_iterations - self.done_iterations
        )
        result = scipy.optimize.minimize(
            self._value_and_grad, self.x, jac=True, method="L-BFGS-B",
            options={"maxiter": budget, "ftol": self.config.tolerance, "gtol": 1e-10},
        )  # fmt: skip
        self.x = result.x
        self.done_iterations += max(int(result.nit), 1)
        converged = result.nit < budget
        capped = not converged and self.done_iterations >= self.config.max_iterations
        return StepInfo(
            iterations=max(int(result.nit), 1),
            objective=float(result.fun),
            state={"gradient_norm": float(np.linalg.norm(result.jac))},
            done=converged or capped,
            reason="L-BFGS converged" if converged else "L-BFGS iteration limit reached",
            stop=StopCode.CONVERGED if converged else StopCode.ITERATION_CAP,
        )

    def candidate(self) -> Params:
        return self._unflatten(self.x.copy())
