"""The badr 0.1.2 side of bench/paper002_vs_badr.py: one Badr run on arrays given in an .npz.

This file runs in badr's own virtual environment (the bench creates it; badr is GPL-3 and is
never installed into, or imported by, the project's environment). It imports badr, numpy and
the standard library only, never the project.

    <badr-env>/bin/python bench/badr_side.py DATA.npz OUT.json --task classification
        --measure dp [--solver slsqp|fw] [--l2 0.01] [--max-iter 20] [--seconds 180]

DATA.npz holds X_train, X_test (the ones column already appended as the LAST column), y_train,
y_test and the integer group ids g_train, g_test (0..S-1). The model is fitted with
fit_intercept=False, so coef_ includes the weight of the ones column (badr's hypergradient is
only right that way: paper-002 spec §4, defect 2).

OUT.json: wall seconds of `Badr.run` (solver + the final refit; import, data set construction
and the checks below are outside it), the solver's iterations and how it stopped, upper-level
evaluations (each refits the lower level), λ, coef_, intercept_, the package's own value of
its metric on the train split, and a check of its hypergradient against a central finite
difference of its own Φ at the final λ along e_0 − e_1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import traceback
import warnings

import numpy as np


class OutOfTime(Exception):
    """Raised by the wrapped oracle once the wall-clock limit has passed."""


def metric_for(measure: str, rho: float):
    from badr import metrics

    classes = {
        "dp": lambda: metrics.DemographicParity(rho=rho),
        "dm": metrics.DisparateMistreatment,
        "eopp": lambda: metrics.EqualOpportunity(rho=rho),
        "eodds": lambda: metrics.EqualizedOdds(rho=rho),
        "group_variance": metrics.GroupVariance,  # bound to the model by Badr
        "individual": metrics.IndividualFairness,
        "hsic": metrics.HSIC,
    }
    return classes[measure]()


def model_for(task: str, l2: float):
    from badr import models

    if task == "classification":
        return models.LogisticRegression(l2_reg=l2, fit_intercept=False)
    return models.RidgeRegression(l2_reg=l2, fit_intercept=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--task", choices=("classification", "regression"), required=True)
    parser.add_argument("--measure", required=True)
    parser.add_argument("--solver", choices=("slsqp", "fw"), default="slsqp")
    parser.add_argument("--l2", type=float, default=1e-2)
    parser.add_argument("--rho", type=float, default=1.0)
    parser.add_argument("--max-iter", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=180.0)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # sklearn 1.9's FutureWarning on `penalty=`, every fit

    began = time.perf_counter()
    import badr
    from badr.algorithms import SLSQP, FrankWolfe
    from badr.datasets import Dataset

    imported = time.perf_counter() - began
    arrays = np.load(args.data)
    g_train, g_test = arrays["g_train"], arrays["g_test"]
    n_groups = int(max(g_train.max(), g_test.max())) + 1
    dset = Dataset(
        name="fairfront",
        X_train=arrays["X_train"],
        X_test=arrays["X_test"],
        y_train=arrays["y_train"],
        y_test=arrays["y_test"],
        group_idx=[np.flatnonzero(g_train == s) for s in range(n_groups)],
        group_idx_test=[np.flatnonzero(g_test == s) for s in range(n_groups)],
    )
    model = model_for(args.task, args.l2)
    metric = metric_for(args.measure, args.rho)
    solver = SLSQP() if args.solver == "slsqp" else FrankWolfe()
    runner = badr.Badr(dset, model, metric, oracle="implicit")
    runner.set_solver(solver)

    # the oracle counts its calls and refuses any call past the wall-clock limit
    oracle = runner.oracle
    calls = {"fun": 0, "grad": 0}
    clock = {"deadline": float("inf"), "halted": False}

    def limited(name: str, function):
        def call(weights):
            if time.perf_counter() > clock["deadline"]:
                raise OutOfTime
            calls[name] += 1
            return function(weights)

        return call

    original = {"fun": oracle.fun, "grad": oracle.grad}
    oracle.fun = limited("fun", original["fun"])
    oracle.grad = limited("grad", original["grad"])

    # SLSQP: badr's own trace callback fails under scipy 1.17 (KeyError 'fx'), so its run goes
    # without trace and scipy's minimize, as badr's module calls it, gets a callback that
    # records each accepted iterate and halts the run (StopIteration) at the limit
    accepted: list[np.ndarray] = []
    result: dict = {}
    if args.solver == "slsqp":
        import badr.algorithms.slsqp as slsqp_module

        minimize = slsqp_module.minimize

        def record(x):
            accepted.append(np.array(x, dtype=float))
            if time.perf_counter() > clock["deadline"]:
                clock["halted"] = True
                raise StopIteration

        def instrumented(**kwargs):
            outcome = minimize(**kwargs, callback=record)
            result.update(
                nit=int(outcome.nit), success=bool(outcome.success), message=str(outcome.message)
            )
            return outcome

        slsqp_module.minimize = instrumented

    start = time.perf_counter()
    clock["deadline"] = start + args.seconds
    with contextlib.redirect_stdout(sys.stderr):  # the package prints its weights and status
        try:
            runner.run(max_iter=args.max_iter, verbose=1)
            weights = np.asarray(runner.group_weights, dtype=float)
            coef, intercept = np.asarray(runner.coef_, dtype=float), float(runner.intercept_)
        except OutOfTime:
            clock["halted"] = True
            # the last accepted iterate, else the start (uniform)
            done = accepted if args.solver == "slsqp" else solver.iterates
            weights = np.asarray(done[-1] if done else np.full(n_groups, 1.0 / n_groups), float)
            # what Badr.run does after its solver: refit the model at the weights
            model.set_group_weights(weights)
            model.fit(dset.X_train, dset.y_train, dset.groups)
            coef, intercept = np.asarray(model.coef_, dtype=float), float(model.intercept_)
        wall = time.perf_counter() - start
    if args.solver == "slsqp":
        iterations = result.get("nit", len(accepted))
        success, message = result.get("success", False), result.get("message", "")
    else:
        iterations = len(solver.iterates) - 1
        success, message = solver.success, solver.message or ""
    if clock["halted"]:
        stop = "time limit"
    elif success:
        stop = "converged"
    elif iterations >= args.max_iter:
        stop = "max_iter cap"
    else:
        stop = f"stopped: {message}"

    out = {
        "version": badr.__version__,
        "solver": args.solver,
        "measure": args.measure,
        "metric_name": metric.name,
        "task": args.task,
        "wall": wall,
        "import_seconds": imported,
        "iterations": iterations,
        "max_iter": args.max_iter,
        "seconds_limit": args.seconds,
        "stop": stop,
        "evaluations": calls,
        "lambda": weights.tolist(),
        "coef": coef.tolist(),
        "intercept": intercept,
    }
    out.update(checks(original, metric, model, dset, weights))
    with open(args.out, "w") as handle:
        json.dump(out, handle)
    return 0


def checks(original: dict, metric, model, dset, weights: np.ndarray) -> dict:
    """The package's own Φ at the final model, and its hypergradient along d = e_0 − e_1
    against (Φ(λ + h d) − Φ(λ − h d)) / 2h (one-sided at the simplex's edge)."""
    out: dict = {}
    try:
        model.set_group_weights(weights)
        model.fit(dset.X_train, dset.y_train, dset.groups)
        out["package_phi_train"] = float(metric.fun(model.coef_, dset, "train"))
        if len(weights) == 2:
            h = 1e-3
            d = np.array([1.0, -1.0])
            low = max(-h, -weights[0])  # keep both λ within [0, 1]
            high = min(h, weights[1])
            plus = float(original["fun"](weights + high * d))
            minus = float(original["fun"](weights + low * d))
            difference = (plus - minus) / (high - low)
            analytic = float(np.dot(np.asarray(original["grad"](weights)), d))
            out["hypergradient_check"] = {
                "analytic": analytic,
                "finite_difference": difference,
                "step": h,
            }
    except Exception as error:  # a check must not lose the run's result
        out["check_error"] = f"{type(error).__name__}: {error}"
    return out


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(1)
