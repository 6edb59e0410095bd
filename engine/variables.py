"""A solver's primal variables as one flat vector of named blocks, each with its kind and box.

The model's weights are one block; a constraint family declares its auxiliary variables (pSP's
shared thresholds θ, paper 003 eq. 15) and a solver adds its own (SSL-ALM's slacks s ≥ 0, paper
000 Alg. 2). Declaring kind and box lets every solver treat them alike: a projected step is
`layout.project(x − τ·layout.descent(g))`, with no variable read by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np


class Kind(Enum):
    """How a solver moves a block: down its gradient (weights, θ, a level such as a CVaR
    threshold, slacks) or up it (the inner variable of a min–max formulation)."""

    WEIGHTS = "weights"
    MINIMISED = "minimised"
    MAXIMISED = "maximised"
    SLACK = "slack"
    LEVEL = "level"


@dataclass(frozen=True)
class Box:
    """lower ≤ each entry ≤ upper."""

    lower: float = -math.inf
    upper: float = math.inf

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.lower) or math.isfinite(self.upper)


UNBOUNDED = Box()
NONNEGATIVE = Box(lower=0.0)


@dataclass(frozen=True)
class Block:
    name: str
    kind: Kind
    box: Box
    shape: tuple[int, ...]
    start: int

    @property
    def stop(self) -> int:
        return self.start + int(np.prod(self.shape))


class Layout:
    """Named blocks laid end to end; `x[layout[name]]` is a block's entries."""

    def __init__(self) -> None:
        self.blocks: dict[str, Block] = {}
        self.size = 0
        self._built = False

    def add(self, name: str, kind: Kind, shape: tuple[int, ...], box: Box = UNBOUNDED) -> Block:
        if name in self.blocks:
            raise ValueError(f"a block named {name!r} is already laid out")
        block = Block(name, kind, box, tuple(shape), self.size)
        self.blocks[name] = block
        self.size = block.stop
        self._built = False
        return block

    def __getitem__(self, name: str) -> slice:
        block = self.blocks[name]
        return slice(block.start, block.stop)

    def project(self, x: np.ndarray) -> np.ndarray:
        """The nearest point of the boxes (in place when any block is bounded)."""
        if not self._built:
            self._build()
        if self._bounded:
            np.clip(x, self._lower, self._upper, out=x)
        return x

    def descent(self, gradient: np.ndarray) -> np.ndarray:
        """The direction a descent–ascent step subtracts: the gradient, negated on the
        maximised blocks."""
        if not self._built:
            self._build()
        return gradient if self._sign is None else self._sign * gradient

    def _build(self) -> None:
        lower, upper, sign = np.empty(self.size), np.empty(self.size), np.ones(self.size)
        for block in self.blocks.values():
            part = slice(block.start, block.stop)
            lower[part], upper[part] = block.box.lower, block.box.upper
            if block.kind is Kind.MAXIMISED:
                sign[part] = -1.0
        self._bounded = any(b.box.bounded for b in self.blocks.values())
        self._lower, self._upper = lower, upper
        self._sign = sign if (sign < 0).any() else None
        self._built = True
