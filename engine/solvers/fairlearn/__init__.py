"""fairlearn's mitigators, run by fairlearn itself, as comparators: its reductions
ExponentiatedGradient and GridSearch (`fairlearn_reductions`) and ThresholdOptimizer
(`fairlearn_threshold`), each stepped one base fit at a time under the shared driver
(`fairlearn_steps`). Their options and cards are in `cards`; this package imports no
implementation (and so not fairlearn)."""
