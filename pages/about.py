"""About: what pSP, pDP, κ and I mean, in words and formulas, and where they come from."""

import streamlit as st

from pages.shared.layout import compact_page

compact_page()
st.title("About FairFront")
st.markdown(
    """
FairFront trains a classifier while holding a **fairness constraint**, and shows what each level
of fairness costs in accuracy. Its centre is *partial* fairness: asking for equal treatment of
groups only where it matters, for example among the people each group ranks highest.

### Ranks counted from the top, in each group
A model gives every person a score *h*. Within group *k*, the **rank from the top** of a score θ
is the share of the group scoring above it:
"""
)
st.latex(r"\bar F_k(\theta) = \Pr\big(h > \theta \mid \gamma = k\big)")
st.markdown(
    """
An **interval** I = [α, β) of ranks picks, in each group separately, the people ranked between α
and β from the top: I = [0, 20 %) is "each group's top 20 %", I = [70 %, 100 %] its bottom 30 %.

### Partial statistical parity (pSP)
Within I, the score distributions of any two groups should be alike. pSP measures the largest
gap, over every threshold θ, between the groups' shares above θ among their I-slices:
"""
)
st.latex(
    r"\mathrm{pSP}^I_{k,k'} = \max_\theta \frac{\big|\,\mathrm{clip}(\bar F_k(\theta), \alpha, "
    r"\beta) - \mathrm{clip}(\bar F_{k'}(\theta), \alpha, \beta)\big|}{\beta - \alpha}"
)
st.markdown(
    """
With I = [0, 1] this is the Kolmogorov–Smirnov distance between the groups' score distributions
(full statistical parity). pSP is a *violation*: 0 is perfectly fair, and tables show it beside
κ. Only the frontier's horizontal axis turns it around, as **fairness = 1 − pSP** (labelled so),
so that fairer models lie to the right.

### Partial demographic parity (pDP)
The same comparison at the decision threshold θ̂ only: within I, do the groups have the same share
of positive decisions?
"""
)
st.latex(
    r"\mathrm{pDP}^I_{k,k'} = \frac{\big|\,\mathrm{clip}(\bar F_k(\hat\theta), \alpha, \beta) - "
    r"\mathrm{clip}(\bar F_{k'}(\hat\theta), \alpha, \beta)\big|}{\beta - \alpha}"
)
st.markdown(
    """
### The tolerance κ
Training asks for pSP ≤ κ (or pDP ≤ κ) on the training data, with κ between 0 and 1: κ = 0.05
allows a 5 % gap within I. On the rank scale the allowed band is κ(β − α), so a narrow interval
with a small κ is a very tight demand, and the app warns when it is finer than a few people of the
smallest group.

The other constraint families (DP, EO and EOpp gaps, group-loss gaps, AUC gaps, ...) hold their
own quantity to κ; they compare whole groups and do not use I, and the pages name the quantity
("EO gap ≤ κ") wherever a run of that family is shown.

### Holding κ on the training data
A solver cannot hold the exact pSP to κ directly: it is a count of people above thresholds, with
no useful gradient. IDCA holds a **surrogate** instead, paper 003's model (15): at each of ten
rank levels p of I (the grid Î) a shared threshold must put every group's share above it
within [p, p + κ(β − α)], each share computed with a ramp of width 1 in place of the count, each
row allowed to exceed its bound by the solver's tolerance ε. A model can hold the surrogate and
still exceed κ on the exact pSP: between two levels of Î the groups' ranks can drift apart, the
ramp counts people near a threshold by halves, and ε adds up to 2ε/(β − α) (paper 003, App. F).
On Adult (by sex, I = [5 %, 30 %), κ = 0.05) the paper's surrogate gives an exact training pSP
of 0.073.

So by default a run **holds κ on the training data**: when its surrogate holds and the exact
value on the training data does not, the surrogate itself is refined, each solve starting from
the last model — the grid made as dense as half a band and the ranks where the exact gap is
largest added to it, the ramp narrowed to the spread of the model's own scores, the solver's ε
lowered where the band is narrow — and then the inner tolerance κ′ < κ the surrogate is held to
is tightened, until the exact training value is at most κ. On the same Adult run that takes four
solves and ends at an exact training pSP of 0.048. Holding costs about one more solve: the
solves after the solver's own share as many iterations as it took. The solves are shown as a
table beside the run. A run that cannot hold κ within its budget and solves says so and does not end
"converged". **Hold κ on: off** gives back each paper's plain algorithm, solved once;
**train + validation** also tightens κ′ while the exact value on validation exceeds κ — but
validation is a sample, and on Adult's validation split pSP cannot be told apart below about
0.12, so chasing it there selects models by that sample's noise.

Why **train** is the default: on synthetic census draws whose population value is known
(`bench/verdict_calibration.py`, pSP on I = [5 %, 30 %), 10,000 training rows, 8 draws per
mode), holding κ on train brought the exact training pSP to κ in 7 of 8 runs (off: 0 of 8) and
the population pSP to κ in 2 of 8 (off: 1 of 8), at the same population accuracy (0.7976
against 0.7979) and 1.6 times the solver's time. Train + validation gave the same models: with
2,500 validation rows pSP is resolved only above about 0.22, so validation could not ask for
more. Holding κ on train is a promise about the data the model was fitted to; whether it carries
to new people is what the held-out interval says, and at these sizes it usually says "cannot
tell": the population pSP exceeded κ in 41 of the 75 runs whose validation could not tell.

### Held-out numbers are estimates
The exact value on validation or test is the model's value **on that sample**. The population the
model will meet differs from it by sampling noise, so every held-out value is shown with its
**95 % interval**: for pSP a stratified bootstrap of the whole curve of gaps over thresholds,
bounded at each end so that the upward bias of a maximum (about 0.87·√(1/n₁ + 1/n₂)/(β − α) when
the groups do not differ at all) does not make a fair model look unfair; Newcombe's limits for
the DP, EO and EOpp gaps, Wilson's for accuracy, DeLong's for the AUC. A split also has a
**resolution**: the smallest κ it can tell from zero at its group sizes. Below it no verdict on
that split can say "meets κ", whatever the model; the width shrinks as 1/√n, so the page says
roughly how many people per group would resolve your κ.

### The verdict on a run
One judgement per run, by one rule:
- **degenerate**: accuracy no better than always predicting the majority class, an AUC of at
  most 0.5, or the same score for everyone: not a model to show, whatever its fairness;
- **misses κ**: the held-out interval of the constrained quantity lies above κ;
- **surrogate only** / **misses κ** on the training data: the exact training value is above κ
  (surrogate only: although the solver's surrogate held, within its ε);
- **meets κ**: the model holds κ on the training data, and the whole held-out interval is at
  most κ: at 95 %, it holds on new data too;
- **cannot tell at this size**: it holds κ on the training data, and κ lies inside the held-out
  interval: the split is too small to say, and the page says what it resolves;
- flags beside it: **not converged** (a budget ended the run before the solver's own stopping
  rule), **near the majority class** (the accuracy's interval reaches the rate of always
  predicting the majority class).
The test set is the held-out split a verdict speaks of, validation where there is no test set.

### Choosing κ and I, and defending the choice
The **Frontier** page sweeps κ (and intervals) and draws each model's exact held-out accuracy
against its fairness, both with their 95 % intervals. Each solver on each interval is a series
of its own colour, with a line through its best trade-offs; a model that misses κ, or that is
degenerate or cannot be told from always predicting the majority class (the dashed line), is
never on a line. Labels give κ with marks: **?** the split cannot tell whether it meets κ,
**!** it misses κ, **⊘** degenerate or near the majority class, **†** not converged. With
several intervals a **κ × I** grid puts the same numbers side by side. To choose I, the
Explore page's interval helper shows, rank by rank, how much of each group the unconstrained
model puts above a threshold: an I where the curves part, around the positive rate, is where
the constraint has something to correct.

Click a point to see its model's case: the verdict with its intervals, what fairness costs
against the unconstrained model in one sentence, each group's selection rate, TPR, FPR and
accuracy, and the solves that held κ. **Choose this model** stores the decision with a note (who,
for what, why) and gives a one-page **decision record** for stakeholders: the data and groups,
what κ and I mean for them, the verdict and its uncertainty, the cost, the alternatives, the
limits of the sample, and the model file's SHA-256 checksum (`fairfront decide RUN_ID --note
TEXT --out record.html` on the command line).

### How the constraint is imposed
IDCA (paper 003) writes each constraint as a difference of convex functions, replaces the concave
part by its linearisation, and solves the resulting convex problem by a switching subgradient
method. Every iterate satisfies the surrogate constraints up to the inner solver's tolerance ε
(the trajectory's surrogate panel may sit slightly above 0, at most ε): feasibility is for the
surrogate, and the exact pSP is held separately (see holding κ on the training data). The switching-subgradient
solver and the penalty and quadratic-AUC baselines of the same paper run on the same problem, and
so do the stochastic solvers of paper 000 (SSL-ALM, ALM, Stochastic Ghost, stochastic switching
subgradient and the SGD baselines), which train networks from minibatches with the same number of
samples from every group (of every group and label, when the constraint conditions on the label).
Paper 001's PLADA (a perturbed augmented Lagrangian whose multipliers are never clipped) and its
baselines run on the same interface; every constrained run also records paper 001's KKT measure,
how far its model is from a stationary point of the constrained problem. Paper 004 maximises the
AUC under an AUC gap: its level-set method SFLS (and IQRC for networks) lowers a level r while a
stochastic mirror-descent oracle finds a point below it, and the proxy-Lagrangian,
correlation-penalty and post-processing baselines run beside it; each reports the iterate with the
best validation AUC among those within κ on validation.

### fairlearn's mitigators as comparators
fairlearn's ExponentiatedGradient and GridSearch (Agarwal et al., reductions to weighted
classification) and its ThresholdOptimizer (Hardt et al., group-specific thresholds) run under
DP, EO or EOpp as solvers of their own, with scikit-learn's logistic regression as the base
model; fairlearn does the fitting, and FairFront computes every metric of their models with its
own code on held-out data, as for any other run. Three things matter when reading them:
- fairlearn's reductions hold each group's rate within a bound b of the rate of everyone (under
  EO and EOpp, of everyone with the same label), while the DP, EO and EOpp gaps here are the
  largest gap between two groups. A group's distance to everyone's rate is its gap to the other
  group times the other group's share, so with two groups FairFront gives fairlearn
  b = κ·(1 − the smaller group's share), which is exactly "gap ≤ κ", and with more groups
  b = κ/2, which guarantees it (the run's stop reason says b). ExponentiatedGradient then holds
  the gap of its expected rates within κ, up to its tolerance ν; ThresholdOptimizer bounds the gap between groups
  itself, so it gets κ unchanged (and under EO asks for equal rates, with no tolerance).
- GridSearch fits one model per Lagrange multiplier λ on a grid and does not use the bound;
  FairFront shows the whole grid as the run's front and reports the most accurate model whose
  training gap is within κ (the one of the smallest gap when none is); the option select =
  fairlearn reports fairlearn's own pick instead, the same model whatever κ.
- ExponentiatedGradient and ThresholdOptimizer give **randomised classifiers**: a person gets a
  positive decision with a probability P. FairFront scores them by P − ½, so their accuracy and
  gaps here are those of the **majority vote** (positive when P > ½), which can miss κ when
  the expected rates meet it, while fairlearn's own `predict` draws each decision at random; pSP is computed on these probabilities. They take few
  distinct values (a handful of classifiers mixed, or two thresholds per group), so many people
  tie, and the order among tied people is arbitrary: pSP and the other measures on ranks are
  coarse for these models. The verdict and the frontier say so beside them ("n scores").

### Fairness without a tolerance: the group-loss front (paper 002)
Paper 002 (badr) asks a different question. Give each group *s* a weight λ_s (the weights sum to
one) and train the model that minimises the weighted sum of the groups' average losses F_s:
"""
)
st.latex(
    r"w^*(\lambda) = \arg\min_w \sum_s \lambda_s F_s(w), \qquad \lambda_s \ge 0,\ "
    r"\textstyle\sum_s \lambda_s = 1"
)
st.markdown(
    """
Each such model is **Pareto-efficient**: no group's loss can be lowered without raising another
group's. Together they make the *front* of the group losses; ordinary training (λ_s in proportion
to the group sizes), equal weights, weights against the group sizes, fitting one group alone and
the minimax model (the smallest worst-group loss) are all single points on it. badr picks the
**fairest model on the front**, the λ whose model has the lowest unfairness measure (demographic
parity, equal opportunity, equalised odds, disparate mistreatment, the variance of the group
losses, individual fairness or HSIC), by following the gradient of the measure through the
training problem (badr-gd, badr-sgd, or the two-loop implicit method). It has no κ: a run reports
the measure's exact counterpart on held-out data (for example the DP gap). With the trade-off
β, Φ_β = unfairness + β·(training loss) moves from badr's model (β = 0) towards ordinary training
(large β), every model still on the front. A `badr_front` run yields the whole front, one model
per λ (or per β), drawn on the Frontier page as a curve; the fairness-regularisation path
(`fair_reg`: loss + κ·unfairness) is drawn beside it for comparison, and its models are in
general not on the front. The smoothed measures carry constant offsets (at perfect parity
equal opportunity is 2 ln S/ρ), so compare them between models, not against zero.

### The Benchmark page
Paper 000 compares stochastic solvers by running each many times, with different seeds, under
one time budget. The Benchmark page does the same for any data, constraint and solvers: every run
saves its iterate a few times per second of solver time, each saved iterate is evaluated on the
whole train and test sets off the solver's clock, and the page draws the mean and the Q1–Q3 band
over runs against time, each group's loss and positive rate, paper 000's fairness criteria
(independence, separation, sufficiency, inaccuracy and the groups' accuracy difference), the
groups' predicted probabilities, a table of means ± std with the best value of each column marked
and, for a hyper-parameter grid, heat maps of the final validation loss and violation.

### Every number is exact
Metrics in tables and frontiers are computed exactly on held-out data (no surrogate), with their
95 % intervals; surrogate values appear only in the training trajectories, labelled as such.

### Papers
- He, Huang, Yao, Lin. *Enforcing fair predicted scores on intervals of percentiles by
  difference-of-convex constraints* (pSP, pDP, IDCA).
- Kliachkin, Lepšová, Bareilles, Mareček. *Benchmarking stochastic approximation algorithms for
  fairness-constrained training of deep neural networks* (SSL-ALM, ALM, Stochastic Ghost,
  switching subgradient).
- PLADA: a modified proximal-perturbed Lagrangian for fairness constraints.
- Tanji, Vaiter, Laguel. *badr: fairness-informed Pareto optimisation*.
- Yao, Lin, Yang. *Stochastic AUC optimisation under AUC-based fairness constraints*.
- Agarwal, Beygelzimer, Dudík, Langford, Wallach. *A reductions approach to fair
  classification* (fairlearn's ExponentiatedGradient and GridSearch).
- Hardt, Price, Srebro. *Equality of opportunity in supervised learning* (fairlearn's
  ThresholdOptimizer).
"""
)
