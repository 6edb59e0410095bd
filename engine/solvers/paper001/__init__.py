"""Paper 001, a perturbed Lagrangian for non-smooth constraints: PLADA (`plada`) and its
baselines, the Lagrange-multiplier model (`multiplier_model`), the switching subgradient SSG
(`ssg_hl`) and the inexact proximal point methods IPP-SSG and IPP-ConEx (`ipp`). Their options
and cards are in the `cards_*` modules; this package imports no implementation."""
