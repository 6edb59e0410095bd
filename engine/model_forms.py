"""The forms a trained model's parameters (`engine.models.Params`) take, each declared once: the
keys that mark it, whether it needs the rows' groups to score them, whether its scores are a
randomised classifier's P(ŷ = 1) − ½, how it scores rows and the shapes a model file checks
(`engine.model_file`). `form_of` recognises the form of some parameters; scoring
(`engine.scoring`), model files and the estimator ask it instead of testing keys themselves.

A form's parameters are arrays under its keys, beside the model's own weights ("w" of a linear
model, the network's named weights of an MLP) when the form keeps them (`own_weights`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit

from engine.models import Params

if TYPE_CHECKING:
    from engine.scoring import Rows

# a group-wise affine map of the model's scores, one entry per group: a row of group g scores
# scale[g]·h + shift[g] (post-processing, paper 004, App. E.2: ω1·h + ω2 on the protected group)
POST_SCALE, POST_SHIFT = "post.scale", "post.shift"

# Randomised classifiers (fairlearn's) predict ŷ = 1 with a probability P(ŷ = 1 | x) and score
# P − ½, so that the threshold 0 is their majority vote (ŷ = 1 when P > ½).
# A mixture (ExponentiatedGradient): linear classifiers 1[x̃·w_j > 0], the rows w_j of MIXTURE_W,
# drawn with probabilities q_j (MIXTURE_Q): P = Σ_j q_j·1[x̃·w_j > 0].
MIXTURE_W, MIXTURE_Q = "mixture.w", "mixture.q"
# Randomised thresholds per group (ThresholdOptimizer) of the linear model's score s = x̃·w, or of
# σ(s) when THRESHOLD_ON_PROBABILITY is 1: for a row of group g, two rules k = 0, 1, each
# 1[σ_gk·s > σ_gk·t_gk] (σ = +1 for "s > t", −1 for "s < t"; t may be ±∞) taken with
# probability p_gk, and the constant c_g taken instead with probability i_g:
# P = i_g·c_g + (1 − i_g)·Σ_k p_gk·1[σ_gk·s > σ_gk·t_gk]. Arrays (G, 2) and (G,).
THRESHOLD_AT, THRESHOLD_SIGN, THRESHOLD_P = "threshold.at", "threshold.sign", "threshold.p"
THRESHOLD_IGNORE, THRESHOLD_CONSTANT = "threshold.ignore", "threshold.constant"
THRESHOLD_ON_PROBABILITY = "threshold.on_probability"

# How a form scores rows: from its parameters, the rows and the model's own scores of the rows
# (computed when called, so that a form without its own weights never computes them).
Scorer = Callable[[Params, "Rows", Callable[[], np.ndarray]], np.ndarray]


def _no_shapes(n_groups: int) -> dict[str, tuple[int, ...]]:
    return {}


@dataclass(frozen=True)
class ModelForm:
    """One form of a model's parameters.

    `keys` are the form's own parameter keys, the first of which marks it (none for a model
    scored as it is, the form of parameters that hold no other form's mark). `needs_groups`: a
    row's score depends on its group. `randomised`: the scores are P(ŷ = 1) − ½ of a randomised
    classifier, so score + ½ is the probability of the positive class. `own_weights`: the
    parameters hold the model's own weights too, which the form's scores start from. `shapes`
    gives, for a model of G groups, the shapes of those of its keys that G fixes (the others
    are checked by scoring a row of each group)."""

    name: str
    keys: tuple[str, ...]
    needs_groups: bool
    randomised: bool
    own_weights: bool
    score: Scorer
    shapes: Callable[[int], Mapping[str, tuple[int, ...]]] = _no_shapes


def _as_is(params: Params, rows: Rows, own: Callable[[], np.ndarray]) -> np.ndarray:
    return own()


def _mapped(params: Params, rows: Rows, own: Callable[[], np.ndarray]) -> np.ndarray:
    """The group-wise affine map of `params` (POST_SCALE, POST_SHIFT) of the model's scores."""
    groups = rows.groups
    return params[POST_SCALE][groups] * own() + params[POST_SHIFT][groups]


def _map_shapes(n_groups: int) -> dict[str, tuple[int, ...]]:
    return {POST_SCALE: (n_groups,), POST_SHIFT: (n_groups,)}


def _mixture_vote(params: Params, rows: Rows, own: Callable[[], np.ndarray]) -> np.ndarray:
    """P(ŷ = 1 | x) − ½ of the mixture of linear classifiers in `params` (MIXTURE_W, MIXTURE_Q)."""
    votes = np.column_stack([rows.design.matvec(w) > 0.0 for w in params[MIXTURE_W]])
    return votes @ params[MIXTURE_Q] - 0.5


def _randomised_thresholds(params: Params, rows: Rows, own: Callable[[], np.ndarray]) -> np.ndarray:
    """P(ŷ = 1 | x, group) − ½ of the randomised thresholds in `params` (THRESHOLD_AT, ...) of
    the linear model's scores."""
    groups, h = rows.groups, own()
    s = expit(h) if params[THRESHOLD_ON_PROBABILITY][0] else h
    sign = params[THRESHOLD_SIGN][groups]
    above = sign * s[:, None] > sign * params[THRESHOLD_AT][groups]
    chosen = np.sum(params[THRESHOLD_P][groups] * above, axis=1)
    ignore = params[THRESHOLD_IGNORE][groups]
    return ignore * params[THRESHOLD_CONSTANT][groups] + (1.0 - ignore) * chosen - 0.5


MODEL = ModelForm(
    name="a linear model or a network, scored as it is",
    keys=(),
    needs_groups=False,
    randomised=False,
    own_weights=True,
    score=_as_is,
)
GROUP_MAP = ModelForm(
    name="a model whose scores a group-wise affine map post-processes",
    keys=(POST_SCALE, POST_SHIFT),
    needs_groups=True,
    randomised=False,
    own_weights=True,
    score=_mapped,
    shapes=_map_shapes,
)
MIXTURE = ModelForm(
    name="a mixture of linear classifiers, one drawn at random per prediction",
    keys=(MIXTURE_W, MIXTURE_Q),
    needs_groups=False,
    randomised=True,
    own_weights=False,
    score=_mixture_vote,
)
THRESHOLDS = ModelForm(
    name="randomised thresholds per group of a linear model's scores",
    keys=(
        THRESHOLD_AT,
        THRESHOLD_SIGN,
        THRESHOLD_P,
        THRESHOLD_IGNORE,
        THRESHOLD_CONSTANT,
        THRESHOLD_ON_PROBABILITY,
    ),
    needs_groups=True,
    randomised=True,
    own_weights=True,
    score=_randomised_thresholds,
)

# In the order `form_of` tries them: a mixture scores its vote whatever else the parameters
# hold, randomised thresholds come before a group-wise map, and the model scored as it is last.
FORMS: tuple[ModelForm, ...] = (MIXTURE, THRESHOLDS, GROUP_MAP, MODEL)


def form_of(params: Params) -> ModelForm:
    """The form of `params`: the first of `FORMS` whose marking key they hold, else `MODEL`."""
    return next(form for form in FORMS if not form.keys or form.keys[0] in params)
