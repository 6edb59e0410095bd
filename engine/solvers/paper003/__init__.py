"""Paper 003, partial fairness on a score interval: IDCA with its switching-subgradient inner
solver (`idca`, with the compiled steps of its common case in `idca_kernel` and its frozen part
in `idca_linearization`), the switching subgradient on the non-convex surrogate (`ssg`), the
penalty baseline (`penalty`) and the quadratic-surrogate AUC baselines (`quadratic_baselines`,
projecting by `qcqp_projection`). Their options and cards are in `cards`; this package imports
no implementation."""
