from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def started() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=60)
    app.run()
    assert not app.exception
    return app


def test_default_page_shows_the_bundled_adult_data():
    app = started()
    assert app.subheader[0].value == "Adult (UCI)"
    table = app.dataframe[0].value
    assert table["group"].tolist() == ["Female", "Male"]
    assert table["test size"].sum() == 16_281
    assert [m.value for m in app.metric][2] == "16,281"
    assert not app.error


def test_changing_the_attribute_regroups_the_table():
    app = started()
    app.sidebar.multiselect[0].set_value(["race"]).run()
    app.sidebar.selectbox(key="grouping").set_value("binary").run()
    assert not app.exception
    assert app.dataframe[0].value["group"].tolist() == ["White", "not White"]


def test_synthetic_records_are_labelled_as_such():
    app = started()
    app.sidebar.radio(key="source").set_value("Synthetic ACS records").run()
    app.sidebar.number_input(key="persons").set_value(1500).run()
    assert not app.exception
    assert "(synthetic)" in app.subheader[0].value
    assert any("Synthetic data" in w.value for w in app.warning)


def test_missing_census_files_are_a_message_not_a_traceback(tmp_path):
    app = started()
    app.sidebar.radio(key="source").set_value("ACS census files").run()
    app.sidebar.text_input(key="acs_root").set_value(str(tmp_path)).run()
    assert not app.exception
    assert "person file for CT is missing" in app.error[0].value
    app.sidebar.text_input(key="states").set_value("CT, DC").run()
    assert "District of Columbia" in app.error[0].value


def test_csv_source_asks_for_a_file():
    app = started()
    app.sidebar.radio(key="source").set_value("Upload a CSV").run()
    assert not app.exception
    assert "upload a CSV file" in app.error[0].value
