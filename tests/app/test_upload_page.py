"""The sidebar's CSV upload through Streamlit's AppTest: the file is shown by its own name,
identifier columns are left out with a caption, leaks are warned of, bad files explained."""

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from engine.data.uploads import find_upload, save_upload, upload_key

# a script file, not AppTest.from_function: a function's script becomes the process's __main__
# path, which later spawned processes (a Dask cluster's workers) then fail to re-run
PAGE = str(Path(__file__).with_name("upload_page.py"))


def upload(content: bytes, name: str = "loans 2024.csv") -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.run()
    app.sidebar.radio(key="source").set_value("Upload a CSV").run()
    app.file_uploader(key="csv").set_value((name, content, "text/csv")).run()
    assert not app.exception, app.exception
    return app


def loans(n: int = 300) -> bytes:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    return (
        pd.DataFrame(
            {
                "loan_id": np.arange(n) + 5000,
                "income": rng.normal(50, 10, n).round(1),
                "granted_copy": y,
                "sex": rng.choice(["F", "M"], n),
                "y": y,
            }
        )
        .to_csv(index=False)
        .encode()
    )


def test_an_upload_is_prepared_and_shown_by_its_name():
    app = upload(loans())
    app.multiselect(key="protected").set_value(["sex"]).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert "**loans 2024.csv**" in app.markdown[0].value
    (features,) = [m for m in app.sidebar.multiselect if m.label.startswith("Feature columns")]
    assert features.value == ["income", "granted_copy"]
    assert "'loan_id' (a different number in every row, like an identifier)" in " ".join(
        c.value for c in app.sidebar.caption
    )
    assert app.session_state["spec"].features is None
    warnings = [w.value for w in app.warning]
    assert (
        "column 'granted_copy' alone predicts the label (AUC 1.00): it may leak the answer"
        in warnings
    )
    assert any("left out of the features: 'loan_id'" in c.value for c in app.caption)
    features.set_value(["income", "loan_id"]).run()
    assert app.session_state["spec"].features == ("loan_id", "income")
    assert not [w for w in app.warning if "predicts the label" in w.value]


def test_a_binary_file_is_explained_in_one_sentence():
    app = upload(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "picture.csv")
    assert [e.value for e in app.error] == [
        "picture.csv is not a text CSV (it holds NUL bytes); save it as a UTF-8 CSV"
    ]


def label_box(app: AppTest):
    (box,) = [s for s in app.sidebar.selectbox if s.label == "Label column"]
    return box


def test_the_label_is_preselected_by_its_name_not_its_place():
    rng = np.random.default_rng(1)
    content = (
        pd.DataFrame(
            {
                "income": rng.normal(50, 10, 200).round(1),
                "Target": rng.integers(0, 2, 200),
                "sex": rng.choice(["F", "M"], 200),
            }
        )
        .to_csv(index=False)
        .encode()
    )
    app = upload(content)
    assert label_box(app).value == "Target"
    app.multiselect(key="protected").set_value(["sex"]).run()
    assert not app.error, [e.value for e in app.error]
    assert app.session_state["spec"].label == "Target"


def test_without_a_label_name_the_page_asks_for_the_label():
    rng = np.random.default_rng(2)
    content = (
        pd.DataFrame(
            {
                "granted": rng.integers(0, 2, 200),
                "income": rng.normal(50, 10, 200).round(1),
                "sex": rng.choice(["F", "M"], 200),
            }
        )
        .to_csv(index=False)
        .encode()
    )
    app = upload(content)
    assert label_box(app).value is None
    assert [e.value for e in app.error] == [
        "choose the label column: no column of this file is named like a label (label, target, "
        "y, class, outcome, …)"
    ]
    label_box(app).set_value("granted").run()
    app.multiselect(key="protected").set_value(["sex"]).run()
    assert not app.error, [e.value for e in app.error]
    assert app.session_state["spec"].label == "granted"


def test_a_link_to_an_uploaded_files_view_restores_it_while_the_file_is_kept():
    app = upload(loans())
    app.multiselect(key="protected").set_value(["sex"]).run()
    spec = app.session_state["spec"]
    link = {key: app.query_params[key] for key in ("source", "upload", "csv_label", "protected")}
    assert link["upload"].endswith("/loans 2024.csv") and link["csv_label"] == "y"
    fresh = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    assert not fresh.exception and not fresh.error, [e.value for e in fresh.error]
    restored = fresh.session_state["spec"]
    assert (restored.path, restored.label, restored.protected) == (spec.path, "y", ("sex",))
    assert any("uploaded before and kept on this server" in c.value for c in fresh.sidebar.caption)

    gone = AppTest.from_file(PAGE, default_timeout=60)
    gone.query_params.update(link | {"upload": "0" * 24 + "/loans 2024.csv"})
    gone.run()
    assert not gone.exception
    assert "made from an uploaded file, loans 2024.csv, which a link cannot carry" in " ".join(
        e.value for e in gone.error
    )


def test_a_hand_edited_upload_key_reaches_no_file_outside_the_uploads(tmp_path):
    saved = save_upload(b"a,b\n1,2\n", "x.csv", root=tmp_path)
    assert find_upload(upload_key(saved), root=tmp_path) == ("x.csv", saved)
    (tmp_path / "secret.csv").write_text("a\n")
    for key in ("../../secret.csv", f"{saved.parent.name}/../../secret.csv", "abc/x.csv"):
        assert find_upload(key, root=tmp_path)[1] is None
