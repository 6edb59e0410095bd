"""Cards of paper 000's ssw solvers (filled in by their implementation's author)."""

CARDS = ()
