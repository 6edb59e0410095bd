"""The download path, for real, against a census-layout server on 127.0.0.1."""

import functools
import threading
import zipfile
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from engine.cli import main
from engine.data.acs import ACSSpec
from engine.data.synthetic_pums import write_census_zip, write_synthetic_pums
from engine.errors import UserError


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def census(tmp_path, monkeypatch):
    """A local HTTP server whose folder mirrors the census PUMS tree; yields that folder."""
    served = tmp_path / "served"
    (served / "pums").mkdir(parents=True)
    handler = functools.partial(QuietHandler, directory=str(served))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("FAIRFRONT_ACS_URL", f"http://127.0.0.1:{server.server_port}/pums")
    yield served / "pums"
    server.shutdown()
    server.server_close()


def publish(census, tmp_path, state="CT", year=2018):
    """Put a census-layout zip of a synthetic state file on the server; returns the CSV."""
    source = write_synthetic_pums(tmp_path / "made", state, year, n_persons=1500)
    write_census_zip(source, census / str(year) / "1-Year" / f"csv_p{state.lower()}.zip")
    return source


def test_missing_file_is_downloaded_unpacked_and_read(census, tmp_path):
    source = publish(census, tmp_path)
    root = tmp_path / "acs"
    seen = []
    spec = ACSSpec(states=("CT",), root=str(root), task="employment", allow_download=True)
    (path,) = spec.files(progress=lambda done, total: seen.append((done, total)))
    assert path == root / "2018" / "1-Year" / "psam_p09.csv"
    assert path.read_bytes() == source.read_bytes()
    assert seen and seen[-1][0] == seen[-1][1] > 0
    assert list(path.parent.iterdir()) == [path]  # the zip is gone
    assert len(spec.load().frame) > 0


def test_download_is_not_attempted_unless_allowed(census, tmp_path):
    publish(census, tmp_path)
    with pytest.raises(UserError, match="allow the download"):
        ACSSpec(states=("CT",), root=str(tmp_path / "acs")).files()


def test_server_errors_and_bad_archives_are_explained(census, tmp_path):
    root = str(tmp_path / "acs")
    with pytest.raises(UserError, match="could not download .*csv_pny.zip: HTTP 404"):
        ACSSpec(states=("NY",), root=root, allow_download=True).files()
    broken = census / "2018" / "1-Year" / "csv_pma.zip"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_bytes(b"this is not a zip")
    with pytest.raises(UserError, match="not a zip archive"):
        ACSSpec(states=("MA",), root=root, allow_download=True).files()
    with zipfile.ZipFile(census / "2018" / "1-Year" / "csv_pri.zip", "w") as bundle:
        bundle.writestr("readme.txt", "nothing here")
    with pytest.raises(UserError, match="holds readme.txt, not psam_p44.csv"):
        ACSSpec(states=("RI",), root=root, allow_download=True).files()
    assert not any((tmp_path / "acs").rglob("*.csv"))


def test_cli_downloads_with_progress(census, tmp_path, capsys):
    publish(census, tmp_path, state="VT", year=2021)
    code = main(
        [
            "data",
            "show",
            "--source",
            "acs",
            "--state",
            "VT",
            "--year",
            "2021",
            "--task",
            "employment",
            "--acs-root",
            str(tmp_path / "acs"),
            "--download",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert "downloading:" in captured.err and "MB" in captured.err
    assert "ACSEmployment VT 2021" in captured.out
