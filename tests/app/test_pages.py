"""Every page through Streamlit's AppTest: widgets drive the engine, figures and tables appear,
bad input gives a message, never an exception."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from engine.runs import FINAL, Store
from engine.solvers.catalogue import solver_card

pytestmark = pytest.mark.slow  # tests of several seconds each, started first (conftest.py)

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def start(query: dict | None = None) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=120)
    for key, value in (query or {}).items():
        app.query_params[key] = value
    app.run()
    assert not app.exception, app.exception
    return app


def wait_for_runs(app: AppTest, timeout: float = 120.0) -> None:
    store = Store()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = store.runs()
        if runs and all(r.status in FINAL for r in runs):
            app.run()
            return
        time.sleep(0.3)
    raise AssertionError("runs did not finish")


def axis_titles(app: AppTest) -> tuple[str, str]:
    """The x and y axis titles of the page's one figure."""
    (figure,) = app.get("plotly_chart")
    layout = json.loads(figure.proto.spec)["layout"]
    return layout["xaxis"]["title"]["text"], layout["yaxis"]["title"]["text"]


def texts(app: AppTest) -> str:
    return " ".join(m.value for m in app.markdown) + " ".join(c.value for c in app.caption)


def metrics_frame(app: AppTest):
    """Explore's comparison table (one row per model), whatever tables follow it."""
    return next(d.value for d in app.dataframe if "model" in d.value.columns)


def test_explore_opens_on_adult_and_describes_the_interval_in_words():
    app = start()
    assert "Adult (UCI)" in texts(app)
    assert "each group's top 5 %–30 % of scores" in texts(app)
    assert any("Press **Run**" in i.value for i in app.info)


def test_the_first_view_has_controls_and_no_chart_and_charts_follow():
    app = start()
    assert app.sidebar.button(key="run") and not app.get("plotly_chart")
    app.run()  # what the first view's timer does once it shows, or any later interaction
    assert not app.exception and len(app.get("plotly_chart")) == 1  # the groups of the data


def test_explore_runs_solvers_and_shows_exact_metrics_and_figures():
    app = start()
    app.sidebar.number_input(key="seconds").set_value(3.0).run()
    app.sidebar.button(key="run").click().run()
    assert not app.exception
    wait_for_runs(app)
    assert not app.exception
    table = metrics_frame(app)
    assert set(table["model"]) == {"idca (κ = 0.05)", "unconstrained"}
    assert table["test pSP"].notna().all() and table["κ"].dropna().tolist() == [0.05]
    # each run's verdict is its badge in the status line above the table
    badges = {m.value for m in app.markdown if m.value.startswith("**idca (κ = 0.05)**")}
    (line,) = badges
    labels = set(re.findall(r"-badge\[([^\]]+)\]", line))
    assert labels & {
        "meets κ",
        "misses κ",
        "cannot tell at this size",
        "surrogate only",
        "degenerate",
    }  # 3 s on a shared machine may not suffice
    assert "verdict" not in table.columns
    assert "Not converged (" in texts(app)  # IDCA needs more than 3 s
    # the test value's 95 % interval beside it, "low–high"
    intervals = table["test pSP 95 %"].tolist()
    assert all(len(text.split("–")) == 2 for text in intervals)
    # a cell without a value (the reference's κ) shows "—", not Streamlit's "None"
    (shown,) = [d for d in app.dataframe if "model" in d.value.columns]
    assert shown.proto.placeholder == "—"
    # κ is held on the training data by default: IDCA's solves follow the table, its first
    # at κ itself, the model the run reports marked
    assert "**Solves of idca (κ = 0.05)**, holding κ on train" in texts(app)
    search = app.dataframe[1].value
    assert search["kappa_prime"].iloc[0] == 0.05 and search["chosen"].tolist().count("◆") == 1
    charts = len(app.get("plotly_chart"))
    assert charts >= 4  # trajectories, CDF, rank–rank, densities
    assert any(b.label == "Download report (HTML)" for b in app.get("download_button"))
    app.session_state["interval_helper"] = True  # the person opens the interval helper
    app.run()
    assert len(app.get("plotly_chart")) == charts + 2 and "positive rate" in texts(app)


