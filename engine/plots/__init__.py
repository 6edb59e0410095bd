"""Plotly figures of stored run data: pure functions, numbers in, `go.Figure` out, one module per
figure kind (trajectories, scores by group, intervals, the frontier, the data summary), all in the
house style of `engine.plots.style`."""
