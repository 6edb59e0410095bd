"""Importing this module registers every solver."""

from engine.solvers import idca, ssg, unconstrained  # noqa: F401
