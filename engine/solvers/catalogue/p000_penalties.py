"""Cards of paper 000's penalties solvers (filled in by their implementation's author)."""

CARDS = ()
