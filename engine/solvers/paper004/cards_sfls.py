"""Paper 004's SFLS (Alg. 1, the stochastic feasible level-set method) with its stochastic mirror
descent oracle (Alg. 2), and IQRC (Alg. 3, SFLS on proximal subproblems for weakly convex models):
their options with App. E.3's defaults where the paper gives them, and their cards.
Implementations: `engine.solvers.paper004.sfls`, `engine.solvers.paper004.iqrc`.

Paper 004 leaves open (spec 004 §2.5): τ_t, T per oracle call, ε_opt, r(0), W and I. Ours, each
also in the option's help: W an ℓ2 ball of radius 10, I = [−2, 2], τ_t = τ0/√(t+1), T = 1000,
ε_opt = 1e−3, r(0) = f0 at the start plus 0.05; each oracle call starts where the previous one
ended (Alg. 2 starts at x = 0, ỹ uniform, α̃ = 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.capabilities import Capability as C
from engine.options import Options, option
from engine.solvers.card import SolverCard
from engine.solvers.tuning import Score, TuningPlan

SELECTIONS = ("validation", "last")


@dataclass(frozen=True)
class SFLSConfig(Options):
    eta: float = option(
        0.1,
        "c of the primal step η_t = c/√(t+1) of Alg. 2 (paper 004, App. E.3 tunes c over "
        "{0.01, 0.1, 1} on validation AUC), t counting the steps of one oracle call",
        above=0,
    )
    tau: float = option(
        10.0,
        "τ0 of the dual step τ_t = τ0/√(t+1) of Alg. 2 (eq. 25); the paper gives no value (ours)",
        above=0,
    )
    inner_steps: int = option(
        1000,
        "T, the SMD steps of one oracle call (App. E.3 runs θ = 1, for which Prop. 1 gives "
        "ε_A = 0, so T is fixed; the paper gives no value, ours)",
        minimum=1,
    )
    first_level_doublings: int = option(
        6,
        "how often T doubles while U(r(0)) ≥ −ε_opt at the first level, before Alg. 1 may halt "
        "there (Prop. 1's ε_A scales with −H(r(0)), unknown in advance and small for a small κ: "
        "guess and double, ours)",
        minimum=0,
        maximum=20,
    )
    theta: float = option(
        1.0, "θ of the level step r ← r + U(r)/(2θ) (Alg. 1; App. E.3 uses θ = 1)", above=0
    )
    eps_opt: float = option(
        1e-3, "ε_opt: halt when U(r) ≥ −ε_opt (Alg. 1; the paper gives no value, ours)", above=0
    )
    margin: float = option(
        0.05,
        "r(0) = f0 at the start + margin, above f* when the start is feasible (Alg. 1 asks "
        "r(0) > f*; spec 004 §5 proposes c1c2² + a small margin, f0 at x = 0; ours: 0.05)",
        minimum=0,
    )
    radius: float = option(
        10.0,
        "R, the weights' set W = {‖w‖ ≤ R} (paper 004 assumes W compact; spec 004 §5: 10)",
        above=0,
    )
    bound: float = option(
        2.0,
        "I, the interval I = [−I, I] of a, b and α (Lemma 1 needs it to hold the group means and "
        "√c1 times their differences, spec 004 §1, §5; a large I slows the ỹ-step through "
        "2(1 + √2I)², and U(r) then overestimates H(r) by more than the slack of a small κ; "
        "ours: 2, as the square loss keeps score differences near c2 = 1; on Adult, I = 5 "
        "stopped at the first level for κ = 0.01)",
        above=0,
    )
    batch_size: int = option(100, "rows per SMD step, drawn uniformly (App. E.3: 100)", minimum=1)
    select: str = option(
        "validation",
        "the reported iterate: 'validation', the best validation AUC among the iterates (every "
        "select_every steps) and oracle outputs x̄ within κ on validation for the exact AUC "
        "gap (App. E.3), else the judged one nearest to κ; 'last', the last oracle output x̄ "
        "(Alg. 1)",
        choices=SELECTIONS,
    )
    select_every: int = option(
        100,
        "SMD steps between iterates judged on validation (App. E.3 tracks every iteration; a "
        "judgement costs about as much as 10–20 steps, and is not charged to the run's clock; "
        "ours: 100)",
        minimum=1,
    )
    iterations: int = option(10**9, "SMD steps at most (paper 004 gives no budget)", minimum=1)


@dataclass(frozen=True)
class IQRCConfig(SFLSConfig):
    rho: float = option(
        1e-5,
        "ρ̂ of the proximal term (ρ̂/2)‖x − x̃(s)‖² of each subproblem (28) (App. E.3: 1e-5)",
        above=0,
    )
    stage_calls: int = option(
        10,
        "SFLS oracle calls per IQRC stage at most: a stage ends when Alg. 1 halts or after "
        "this many calls (the paper bounds neither; ours)",
        minimum=1,
    )
    stages: int = option(
        10**6,
        "S, IQRC's outer iterations (Alg. 3; the paper gives no value: the budget ends it)",
        minimum=1,
    )


_NEEDS = {
    C.GRADIENTS: "Alg. 2 steps x along ∇_x Φ, backpropagated through the scores",
    C.PAIRWISE_AUC: "paper 004, eq. (6): f0 is the square pairwise AUC loss (3), taken apart "
    "per sample by Lemma 1",
    C.AUC_PAIR_SETS: "paper 004, eqs. (4)–(5): Lemma 1 takes each pair loss apart per sample "
    "through its sets' indicators",
}

# paper 004, App. E.3: the step constant c tuned over {0.01, 0.1, 1} on validation AUC, the
# reported model feasible on validation
STEP_TUNING = TuningPlan({"eta": (0.01, 0.1, 1.0)}, Score.AUC, "paper 004 App. E.3")

CARDS = (
    SolverCard(
        "sfls",
        SFLSConfig,
        "004",
        "stochastic feasible level-set method (paper 004, Alg. 1): the level r falls by "
        "U(r)/(2θ) while U(r) < −ε_opt, each U(r) from T steps of stochastic mirror "
        "descent (Alg. 2) on the min-max form of Lemma 1, with closed-form dual steps "
        "(Lemmas 3–4) and minibatches of 100; reports the averaged oracle output "
        "(best on validation, or the last); max AUC under the AUC-gap surrogate; any "
        "model (convex for a linear one)",
        "engine.solvers.paper004.sfls:SFLS",
        needs=_NEEDS,
        tuning=STEP_TUNING,
    ),
    SolverCard(
        "iqrc",
        IQRCConfig,
        "004",
        "inexact quadratically regularised constrained method (paper 004, Alg. 3) for "
        "weakly convex models such as App. E's 2-layer sigmoid network (model mlp, "
        "hidden 10, sigmoid): stage s runs SFLS on f0 + (ρ̂/2)‖x − x̃(s)‖² under the "
        "AUC-gap surrogate plus the same term (eq. 28), from x̃(s) to x̃(s+1); reports "
        "the best validation AUC within κ on validation, like SFLS",
        "engine.solvers.paper004.iqrc:IQRC",
        needs=_NEEDS,
        tuning=STEP_TUNING,
    ),
)