def test_a_cached_result_is_shown_without_running_again():
    app = start()
    app.sidebar.number_input(key="seconds").set_value(1.0).run()
    app.sidebar.button(key="run").click().run()
    wait_for_runs(app)
    before = {r.id: r.finished for r in Store().runs()}
    app.sidebar.number_input(key="kappa").set_value(0.1).run()
    # the unconstrained model does not depend on κ, so only it is known for κ = 0.1
    assert metrics_frame(app)["model"].tolist() == ["unconstrained"]
    app.sidebar.number_input(key="kappa").set_value(0.05).run()
    assert set(metrics_frame(app)["model"]) == {"idca (κ = 0.05)", "unconstrained"}
    assert {r.id: r.finished for r in Store().runs()} == before
    # the trajectories' axis lives in the URL, so a link shows them against the same one
    assert app.query_params["trajectory_x"] == "iteration"
    linked = start({"trajectory_x": "seconds", "seconds": "1.0"}).run()  # charts come second
    assert linked.session_state["trajectory_x"] == "seconds"


def test_query_parameters_set_the_view():
    app = start({"kappa": "0.2", "interval": ["10", "40"], "source": "Adult (bundled)"})
    assert app.sidebar.number_input(key="kappa").value == 0.2
    assert app.sidebar.slider(key="interval").value == (10, 40)
    assert "each group's top 10 %–40 % of scores" in texts(app)


def test_bad_inputs_are_messages_not_tracebacks(tmp_path):
    app = start()
    app.sidebar.number_input(key="kappa").set_value(1.5).run()
    assert not app.exception and "outside (0, 1]" in app.error[0].value
    app.sidebar.number_input(key="kappa").set_value(0.05).run()
    app.sidebar.slider(key="interval").set_value((30, 30)).run()
    assert not app.exception and "interval is empty" in app.error[0].value
    app.sidebar.slider(key="interval").set_value((5, 30)).run()
    app.sidebar.radio(key="source").set_value("ACS census files").run()
    app.sidebar.text_input(key="acs_root").set_value(str(tmp_path)).run()
    assert not app.exception and "person file for CT is missing" in app.error[0].value
    assert "choose the ACS folder" in app.error[0].value and "--" not in app.error[0].value
    assert app.sidebar.number_input(key="kappa").value == 0.05  # the rest of the sidebar stays
    assert app.sidebar.checkbox(key="solver:idca").value
    assert any("the Runs page lists them" in c.value for c in app.caption)
    app.sidebar.radio(key="source").set_value("Upload a CSV").run()
    assert not app.exception and "upload a CSV file" in app.error[0].value


def test_connecticut_acs_files_from_shared(ct_acs_root):
    app = start()
    app.sidebar.radio(key="source").set_value("ACS census files").run()
    app.sidebar.text_input(key="acs_root").set_value(str(ct_acs_root)).run()
    assert not app.exception
    assert "ACSIncome CT 2018 (reduced)" in texts(app)


