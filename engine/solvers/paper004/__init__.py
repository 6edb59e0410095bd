"""Paper 004, AUC and AUC-based fairness: the stochastic feasible level-set method SFLS (`sfls`)
with its mirror-descent oracle's closed forms (`smd`), IQRC for weakly convex models (`iqrc`),
and the baselines: the proxy-Lagrangian method (`proxy_lagrangian`), the correlation penalty
(`corr_penalty`) and post-processing of an unconstrained AUC model (`auc_postprocess`). Their
options and cards are in the `cards_*` modules; this package imports no implementation."""
