"""The parameters FairFrontClassifier and FairFrontRegressor share (`engine.estimator`), as the
numpydoc text both docstrings carry: what each means, its default and the values it allows."""

PARAMETERS_DOC = """
    Parameters
    ----------
    solver : str
        A solver of the catalogue (`python -m engine solvers`), which must be able to train the
        model under the constraint with the objective; refused with the reason otherwise.
    constraint : str or None
        A constraint family (`engine.fairness.families.family_names()`: "pSP", "pDP", "DP",
        "EO", "EOpp", "group_loss_gap", "auc_gap", ...); None trains without one. A reference
        solver (e.g. "unconstrained", "sgd") only reports it; paper 002's solvers ("badr_gd",
        ...) minimise their own measure (`solver_options={"measure": ...}`): pass
        constraint=None to be judged by it.
    kappa : float
        The tolerance κ the constrained quantity must stay within.
    interval : (float, float)
        I = [α, β) of pSP and pDP: the ranks, counted from the top of each group, whose scores
        are compared ((0.05, 0.3): each group's top 5 %–30 %). The default (0, 1), the command
        line's, compares the whole score distributions (full statistical parity); narrow it for
        paper 003's partial fairness.
    constraint_options : dict or None
        Further settings of the constraint: the `ConstraintSpec` fields "pairs", "surrogate",
        "temperature", "grid_size" and "grid", and the family's own options (auc_gap:
        "variant", "c1", "c2"; group_loss_gap: "condition"; pSP: "mean_method").
    model : {"linear", "mlp"}
    cross_terms : bool
        Adds group indicators and their products with the features to the model's inputs
        (paper 003, Sec. 7.1); such a model needs `sensitive_features` to predict.
    hidden : tuple of int
        Widths of the MLP's hidden layers.
    activation : {"relu", "sigmoid"}
        The MLP's activation.
    objective : str or None
        The training objective (`engine.objectives.OBJECTIVE_TYPES`): None is the solver's
        (the pairwise AUC loss for a solver that needs it, else the logistic loss) for a
        classifier, the squared loss for a regression.
    max_iter : int or None
        Solver iterations at most (None: the solver's own stopping rule).
    max_seconds : float or None
        Wall seconds at most, the run's records and evaluations included; the default guards
        against the solvers that run until stopped (sgd, ssw, ...); None: no time limit.
    solver_options : dict or None
        The solver's options by name (`python -m engine solvers`), checked against its card.
    validation_fraction : float
        The share of the rows held out for validation, stratified by group and label. Paper
        003 chooses IDCA's K on validation accuracy (App. G.2.2) and paper 004 the reported
        iterate, or the post-processing map, on validation (App. E.3); with 0 every row trains
        and those solvers report their last iterate (auc_postprocess maps nothing).
    min_category_count : int
        Categories seen fewer times in training share one "(other)" column (the app's rule).
    hold_kappa : {"train", "val", "off"} or None
        "train": κ is held on the exact training value (the solver's surrogate refined, then a
        tighter inner κ′, each solve from the model before, until the exact value there is
        ≤ κ; `engine.solvers.exact_train`); "val": also honoured on validation; "off": the
        solver's own algorithm, solved once. None (the default): "train" where the solver can
        hold κ, else off.
    tune : bool
        Tune the solver's options by its paper's protocol first (`python -m engine solvers`
        lists each grid): one trial per setting on this split, each within the budget, and the
        setting its rule picks on validation (paper 003 G.2.2: the highest validation accuracy
        within κ; paper 000, App. B: the lowest validation loss); `tuning_` holds the trials.
    random_state : int, RandomState or None
        Seeds the validation split and the solver (an int is the seed itself, as the command
        line's --seed; otherwise a seed is drawn from it, as scikit-learn does). `seed_` keeps
        the seed used.

    Without `sensitive_features` every row is one group: a UserWarning says so, and the model
    is trained by the catalogue's reference solver "unconstrained" (L-BFGS) on the same model
    and objective, without a constraint.

    Attributes
    ----------
    coef_, intercept_ : ndarray, float
        A linear model's weights, on the model's inputs `model_feature_names_`: the encoded
        features (numbers standardised on the training rows, one 0/1 column per category),
        then the group cross-terms if any. A group-wise map of the scores (auc_postprocess) is
        applied after them (`params_`).
    params_ : dict of ndarray
        The model's parameters as the engine keeps them.
    groups_ : ndarray of str
        The group names; a row's group is the value (or the intersection " × " of the values)
        of its sensitive features.
    history_ : DataFrame
        The run's records, one row each: "iteration", "seconds", "kind" ("surrogate": the
        solver's objective and constraint rows; "exact": exact train and validation metrics;
        "final": the reported model's), "objective", "max_violation" and the values by name.
    metrics_ : dict
        Exact metrics of the reported model, by split ("train", "val").
    verdict_ : engine.verdict.Verdict
        Whether the model meets κ, misses it or, at the validation split's size, cannot tell
        (its exact value there judged with its 95 % interval, beside the exact training value),
        is degenerate, converged: judged as the command line judges a run.
    solution_ : engine.solvers.records.Solution
        Everything the solver returned.
    status_ : str
        How the run ended ("converged", "budget", "diverged", ...).
    needs_sensitive_features_ : bool
        Whether predicting needs the sensitive features (group cross-terms or a group-wise map).
    tuning_ : DataFrame or None
        With tune=True, the trials: each setting, how its run ended, its validation score and
        exact constrained value, whether that is within κ, the chosen one marked "◆".
"""
