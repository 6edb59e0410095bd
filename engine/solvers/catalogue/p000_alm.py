"""Cards of paper 000's alm solvers (filled in by their implementation's author)."""

CARDS = ()
