"""Cards of paper 000's Stochastic Ghost solver (filled in by its implementation's author)."""

CARDS = ()
