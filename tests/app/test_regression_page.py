"""Explore with a real-valued label (Communities and Crime's violent crime rate, bundled): the
label is chosen in the sidebar, only solvers that need neither a constraint family nor a binary
label can run, and the results show RMSE and R² instead of accuracy."""

from __future__ import annotations

import pytest
from test_pages import start, texts, wait_for_runs


@pytest.mark.slow
def test_a_real_valued_label_trains_regressions_and_shows_rmse_and_r2():
    app = start()
    app.sidebar.radio(key="source").set_value("Communities and Crime (bundled)").run()
    app.sidebar.selectbox(key="label_crime").set_value("violent_crime_rate").run()
    assert not app.exception
    assert "violent crimes per person (normalised to [0, 1])" in texts(app)
    assert "mean label" in texts(app)
    assert "no constraint family is defined for one" in texts(app)
    assert app.sidebar.checkbox(key="solver:idca").disabled
    assert not app.sidebar.checkbox(key="solver:unconstrained").disabled
    assert app.sidebar.selectbox(key="objective").value == "squared"
    app.sidebar.number_input(key="seconds").set_value(3.0).run()
    app.sidebar.button(key="run").click().run()
    wait_for_runs(app)
    assert not app.exception
    table = app.dataframe[-1].value
    assert table["model"].tolist() == ["unconstrained"]
    (r2,) = table["test R²"]
    assert r2 < 1 and table["test RMSE"].notna().all() and table["baseline RMSE"].notna().all()
    # without an l2 penalty, 4 groups' cross-terms may overfit 1,195 rows: then it is flagged
    badges = " ".join(m.value for m in app.markdown if m.value.startswith("**unconstrained**"))
    assert ("badge[degenerate]" in badges) == (r2 <= 0)
    assert "test mean gap" in table.columns and "test accuracy" not in table.columns
    assert len(app.get("plotly_chart")) >= 4  # groups, trajectories, CDF, rank–rank, densities


def test_the_frontier_page_sweeps_ridge_regressions_on_a_real_valued_label():
    app = start()
    app.switch_page("pages/frontier.py").run()
    app.sidebar.radio(key="source").set_value("Communities and Crime (bundled)").run()
    app.sidebar.selectbox(key="label_crime").set_value("violent_crime_rate").run()
    assert not app.exception, app.exception
    assert "no constraint family is defined for one" in texts(app)
    assert app.sidebar.selectbox(key="objective").value == "squared"
    assert app.sidebar.checkbox(key="solver:idca").disabled
    for solver in ("badr_front", "badr_implicit", "minimax", "uniform"):
        assert not app.sidebar.checkbox(key=f"solver:{solver}").disabled, solver