def test_frontier_page_sweeps_and_draws_the_frontier():
    app = start()
    app.switch_page("pages/frontier.py").run()
    assert not app.exception
    app.sidebar.text_input(key="kappas").set_value("0.2, 0.05").run()
    app.sidebar.number_input(key="seconds").set_value(1.0).run()
    app.sidebar.button(key="sweep").click().run()
    wait_for_runs(app)
    assert not app.exception
    runs = Store().runs()
    assert len(runs) == 3  # two κ for IDCA and the unconstrained model
    assert app.get("plotly_chart") and "3 of 3 runs finished" in app.get("progress")[0].text
    # κ held on the training data by default, where there is a κ: the chart says so, once
    assert sorted((r.spec.solver, r.spec.honour) for r in runs) == [
        ("idca", "train"),
        ("idca", "train"),
        ("unconstrained", None),
    ]
    held = "κ held on the training data: each run reports its first model"
    (figure,) = app.get("plotly_chart")
    subtitle = json.loads(figure.proto.spec)["layout"]["title"]["subtitle"]["text"]
    assert held in subtitle.replace("<br>", " ") and held not in texts(app)
    table = app.dataframe[0].value
    assert len(table) == 3 and (table["solver"] == "unconstrained").sum() == 1
    assert table.loc[table["solver"] == "unconstrained", "κ verdict"].tolist() == ["—"]
    # one seed: every point's bands are its run's held-out intervals
    assert (table["score 95 %"] != "").all() and (table["fairness 95 %"] != "").all()
    assert (app.radio(key="score_axis").value, app.radio(key="spread").value) == ("accuracy", "ci")
    assert axis_titles(app) == (
        "fairness = 1 − pSP (exact, test) ± 95 % interval",
        "accuracy (exact, test) ± 95 % interval",
    )
    tight = next(r for r in runs if r.spec.kappa == 0.05)
    app.session_state["frontier"] = {
        "selection": {  # the person clicks IDCA's κ = 0.05 point
            "points": [{"customdata": [tight.id]}],
            "point_indices": [0],
            "box": [],
            "lasso": [],
        }
    }
    app.run()
    assert "**Solves of idca (κ = 0.05)**, holding κ on train" in texts(app)
    # the clicked model's case: its cost against the reference and its groups' rates
    assert "**What fairness costs** against the unconstrained model" in texts(app)
    (groups,) = [f.value for f in app.dataframe if "selection_rate" in f.value.columns]
    scores, ids = Store().load_scores(tight.id)
    assert list(groups["rows"]) == np.bincount(ids).tolist()
    assert groups["selection_rate"].tolist() == pytest.approx(
        [np.mean(scores[ids == k] > 0) for k in range(len(groups))]
    )
    app.text_area(key=f"decision_note_{tight.id}").input("the tightest κ that keeps accuracy")
    next(b for b in app.button if b.label == "Choose this model").click().run()
    assert not app.exception and app.get("download_button")
    app.sidebar.text_input(key="kappas").set_value("0.2, lots").run()
    assert "numbers separated by commas" in app.error[0].value


def test_a_sweep_over_two_intervals_draws_a_series_each_and_the_kappa_by_interval_view():
    app = start()
    app.switch_page("pages/frontier.py").run()
    app.sidebar.text_input(key="kappas").set_value("0.2").run()
    app.sidebar.text_input(key="extra_intervals").set_value("10-40").run()
    app.sidebar.number_input(key="seconds").set_value(2.0).run()  # a reference ends with a model
    app.sidebar.button(key="sweep").click().run()
    wait_for_runs(app)
    assert not app.exception and len(Store().runs()) == 4  # IDCA and the reference, per interval
    charts = {c.key: json.loads(c.proto.spec) for c in app.get("plotly_chart")}
    idca = {r.id for r in Store().runs() if r.spec.solver == "idca"}
    drawn = {ids[0] for t in charts["frontier"]["data"] for ids in t.get("customdata", [])}
    assert idca <= drawn  # each in its series, or marked (2 s runs may be near the majority)
    stars = [t for t in charts["frontier"]["data"] if t.get("name") == "unconstrained reference"]
    assert len(stars) == 1 and len(stars[0]["customdata"]) == 2  # one reference per interval
    grid = charts["kappa_interval"]["data"][0]
    assert grid["x"] == ["[5 %, 30 %)", "[10 %, 40 %)"] and grid["y"] == ["κ = 0.2"]


def test_a_frontier_sweep_continues_along_kappa_unless_told_to_start_each_point_afresh():
    app = start()
    app.switch_page("pages/frontier.py").run()
    assert app.sidebar.checkbox(key="continuation").value  # on by default
    app.sidebar.text_input(key="kappas").set_value("0.1, 0.3, 0.2").run()
    app.sidebar.number_input(key="seconds").set_value(1.0).run()
    app.sidebar.button(key="sweep").click().run()
    wait_for_runs(app)
    idca = {r.spec.kappa: r for r in Store().runs() if r.spec.solver == "idca"}
    assert set(idca) == {0.3, 0.2, 0.1}
    # two chains, tight to loose: 0.1 → 0.3 and 0.2 alone; the first of each starts cold
    assert idca[0.3].spec.warm_start == idca[0.1].id
    assert idca[0.1].spec.warm_start is None and idca[0.2].spec.warm_start is None
    # it starts from that model, or says why not (a 1 s run may not hold its κ on train)
    assert f"the model of run {idca[0.1].id}" in idca[0.3].reason
    assert "4 of 4 runs finished" in app.get("progress")[0].text  # and the unconstrained model
    app.sidebar.checkbox(key="continuation").uncheck().run()
    app.sidebar.button(key="sweep").click().run()
    wait_for_runs(app)
    cold = [r for r in Store().runs() if r.spec.solver == "idca" and r.spec.warm_start is None]
    assert sorted(r.spec.kappa for r in cold) == [0.1, 0.2, 0.3]  # one new run
    assert len(Store().runs()) == 5


