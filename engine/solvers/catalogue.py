"""Importing this module registers every solver."""

from engine.solvers import idca, penalty, quadratic_baselines, ssg, unconstrained  # noqa: F401
