"""Unconstrained training of the problem's objective, with a linear model or an MLP: logistic
regression by default, the squared-hinge SVM, or ridge regression for a real-valued label; the
reference point of every frontier. Its l2 penalty covers every parameter, the intercept too
(sklearn's Ridge and paper 002's μ leave the intercept out, spec 002 §1).

Oracle counts (paper 001 spec §5, `engine.oracles.OracleCounts`): every evaluation of f0 comes
with its gradient over all training rows, so it counts one objective gradient and one data pass;
L-BFGS's line search makes one or more per iteration.
"""

from __future__ import annotations

import numpy as np

from engine.models import Params
from engine.oracles import OracleCounts
from engine.solvers.base import Solver, StepInfo
from engine.solvers.lbfgs import LBFGS
from engine.solvers.reference.cards import UnconstrainedConfig
from engine.status import StopCode


class Unconstrained(Solver):
    """min f0 (+ l2/2‖x‖²) by L-BFGS on the flattened parameters.

    The L-BFGS keeps its curvature pairs between `advance` calls, so the driver can take the
    iterations in chunks (for logging, budgets and cancel) without restarting the method: on
    Adult with cross-terms, restarting scipy's L-BFGS every 25 iterations left the loss 2.5e-4
    above the optimum after 1,000 iterations, where one uninterrupted run converges.
    """

    def __init__(self, problem, config: UnconstrainedConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.network = problem.network
        start = self.network.flatten(problem.init_params(int(rng.integers(2**31))))
        self.lbfgs = LBFGS(self._value_and_grad, start, tolerance_change=config.tolerance)
        self.counts = OracleCounts()

    def loss_and_grad_scores(self, h: np.ndarray) -> tuple[float, np.ndarray]:
        """The loss minimised, and its gradient in the training scores `h`: the problem's
        objective here; a solver that weighs the rows (reweighing) says otherwise."""
        return self.problem.loss_and_grad_scores(h)

    def _value_and_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        problem, l2 = self.problem, self.config.l2
        if problem.model.affine:  # the design's sparse products beat a dense network pass
            loss, grad_h = self.loss_and_grad_scores(problem.design().matvec(x))
            grad = problem.design().rmatvec(grad_h)
        else:
            h, tape = self.network.forward(x, problem.features("train"))
            loss, grad_h = self.loss_and_grad_scores(h)
            grad = self.network.backward(x, tape, grad_h)
        self.counts.tally(len(grad_h), objective_gradients=1)
        return loss + 0.5 * l2 * x @ x, grad + l2 * x

    def step(self) -> StepInfo:
        return self.advance(self.config.chunk)

    def advance(self, max_iterations: int) -> StepInfo:
        """At most `max_iterations` L-BFGS iterations (and `chunk`), so a run's iteration budget
        is kept."""
        lbfgs = self.lbfgs
        budget = min(
            self.config.chunk, max_iterations, self.config.max_iterations - lbfgs.iterations
        )
        progress = lbfgs.run(budget)
        converged = progress.converged
        capped = not converged and lbfgs.iterations >= self.config.max_iterations
        return StepInfo(
            iterations=max(progress.iterations, 1),
            objective=float(lbfgs.value),
            state={"gradient_norm": float(np.linalg.norm(lbfgs.grad))}
            | self.counts.state(len(self.problem.data.train)),
            done=converged or capped,
            reason="L-BFGS converged" if converged else "L-BFGS iteration limit reached",
            stop=StopCode.CONVERGED if converged else StopCode.ITERATION_CAP,
        )

    def candidate(self) -> Params:
        return self.network.unflatten(self.lbfgs.x)
