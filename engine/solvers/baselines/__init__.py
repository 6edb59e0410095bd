"""The classic pre- and post-processing baselines, each on an unconstrained model
(`engine.solvers.reference`): reweighing of the training rows (`reweighing`) and group-wise
thresholds with equal selection rates (`group_thresholds`). Their options and cards are in the
`cards_*` modules; this package imports no implementation."""
