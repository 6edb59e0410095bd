"""Importing this module registers every solver."""

from engine.solvers import idca, unconstrained  # noqa: F401
