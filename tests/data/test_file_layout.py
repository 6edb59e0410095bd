"""New rows read as the training data's files lay them out."""

import pandas as pd
import pytest

from engine.data.file_layout import FileLayout, read_rows, source_layout
from engine.errors import UserError

ADULT = source_layout("adult")
NEEDED = ("age", "sex", "native-country")


def test_a_header_names_the_columns_in_any_order_and_case(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("Sex, other ,AGE,native-country\nMale,x,39,?\nFemale,y,50,Cuba\n")
    frame = read_rows(path, NEEDED, ADULT)
    assert list(frame.columns) == ["sex", "age", "native-country"]
    assert frame["age"].tolist() == [39, 50] and frame["native-country"].isna().tolist() == [
        True,
        False,
    ]


def test_adults_files_are_read_without_a_header_with_or_without_the_label(tmp_path):
    path = tmp_path / "adult.test"
    line = "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, ?"
    path.write_text(f"|1x3 Cross validator\n{line}, <=50K.\n{line}, >50K.\n\n")
    frame = read_rows(path, NEEDED, ADULT)
    assert frame["age"].tolist() == [25, 25] and frame["sex"].tolist() == ["Male", "Male"]
    assert frame["native-country"].isna().all()
    path.write_text(f"{line}\n")
    assert read_rows(path, NEEDED, ADULT)["sex"].tolist() == ["Male"]
    path.write_text(f"{line}, <=50K, extra\n")
    with pytest.raises(UserError, match="16 columns, more than the 15 of a file without one"):
        read_rows(path, NEEDED, ADULT)


def test_acs_files_of_2019_and_later_give_the_renamed_columns(tmp_path):
    path = tmp_path / "psam_p09.csv"
    pd.DataFrame({"AGEP": [30], "RELSHIPP": [20], "JWTRNS": [1]}).to_csv(path, index=False)
    frame = read_rows(path, ("AGEP", "RELP", "JWTR"), source_layout("acs"))
    assert frame.to_dict("list") == {"AGEP": [30], "RELP": [20], "JWTR": [1]}


def test_a_file_that_is_no_table_is_refused(tmp_path):
    path = tmp_path / "rows.csv"
    with pytest.raises(UserError, match="CSV file not found"):
        read_rows(path, NEEDED, FileLayout())
    path.write_bytes(b"age,sex\n\x00\x01\n")
    with pytest.raises(UserError, match="is not a text CSV"):
        read_rows(path, NEEDED, FileLayout())
    path.write_bytes("age,sex\n30,Männlich\n".encode("latin-1"))
    assert read_rows(path, NEEDED, FileLayout())["sex"].tolist() == ["Männlich"]


def test_a_layout_survives_json():
    assert FileLayout.from_dict(ADULT.to_dict()) == ADULT
    with pytest.raises(UserError, match="'missing' of the file layout is not a list"):
        FileLayout.from_dict(ADULT.to_dict() | {"missing": "?"})
