"""Paper 002, Pareto-efficient group losses: the bilevel badr methods (`badr`, `badr_implicit`)
on the group losses and their exact lower level (`badr_lower`) under the upper level Φ_β
(`badr_upper`), the reference points on the group-loss front (`badr_references`) and the runs
that yield a front (`badr_fronts`). Their options and cards are in `cards`; this package imports
no implementation."""
