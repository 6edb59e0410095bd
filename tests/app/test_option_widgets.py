"""The sidebar's solver option widgets keep to the options' declared bounds and choices
(`engine.options.option`): a number input cannot leave them, a text option is a list."""

from __future__ import annotations

import math

from test_pages import start


def test_the_option_widgets_of_the_default_solvers_keep_to_their_bounds():
    app = start()
    epsilon = app.sidebar.number_input(key="opt:idca:epsilon")  # ε > 0: the next float above 0
    assert (epsilon.min, epsilon.max) == (math.nextafter(0.0, math.inf), None)
    assert app.sidebar.number_input(key="opt:idca:outer_iterations").min == 1  # K > 0, whole
    assert app.sidebar.number_input(key="opt:idca:patience").min == 0
    assert app.sidebar.number_input(key="opt:unconstrained:l2").min == 0.0
    assert app.sidebar.selectbox(key="opt:idca:select").options == ["validation", "last"]
    assert not app.exception, app.exception
