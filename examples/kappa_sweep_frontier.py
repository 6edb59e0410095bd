"""The accuracy–fairness frontier over κ, saved as an interactive HTML page: one FairFront
classifier per κ (IDCA under pSP on each group's top 5 %–30 % of scores), judged on the test rows,
each point labelled with its verdict, beside the unconstrained model.

    .venv/bin/python examples/kappa_sweep_frontier.py [--rows 4000] [--seconds 20] [--max-iter N] [--out frontier.html]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
from adult_data import adult_sample

from engine import FairFrontClassifier
from engine.fairness import psp

INTERVAL = (0.05, 0.30)
KAPPAS = (0.3, 0.2, 0.1, 0.05, 0.02)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--seconds", type=float, default=20.0, help="time budget of each fit")
    parser.add_argument("--max-iter", type=int, help="iteration budget of each fit (default none)")
    parser.add_argument("--out", type=Path, default=Path("frontier.html"))
    args = parser.parse_args()
    X, y, X_test, y_test = adult_sample(args.rows, args.rows)
    test_groups = pd.factorize(X_test["sex"], sort=True)[0]
    settings = [("unconstrained", None, None)] + [("idca", "pSP", kappa) for kappa in KAPPAS]
    points = []
    for solver, constraint, kappa in settings:
        model = FairFrontClassifier(
            solver=solver,
            constraint=constraint,
            kappa=kappa or 0.05,
            interval=INTERVAL,
            max_seconds=args.seconds,
            max_iter=args.max_iter,
            random_state=0,
        )
        model.fit(X, y, sensitive_features="sex")
        unfairness = psp(model.decision_function(X_test), test_groups, *INTERVAL)
        points.append(
            {
                "κ": "none" if kappa is None else kappa,
                "accuracy": model.score(X_test, y_test),
                "fairness": 1.0 - unfairness,
                "verdict": model.verdict_.summary,
            }
        )
        print(
            f"κ = {points[-1]['κ']!s:<6} test accuracy {points[-1]['accuracy']:.4f}  "
            f"test 1 − pSP {points[-1]['fairness']:.4f}  {points[-1]['verdict']}"
        )
    table = pd.DataFrame(points)
    figure = go.Figure(
        go.Scatter(
            x=table["fairness"],
            y=table["accuracy"],
            mode="lines+markers+text",
            text=[f"κ = {k}" for k in table["κ"]],
            textposition="top center",
            customdata=table[["verdict"]],
            hovertemplate="%{text}<br>%{customdata[0]}<extra></extra>",
        )
    )
    figure.update_layout(
        title="Adult by sex: test accuracy against test 1 − pSP on [5 %, 30 %)",
        xaxis_title="1 − pSP (test)",
        yaxis_title="accuracy (test)",
    )
    figure.write_html(args.out)  # self-contained: opens offline
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
