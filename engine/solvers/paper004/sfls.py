"""SFLS, the stochastic feasible level-set method (paper 004, Alg. 1), with the stochastic mirror
descent oracle of Alg. 2, for max AUC s.t. AUC gap ≤ κ through the surrogate problem (6).

x = (weights, a_0..a_{n−1}, b_0..b_{n−1}) is minimised; y = (ỹ, α̃) maximised, ỹ over the
components of P(r, x) = max{f0 − r, f_j − 1 − κ}: the objective (3), then the family's rows (one
upper and one lower row per pair of groups, paper 004 eqs. 4–5). Term 0 is the pair (D+, D−) of
f0; each row j has two terms, (G1', G1) and (G2, G2') for an upper row, (G2', G2) and (G1, G1')
for a lower one. p_G are the training frequencies (spec 004 §5).

One SMD step t of an oracle call at level r (Alg. 2), on a uniform minibatch z:
  u = (F_0 − r, F_1 + F_2 − 1 − κ, …), v = G   (batch means of Lemma 1's terms, `lemma1_terms`)
  x ← Π_X((x/η_t + ρ̂ x̃ − ∇_x Φ)/(1/η_t + ρ̂)),  Φ = Σ_k ỹ_k u_k + Σ_i ỹ_{g(i)} α_i v_i,
  η_t = c/√(t+1); (ỹ, α) ← Lemma 3 (`smd.y_step`) with τ_t = τ0/√(t+1)
Π_X: the ℓ2 ball of radius R on the weights, [−I, I] on a and b; ρ̂ = 0 here (the convex case),
ρ̂ > 0 with x̃ the centre of IQRC's proximal term (`iqrc`). After T steps,
U(r) = Lemma 4 (`smd.level_value`) on the τ-weighted means of u and v, plus the τ-weighted mean
of (ρ̂/2)‖x(t) − x̃‖², and x̄ the mean of the T iterates x(0..T−1); Alg. 1 halts when
U(r) ≥ −ε_opt, and otherwise sets r ← r + U(r)/(2θ). Each call starts at the previous call's
last (x, y) (ours; Alg. 2 restarts at x = 0).

T grows at the first level (ours): Prop. 1 asks an oracle accuracy ε_A proportional to −H(r(0)),
which is not known in advance and is small when κ is (the constant model's slack in eq. 6 is κ),
so while U(r(0)) ≥ −ε_opt, T doubles and the call is repeated from where it ended, up to
`first_level_doublings` times, before Alg. 1 may halt there.

Reported iterate (App. E.3): the SMD iterates, every `select_every` steps, and each oracle output
x̄ are judged on validation (`ValidationSelection`, off the run's clock); the run reports the one
with the best validation AUC among those within κ for the exact AUC gap, else the one nearest to
κ (option select = "last": always the last x̄, Alg. 1's output). Before the first call ends, the
mean of the current call's iterates stands in for x̄.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from engine.models import Params
from engine.oracles import WEIGHTS
from engine.pairwise import lemma1_terms
from engine.problem import Problem
from engine.solvers.base import Snapshot, StepInfo
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper004.cards_sfls import SFLSConfig
from engine.solvers.paper004.smd import level_value, y_step
from engine.solvers.validation_select import ValidationSelection
from engine.status import StopCode
from engine.variables import Box, Kind


class SFLS(MinibatchSolver):
    """Paper 004, Alg. 1 with Alg. 2 as its oracle. The state has the level r, the last U(r),
    the outer iteration k, ỹ as "y.<component>" and ‖α‖."""

    uses_constraint = False  # its own a, b (Lemma 1) stand in for the family's rows

    def __init__(self, problem: Problem, config: SFLSConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.sampler = self.batch_sampler()
        bound = problem.bound
        self.weight_a, self.weight_b, self.group = _term_sets(problem)
        c1, c2 = problem.objective.c1, problem.objective.c2
        n = len(self.group)
        self.c1 = np.r_[c1, np.full(n - 1, bound.c1)]
        self.c2 = np.r_[c2, np.full(n - 1, bound.c2)]
        self.components = ["objective", *bound.rows]
        # u = (F_0 − r, F_1 + F_2 − 1 − κ, …): the constants subtracted per component
        self.offset = np.r_[0.0, np.full(len(self.components) - 1, 1.0 + bound.spec.kappa)]
        self.x = self._project(self.x)
        self.rho, self.center = 0.0, self.x  # Alg. 2's ρ̂ and x̃ (ρ̂ = 0: the convex case)
        self.r = self._first_level(self.x)
        self.log_y = np.full(len(self.components), -np.log(len(self.components)))
        self.alpha = np.zeros(n)
        self.level, self.halted = np.nan, False
        self.steps, self.doublings = config.inner_steps, 0  # T of the current call
        self.outputs: list[Snapshot] = []
        if config.select == "validation":
            self.selection = ValidationSelection(problem, "auc")
            self.select_every = config.select_every
        self._reset_sums()

    def add_blocks(self) -> None:
        n = 1 + 4 * len(self.problem.bound.sets)
        box = Box(-self.config.bound, self.config.bound)
        self.a = self.oracles.add("a", Kind.MINIMISED, n, box)
        self.b = self.oracles.add("b", Kind.MINIMISED, n, box)

    def _first_level(self, x: np.ndarray) -> float:
        """Alg. 1's r(0) > f*: f0 at x plus a margin (ours), above f* when x is feasible."""
        problem = self.problem
        return problem.loss(problem.scores(self.oracles.params(x))) + self.config.margin

    def _reset_sums(self) -> None:
        self.inner, self.tau_sum, self.x_sum, self.prox_sum = 0, 0.0, np.zeros_like(self.x), 0.0
        self.u_sum, self.v_sum = np.zeros(len(self.components)), np.zeros(len(self.group))

    def _project(self, x: np.ndarray) -> np.ndarray:
        """Π_X: the ℓ2 ball of radius R on the weights, the boxes on a and b."""
        weights = x[self.oracles.layout[WEIGHTS]]
        norm = float(np.linalg.norm(weights))
        if norm > self.config.radius:
            weights *= self.config.radius / norm
        return self.oracles.layout.project(x)

    def iterate(self) -> float:
        config, x = self.config, self.x
        rows = self.sampler.objective(config.batch_size).rows
        h, pullback = self.oracles.scores_linearised(x, rows)
        terms = lemma1_terms(
            h, self.weight_a[rows], self.weight_b[rows], x[self.a], x[self.b], self.c1, self.c2
        )
        self.oracles.counts.tally(0, objective_gradients=1, constraint_gradients=1)
        F, v = terms.F.mean(axis=0), terms.G.mean(axis=0)
        u = np.bincount(self.group, weights=F, minlength=len(self.components)) - self.offset
        u[0] -= self.r
        y = np.exp(self.log_y)[self.group]  # ỹ_{g(i)} per term
        scaled = y * self.alpha  # α̃
        # ∇_x Φ: through the scores for the weights, directly for a and b
        grad = pullback((terms.dF_dh @ y + terms.dG_dh @ scaled) / len(rows))
        grad[self.a] = y * terms.dF_da.mean(axis=0)
        grad[self.b] = y * terms.dF_db.mean(axis=0)
        step = 1.0 / np.sqrt(self.inner + 1.0)
        tau = config.tau * step
        self.x_sum += x
        self.u_sum += tau * u
        self.v_sum += tau * v
        self.tau_sum += tau
        eta = config.eta * step
        if self.rho > 0:
            self.prox_sum += tau * 0.5 * self.rho * float(np.sum((x - self.center) ** 2))
        # paper 004, Alg. 2: the x-step with d_x = (ρ̂/2)‖x − x̃‖²
        self.x = self._project((x / eta + self.rho * self.center - grad) / (1.0 / eta + self.rho))
        self.log_y, self.alpha = y_step(
            self.log_y, self.alpha, u, v, tau, config.bound, self.group
        )  # paper 004, Alg. 2, Lemma 3
        self.inner += 1
        if self.inner == self.steps:
            self._end_oracle_call()
        return float(F[0] + self.alpha[0] * v[0] - self.alpha[0] ** 2)  # f0's Lemma 1 estimate

    def _end_oracle_call(self) -> None:
        """U(r) by Lemma 4, the output x̄, then Alg. 1's halt test or level step."""
        self.level = (
            level_value(
                self.u_sum / self.tau_sum, self.v_sum / self.tau_sum, self.config.bound, self.group
            )
            + self.prox_sum / self.tau_sum
        )
        self.x_bar = self.x_sum / self.inner
        params = self.oracles.params(self.x_bar)
        judged = self.selection and self.selection.offer(self.t + 1, self.outer, params)
        self.outputs.append(judged or Snapshot(self.t + 1, self.outer, params, {}))
        if self.level >= -self.config.eps_opt and self._first_level_unsure():
            self.steps *= 2  # guess and double (module docstring)
            self.doublings += 1
        elif self.level >= -self.config.eps_opt:
            self._halt()
        else:
            self.r += self.level / (2.0 * self.config.theta)  # paper 004, Alg. 1
            self.outer += 1
        self._reset_sums()

    def _first_level_unsure(self) -> bool:
        """At the first level, with doublings of T left: U(r(0)) ≥ −ε_opt may be the oracle's
        error rather than H(r(0)) ≥ 0."""
        return self.outer == 0 and self.doublings < self.config.first_level_doublings

    def _halt(self) -> None:
        """Alg. 1 halts: the run ends with the last x̄."""
        self.halted = True

    def advance(self, max_iterations: int) -> StepInfo:
        """Steps up to the end of the current oracle call at most; done when Alg. 1 halts."""
        left = self.steps - self.inner
        info = super().advance(min(max_iterations, left))
        if not self.halted:
            return info
        return dataclasses.replace(
            info, done=True, stop=StopCode.CONVERGED, reason=self._halt_reason()
        )

    def _halt_reason(self) -> str:
        reason = f"U(r) = {self.level:.3g} ≥ −ε_opt after {len(self.outputs)} oracle calls"
        if self.outer == 0 and self.level > self.config.eps_opt:
            # U estimates H(r(0)) within the oracle's accuracy ε_A (Def. 3): either no point
            # meets the surrogate rows (paper 004, Lemma 2: a strictly feasible constant model
            # needs 2 c1 c2² < 1 + κ), or the oracle is too inexact to show one
            reason += (
                "; U(r(0)) > 0: the surrogate constraints admit no point at the first "
                "level, or the oracle is too inexact to find one: lower c1 (2 c1 c2² < "
                f"1 + κ, paper 004 Lemma 2) or raise κ; else more inner_steps (T was "
                f"{self.steps:,}) or a smaller bound I"
            )
        return reason

    def state(self) -> dict[str, float | str]:
        y = np.exp(self.log_y)
        return {
            "level": self.r,
            "U": self.level,
            "outer": float(self.outer),
            "alpha_norm": float(np.linalg.norm(self.alpha)),
        } | {f"y.{name}": float(value) for name, value in zip(self.components, y, strict=True)}

    def candidate(self) -> Params:
        """The last oracle output x̄, or the mean of the current call's iterates before one."""
        if self.outputs:
            return self.outputs[-1].params
        return self.oracles.params(self.x_sum / self.inner if self.inner else self.x)

    def snapshots(self) -> list[Snapshot]:
        return list(self.outputs)


def _term_sets(problem: Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """I_G/p_G and I_G'/p_G' over the training rows, (rows, terms), and each term's component:
    term 0 (D+, D−) of f0, then per pair of groups the upper row's (G1', G1), (G2, G2') and the
    lower row's (G2', G2), (G1, G1') (paper 004, eqs. 4–5)."""
    n = len(problem.data.train)
    positive = problem.data.train.y == 1
    every = np.arange(n)
    firsts, seconds = [np.flatnonzero(positive)], [np.flatnonzero(~positive)]
    for sets in problem.bound.sets:
        g1, g1p, g2, g2p = (every if s is None else s.numpy() for s in sets)
        firsts += [g1p, g2, g2p, g1]
        seconds += [g1, g2p, g2, g1p]
    group = np.r_[0, 1 + np.arange(len(firsts) - 1) // 2]

    def weights(indices: list[np.ndarray]) -> np.ndarray:
        out = np.zeros((n, len(indices)))
        for i, rows in enumerate(indices):
            out[rows, i] = n / len(rows)  # I_G(z)/p_G, p_G = |G|/n
        return out

    return weights(firsts), weights(seconds), group
