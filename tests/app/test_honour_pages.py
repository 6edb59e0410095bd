"""The "Hold κ on" control of Explore and Frontier: train by default, kept in the URL, greyed
out where no chosen solver has a κ, absent for a real-valued label; off solves at κ alone."""

from __future__ import annotations

import pytest
from test_pages import start, texts, wait_for_runs

from engine.runs import Store


def test_kappa_is_held_on_train_by_default_and_the_choice_is_kept_in_the_url():
    app = start()
    control = app.sidebar.radio(key="honour")
    assert control.value == "train" and not control.disabled
    assert control.options == ["train", "train + validation", "off"]
    assert "Not held: unconstrained runs without a constraint" in texts(app)
    control.set_value("val").run()
    assert app.query_params["honour"] == "val"
    app.switch_page("pages/frontier.py").run()
    assert not app.exception and app.sidebar.radio(key="honour").value == "val"
    assert start({"honour": "off"}).sidebar.radio(key="honour").value == "off"


def test_the_control_is_greyed_out_without_a_kappa_and_absent_for_a_real_valued_label():
    app = start()
    app.sidebar.checkbox(key="solver:idca").uncheck().run()
    assert not app.exception and app.sidebar.radio(key="honour").disabled
    app.sidebar.radio(key="source").set_value("Communities and Crime (bundled)").run()
    app.sidebar.selectbox(key="label_crime").set_value("violent_crime_rate").run()
    assert not app.exception and "honour" not in [r.key for r in app.sidebar.radio]


@pytest.mark.slow
def test_off_solves_at_kappa_alone_and_shows_no_search():
    app = start()
    app.sidebar.radio(key="honour").set_value("off").run()
    app.sidebar.number_input(key="seconds").set_value(1.0).run()
    app.sidebar.button(key="run").click().run()
    wait_for_runs(app)
    assert not app.exception
    runs = Store().runs()
    assert len(runs) == 2 and all(r.spec.honour is None for r in runs)
    assert "Solves of" not in texts(app)
