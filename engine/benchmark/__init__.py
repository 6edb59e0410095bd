"""Paper 000's benchmark views: many seeded runs per solver, compared under one time budget.

- `bands`: mean and Q1–Q3 band of the runs' trajectories on 0.5 s bins (Figs. 1, 2, 5).
- `criteria`: Table 2's fairness criteria and the inaccuracy (from `engine.fairness.criteria`),
  the groups' accuracy difference and the Wasserstein distance between the groups' predicted
  probabilities (Table 4, Figs. 3, 4), None where undefined; `report_criteria` gives them as a
  run report's flat dict.
- `summary`: mean ± std per solver with the best value of each column marked (Table 4).
- `tables`: the final models' mean ± std as the Benchmark page's tables, narrow enough for a
  laptop's main column, each header one quantity with its unit.
- `figures`: the Plotly figures of all of these and of hyper-parameter grids (Tables 5–12).
"""
