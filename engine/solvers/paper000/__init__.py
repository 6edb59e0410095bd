"""Paper 000, stochastic training of networks under constraints: SSL-ALM and ALM (`alm`),
Stochastic Ghost (`ghost`), the stochastic switching subgradient SSw (`ssw`) and the SGD
baselines, plain (`sgd`) and penalised (`penalised_sgd`). Their options and cards are in the
`cards_*` modules; this package imports no implementation."""