def test_an_auc_gap_frontier_shows_auc_and_the_references_own_gap():
    """Paper 004's sweeps default to AUC with standard errors, and the unconstrained reference
    carries the exact gap of the sweep's variant (here intra-group), not the group AUC gap."""
    from engine.data.sources import load_prepared
    from engine.fairness.auc import intra_group_auc_gap

    app = start()
    app.switch_page("pages/frontier.py").run()
    app.sidebar.selectbox(key="family").set_value("auc_gap").run()
    app.sidebar.selectbox(key="auc_variant").set_value("intra").run()
    app.sidebar.text_input(key="kappas").set_value("0.1").run()
    app.sidebar.number_input(key="n_seeds").set_value(2).run()
    app.sidebar.number_input(key="seconds").set_value(1.0).run()
    app.sidebar.button(key="sweep").click().run()
    wait_for_runs(app)
    assert not app.exception
    assert (app.radio(key="score_axis").value, app.radio(key="spread").value) == ("auc", "se")
    assert axis_titles(app) == (
        "fairness = 1 − AUC gap (exact, test) ± s.e.",
        "AUC (exact, test) ± s.e.",
    )
    table = app.dataframe[0].value
    store = Store()
    gaps = []
    for row in store.runs():
        if row.spec.solver == "unconstrained":
            spec = row.spec
            scores, groups = store.load_scores(row.id)
            gaps.append(
                intra_group_auc_gap(scores, groups, load_prepared(spec.data, spec.prepare).test.y)
            )
    (reference,) = table.loc[table["solver"] == "unconstrained", "constraint"]
    assert len(gaps) == 2 and reference == pytest.approx(sum(gaps) / 2)
    assert (table["score 95 %"] != "").all()  # two seeds: every point has its band (± s.e.)
    app.radio(key="spread").set_value("ci").run()
    assert axis_titles(app)[1] == "AUC (exact, test) ± 95 % CI"


def test_runs_page_lists_the_store_and_about_page_explains():
    app = start()
    app.switch_page("pages/runs.py").run()
    assert not app.exception and any("No runs match" in i.value for i in app.info)
    app.switch_page("pages/about.py").run()
    assert not app.exception
    assert (
        app.get("latex")
        and "ranks counted from the top" in " ".join(m.value for m in app.markdown).lower()
    )


def test_an_mlp_takes_its_widths_and_activation_and_greys_out_linear_only_solvers():
    app = start()
    app.sidebar.selectbox(key="model").set_value("mlp").run()
    app.sidebar.text_input(key="hidden").set_value("64 x").run()
    assert not app.exception
    assert any("whole numbers such as 64 32, not '64 x'" in e.value for e in app.error)
    app.sidebar.text_input(key="hidden").set_value("16, 8").run()
    app.sidebar.selectbox(key="activation").set_value("sigmoid").run()
    assert not app.exception and not app.error
    assert app.sidebar.checkbox(key="solver:idca").disabled
    assert not app.sidebar.checkbox(key="solver:ssl_alm").disabled
    assert app.query_params["hidden"] == "16, 8" and app.query_params["activation"] == "sigmoid"


def test_the_group_loss_gap_takes_its_pairs_and_losses_from_the_sidebar(app_home):
    app = start()
    app.sidebar.selectbox(key="family").set_value("group_loss_gap").run()
    app.sidebar.selectbox(key="pairs").set_value("vs_mean").run()
    app.sidebar.selectbox(key="loss_condition").set_value("odds").run()
    app.sidebar.number_input(key="seconds").set_value(1.0).run()
    app.sidebar.button(key="run").click().run()
    assert not app.exception
    wait_for_runs(app)
    constraints = [r.spec.constraint for r in Store(app_home).runs() if r.spec.constraint]
    assert constraints and all(
        c.pairs == "vs_mean" and c.options == (("condition", "odds"),) for c in constraints
    )
    assert app.query_params["loss_condition"] == "odds"


