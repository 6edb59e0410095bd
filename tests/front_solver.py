"""A solver that yields a front, for the tests of fronts (no real solver does yet): a grid of
weights λ = (t, 1 − t) over two groups, one model per weight (random weights of the problem's
model), and, as its reported model, one of them or a model of its own. `register` puts its card in the catalogue for one test."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from engine.options import option
from engine.solvers import catalogue
from engine.solvers.base import FrontPoint, Solver, StepInfo
from engine.solvers.card import SolverCard

NAME = "toy_front"


@dataclass(frozen=True)
class ToyFrontConfig:
    models: int = option(3, "models on the front")
    reported: int = option(1, "the model of the front the run reports; -1: a model of its own")


class ToyFront(Solver):
    def __init__(self, problem, config: ToyFrontConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        names = problem.data.group_names
        weights = np.linspace(0.0, 1.0, config.models)
        self.points = [
            FrontPoint(
                f"λ = ({t:g}, {1 - t:g})",
                random_params(problem, i + 1),
                {f"lambda.{names[0]}": float(t), f"lambda.{names[-1]}": float(1 - t)},
            )
            for i, t in enumerate(weights)
        ]
        self.own = random_params(problem, 0)

    def step(self) -> StepInfo:
        params = self.candidate()
        return StepInfo(1, self.problem.loss(self.problem.scores(params)), done=True)

    def candidate(self):
        reported = self.config.reported
        return self.own if reported < 0 else self.points[reported].params

    def front(self) -> list[FrontPoint]:
        return list(self.points)


def random_params(problem, seed: int):
    """Weights of the problem's model, each drawn from N(0, 1)."""
    rng = np.random.default_rng(seed)
    return {k: rng.normal(size=v.shape) for k, v in problem.init_params(seed).items()}


CARD = SolverCard(
    NAME,
    ToyFrontConfig,
    "002",
    "a test solver that yields a front",
    "front_solver:ToyFront",
    constrained=False,
)


def register(monkeypatch) -> None:
    """The catalogue with the toy solver's card, for the test that calls this."""
    monkeypatch.setattr(catalogue, "CARDS", MappingProxyType({**catalogue.CARDS, NAME: CARD}))
