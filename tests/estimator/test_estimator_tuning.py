"""`tune=True`: the solver's grid is tried on the fit's own split, the rule's choice is the
model kept, and the same seed tunes to the same model."""

from __future__ import annotations

import numpy as np
import pytest
from estimator_tables import toy_table

from engine.estimator import FairFrontClassifier
from engine.estimator_data import InputError
from engine.solvers.catalogue import solver_card
from engine.solvers.tuning import pick, trial_outcome

SETTINGS = {
    "solver": "ssg",
    "constraint": "pSP",
    "kappa": 0.2,
    "max_iter": 60,
    "max_seconds": None,
    "random_state": 3,
}
pytestmark = pytest.mark.filterwarnings("ignore")  # budgets end these tiny runs


def test_a_tuned_fit_keeps_the_trial_its_rule_picks_and_is_reproducible_by_seed():
    X, y = toy_table()
    model = FairFrontClassifier(**SETTINGS, tune=True).fit(X, y, sensitive_features="group")
    plan = solver_card("ssg").tuning
    trials = model.tuning_
    assert trials["epsilon"].tolist() == [s["epsilon"] for s in plan.settings()]
    assert trials["chosen"].tolist().count("◆") == 1
    # the rule, applied by hand to the table's own numbers, picks the marked trial
    redone = pick(
        plan,
        [
            trial_outcome(
                plan,
                {"epsilon": row.epsilon},
                row.status,
                {"accuracy": row["val accuracy"], "constraint": row["val pSP"]},
                0.2,
            )
            for _, row in trials.iterrows()
        ],
        constrained=True,
    )
    chosen = trials.index[trials["chosen"] == "◆"][0]
    assert redone.chosen == chosen
    assert model.exported_model_.about["config"]["epsilon"] == trials.loc[chosen, "epsilon"]
    untuned = FairFrontClassifier(
        **SETTINGS, solver_options={"epsilon": trials.loc[chosen, "epsilon"]}
    )
    untuned.fit(X, y, sensitive_features="group")
    np.testing.assert_allclose(model.coef_, untuned.coef_)  # the chosen trial's own model
    again = FairFrontClassifier(**SETTINGS, tune=True).fit(X, y, sensitive_features="group")
    np.testing.assert_allclose(again.coef_, model.coef_)
    assert again.tuning_.equals(trials)


def test_tune_is_refused_without_a_plan_or_a_validation_split():
    X, y = toy_table()
    with pytest.raises(InputError, match="declares no tuning"):
        FairFrontClassifier(solver="plada", constraint="DP", tune=True, max_iter=5).fit(
            X, y, sensitive_features="group"
        )
    with pytest.raises(InputError, match="validation_fraction must be > 0"):
        FairFrontClassifier(**SETTINGS, tune=True, validation_fraction=0.0).fit(
            X, y, sensitive_features="group"
        )
    untuned = FairFrontClassifier(**SETTINGS).fit(X, y, sensitive_features="group")
    assert untuned.tuning_ is None
