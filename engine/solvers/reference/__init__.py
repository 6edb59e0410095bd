"""The reference: unconstrained training of the objective, the start of every frontier, and the
model that paper 004's post-processing and the classic baselines (`engine.solvers.baselines`)
start from. Its card is in `cards`; this package imports no implementation."""
