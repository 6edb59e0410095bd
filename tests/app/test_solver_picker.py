"""The sidebar's solver picker: the family's proposed solvers first, the others by paper in
collapsed groups, the refused ones once with why; a solver that needs the pairwise AUC objective
switches the page's objective when ticked, and back when unticked."""

from __future__ import annotations

import pytest
from test_pages import metrics_frame, start, wait_for_runs

from engine.fairness.families import family_entry
from engine.models import ModelSpec
from engine.solvers.catalogue import PAPER_TOPICS, solver_card, solver_names
from pages.shared.solver_picker import picker_groups, solver_choices


def test_groups_put_the_familys_proposed_solvers_first_and_every_solver_in_one_group():
    choices = solver_choices("pSP", ModelSpec(cross_terms=True), "logistic", None)
    groups = picker_groups("pSP", "pSP", choices)
    first = groups[0]
    assert first.open and first.names == ("idca", "ssg", "unconstrained")
    assert first.title == "Proposed for pSP (paper 003, model (15))"
    names = [name for group in groups for name in group.names]
    assert sorted(names) == sorted(solver_names())  # each solver once
    for group in groups[1:-1]:  # by paper, every one of them able to run
        assert not group.open and len({solver_card(n).paper for n in group.names}) == 1
        assert all(choices[n].available for n in group.names)
    refused = groups[-1]
    assert refused.title == "Not for pSP with this model, objective and grouping"
    assert "grid_search" in refused.names and all(choices[n].refusal for n in refused.names)


def test_a_solver_that_needs_the_pairwise_auc_loss_is_offered_with_it_not_refused():
    choices = solver_choices("auc_gap", ModelSpec(), "logistic", None)
    assert choices["sfls"].available and choices["sfls"].objective == "pairwise_auc"
    assert choices["idca"].objective is None  # it trains the page's objective
    groups = picker_groups("auc_gap", "auc_gap", choices)
    assert groups[0].names == (*family_entry("auc_gap").proposed, "unconstrained")
    # once the page trains the pairwise AUC loss, sfls needs no switch
    assert solver_choices("auc_gap", ModelSpec(), "pairwise_auc", None)["sfls"].objective is None


def test_ticking_sfls_switches_the_objective_and_unticking_it_switches_back():
    app = start()
    app.sidebar.selectbox(key="family").set_value("auc_gap").run()
    assert app.sidebar.selectbox(key="objective").value == "logistic"
    box = app.sidebar.checkbox(key="solver:sfls")
    assert not box.disabled and "pairwise AUC" in box.help
    box.check().run()
    assert not app.exception, app.exception
    assert app.sidebar.selectbox(key="objective").value == "pairwise_auc"
    captions = " ".join(c.value for c in app.sidebar.caption)
    assert "sfls needs the" in captions and "every run trains it" in captions
    app.sidebar.checkbox(key="solver:sfls").uncheck().run()
    assert not app.exception and app.sidebar.selectbox(key="objective").value == "logistic"


def test_the_sidebar_shows_the_proposed_solvers_and_folds_the_rest_by_paper():
    app = start()
    solver_boxes = [box.key for box in app.sidebar.checkbox if box.key.startswith("solver:")]
    assert sorted(solver_boxes) == sorted(f"solver:{n}" for n in solver_names())
    folded = {e.label: e for e in app.sidebar.expander if e.label.startswith(("Paper", "Not"))}
    # a paper's group is headed by what the paper is about
    assert any(label.startswith(f"Paper 000 · {PAPER_TOPICS['000']} (") for label in folded)
    assert any(
        label.startswith("Not for pSP with this model, objective and grouping (")
        for label in folded
    )
    assert not any(e.proto.expanded for e in folded.values())
    inside = {box.key for e in folded.values() for box in e.checkbox}
    assert "solver:idca" not in inside and "solver:unconstrained" not in inside
    assert len(solver_boxes) - len(inside) == 3  # idca, ssg and the reference on show


@pytest.mark.slow
def test_runs_of_the_pairwise_auc_loss_say_to_read_their_auc_not_their_accuracy(app_home):
    app = start()
    app.sidebar.selectbox(key="family").set_value("auc_gap").run()
    app.sidebar.checkbox(key="solver:idca").uncheck().run()
    app.sidebar.checkbox(key="solver:sfls").check().run()
    app.sidebar.number_input(key="seconds").set_value(1.0).run()
    app.sidebar.button(key="run").click().run()
    wait_for_runs(app)
    assert not app.exception, app.exception
    table = metrics_frame(app)
    assert set(table["model"]) == {"sfls (κ = 0.05)", "unconstrained"}
    assert table["test AUC"].notna().all()
    (said,) = [c.value for c in app.caption if "only ranks the scores" in c.value]
    assert said.startswith("sfls (κ = 0.05), unconstrained train paper 004's pairwise AUC loss")
    assert "read its test AUC" in said


def test_a_solver_for_two_groups_is_refused_before_it_runs_on_data_of_more():
    card = solver_card("auc_postprocess")
    assert card.groups_refusal(2) is None and card.groups_refusal(None) is None
    on_four = solver_choices("auc_gap", ModelSpec(), "pairwise_auc", None, n_groups=4)
    assert not on_four["auc_postprocess"].available
    assert on_four["auc_postprocess"].refusal == card.groups_refusal(4)
    assert "this data has 4; choose a grouping with two" in card.groups_refusal(4)
    assert on_four["sfls"].available  # the others take any number of groups
    assert solver_choices("auc_gap", ModelSpec(), "pairwise_auc", None, 2)[
        "auc_postprocess"
    ].available


def test_the_page_greys_out_a_solver_for_two_groups_on_data_grouped_into_more():
    app = start()
    app.sidebar.selectbox(key="family").set_value("auc_gap").run()
    assert not app.sidebar.checkbox(key="solver:auc_postprocess").disabled  # Adult by sex
    (attribute,) = [m for m in app.sidebar.multiselect if m.key.startswith("attribute_")]
    attribute.set_value(["race"]).run()
    assert not app.exception, app.exception
    box = app.sidebar.checkbox(key="solver:auc_postprocess")
    assert box.disabled and "defined for two protected groups" in box.help