def test_the_auc_gap_takes_its_example_and_c1_c2_from_the_sidebar_only_for_auc_gap():
    app = start()
    assert "auc_variant" not in [box.key for box in app.sidebar.selectbox]
    app.sidebar.selectbox(key="family").set_value("auc_gap").run()
    variant = app.sidebar.selectbox(key="auc_variant")
    assert variant.value == "group" and "Ex. 5 BPSN vs BNSP AUC" in variant.options
    variant.set_value("bpsn").run()
    app.sidebar.number_input(key="auc_c1").set_value(0.5).run()
    assert not app.exception
    assert app.query_params["auc_variant"] == "bpsn" and app.query_params["auc_c1"] == "0.5"
    app.sidebar.selectbox(key="family").set_value("group_loss_gap").run()
    keys = [box.key for box in app.sidebar.selectbox]
    assert "auc_variant" not in keys and "pairs" in keys


def test_a_solver_tuned_first_runs_its_trials_and_shows_the_setting_its_rule_picks():
    """ssg's plan (paper 003 G.7) holds nothing fixed, so the run shown is the chosen trial:
    no run besides the trials and the reference."""
    app = start({"solvers": ["ssg", "unconstrained"], "tune": "True", "seconds": "1.0"})
    assert app.sidebar.checkbox(key="tune").value
    grid = solver_card("ssg").tuning.settings()
    assert f"ssg (κ = 0.05) tunes first: {len(grid)} trials" in texts(app)
    app.run()  # what the first view's timer does once it shows
    app.sidebar.button(key="run").click().run()
    assert f"Tuning ssg (κ = 0.05): 0 of {len(grid)} trials ended." in texts(app)
    wait_for_runs(app)
    runs = Store().runs()
    trials = [r for r in runs if r.spec.solver == "ssg"]
    assert len(runs) == len(grid) + 1 and len(trials) == len(grid)
    assert sorted(r.spec.config["epsilon"] for r in trials) == sorted(s["epsilon"] for s in grid)
    (expander,) = [
        e for e in app.expander if e.label.startswith("Tuned ssg (κ = 0.05) on 4 trials")
    ]
    shown = metrics_frame(app)
    assert set(shown["model"]) == {"ssg (κ = 0.05)", "unconstrained"}
    trial_table = next(d.value for d in app.dataframe if "epsilon" in d.value.columns)
    chosen = trial_table[trial_table["chosen"] == "◆"]["epsilon"].tolist()
    assert len(chosen) == 1 and f"epsilon = {chosen[0]}" in expander.label


def test_a_frontier_tuned_first_draws_each_point_with_the_options_its_own_trials_chose():
    """`sweep --tune` on the page: every κ of a solver with a paper grid runs its trials, and the
    point drawn is the setting its rule picks (ssg's plan holds nothing fixed, so the chosen
    trial itself); the reference runs as it is, and no point chains from another."""
    app = start({"solvers": ["ssg", "unconstrained"], "tune": "True", "seconds": "1.0"})
    app.switch_page("pages/frontier.py").run()
    assert not app.exception and app.sidebar.checkbox(key="tune").value
    app.sidebar.text_input(key="kappas").set_value("0.2, 0.05").run()
    grid = solver_card("ssg").tuning.settings()
    (button,) = [b for b in app.sidebar.button if b.key == "sweep"]
    assert button.label == f"Tune, then sweep ({2 * len(grid) + 1} runs)"
    assert f"ssg (κ = 0.05) tunes first: {len(grid)} trials" in texts(app)
    button.click().run()
    wait_for_runs(app)
    runs = Store().runs()
    trials = [r for r in runs if r.spec.solver == "ssg"]
    assert len(trials) == 2 * len(grid) and len(runs) == len(trials) + 1
    assert all(r.spec.warm_start is None for r in runs)
    tuned = [e.label for e in app.expander if e.label.startswith("Tuned ssg")]
    assert len(tuned) == 2 and all(f"on {len(grid)} trials" in label for label in tuned)
    (figure,) = [c for c in app.get("plotly_chart") if c.key == "frontier"]
    drawn = {
        ids[0] for t in json.loads(figure.proto.spec)["data"] for ids in t.get("customdata", [])
    }
    # one chosen trial per κ (unless none ended with a model, which the expander then says)
    chosen = drawn & {r.id for r in trials}
    answered = [label for label in tuned if "no trial ended" not in label]
    assert len(chosen) == len(answered) and {r.spec.kappa for r in trials if r.id in chosen} <= {
        0.2,
        0.05,
    }
