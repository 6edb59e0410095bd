"""The "Choose this model" view: a note and a button store the decision, a download gives its
record as `decision-<run id prefix>.html`, and the run's decisions are listed; a run without a
model gets a caption instead of the form."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest
from toy_tables import write_toy_csv

from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.fairness.constraint_spec import ConstraintSpec
from engine.models import ModelSpec
from engine.runs import RunSpec, Store
from engine.runs.decision import decisions
from engine.runs.worker import execute_run
from engine.solvers import Budget

PAGE = str(Path(__file__).with_name("decision_page.py"))
NOTE = "Bo <risk team>: the tightest κ that keeps accuracy"


@pytest.fixture
def downloads(monkeypatch) -> dict[str, bytes]:
    """What each download button gives, by its file name."""
    given = {}
    add = MediaFileManager.add

    def keep(self, data, mimetype, coordinates, file_name=None, **kwargs):
        given[file_name] = data
        return add(self, data, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add", keep)
    return given


def idca_run(store: Store, folder: Path) -> str:
    """A short IDCA run on the toy table, queued in `store`."""
    spec = RunSpec(
        data=write_toy_csv(folder),
        prepare=PrepareOptions(grouping=(GroupingSpec("g"),)),
        model=ModelSpec(cross_terms=True),
        constraint=ConstraintSpec("pSP", 0.1, (0.1, 0.5)),
        interval=(0.1, 0.5),
        solver="idca",
        budget=Budget(max_iterations=20),
    )
    store.enqueue(spec.run_id, spec.to_dict())
    return spec.run_id


def view(run_id: str) -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.session_state["decision_run"] = run_id
    app.run()
    assert not app.exception, app.exception
    return app


def test_choosing_a_model_stores_the_decision_and_offers_its_record(app_home, tmp_path, downloads):
    store = Store(app_home)
    run_id = idca_run(store, tmp_path)
    execute_run(str(store.home), run_id)
    app = view(run_id)
    assert not app.get("download_button") and not app.dataframe
    app.text_area[0].input(NOTE)
    app.button[0].click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    (decision,) = decisions(store, run_id)
    assert decision.note == NOTE
    record = downloads[f"decision-{run_id[:8]}.html"]
    text = record.decode() if isinstance(record, bytes) else record
    assert decision.checksum in text and "&lt;risk team&gt;" in text
    assert len(app.dataframe) == 1 and app.dataframe[0].value["note"].tolist() == [NOTE]


def test_an_empty_note_is_refused_and_nothing_is_stored(app_home, tmp_path, downloads):
    store = Store(app_home)
    run_id = idca_run(store, tmp_path)
    execute_run(str(store.home), run_id)
    app = view(run_id)
    app.button[0].click().run()
    assert "needs a note" in app.error[0].value
    assert decisions(store) == [] and not downloads


def test_a_run_still_queued_has_no_form(app_home, tmp_path):
    store = Store(app_home)
    run_id = idca_run(store, tmp_path)
    app = view(run_id)
    assert not app.button and "still queued" in app.caption[0].value
