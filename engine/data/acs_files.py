"""ACS PUMS files on disk in the folktables layout, and fetching them from the census."""

from __future__ import annotations

import os
import shutil
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

from folktables.load_acs import _STATE_CODES  # the census FIPS codes folktables' reader uses
from folktables.load_acs import state_list as _FOLKTABLES_STATES

from engine.errors import UserError

CENSUS_PUMS_URL = "https://www2.census.gov/programs-surveys/acs/data/pums"
HORIZONS = ("1-Year", "5-Year")
FIRST_YEAR = 2014  # folktables reads 2014 and later

ALL = "all"
ALL_STATES: tuple[str, ...] = tuple(_FOLKTABLES_STATES)  # the 50 states and Puerto Rico

Progress = Callable[[int, int | None], None]
"""Called with (bytes received, total bytes or None if the server does not say)."""


def pums_base_url() -> str:
    """The census PUMS folder; FAIRFRONT_ACS_URL points it elsewhere (a mirror, a test server)."""
    return os.environ.get("FAIRFRONT_ACS_URL", CENSUS_PUMS_URL).rstrip("/")


def check_state(state: str) -> str:
    """The two-letter code in upper case, or a clear error."""
    code = state.strip().upper()
    if code == "DC":
        raise UserError(
            "the District of Columbia (DC) is not supported: folktables, which reads the ACS "
            "files, has no entry for it"
        )
    if code not in _STATE_CODES:
        raise UserError(
            f"unknown state '{state}'; use a two-letter code such as CT, CA or NY "
            f"(one of {', '.join(sorted(_STATE_CODES))}), or '{ALL}' for every one"
        )
    return code


def expand_states(states: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Checked upper-case codes, in the order given; "all" stands for every state (ALL_STATES)."""
    if any(s.strip().lower() == ALL for s in states):
        return ALL_STATES
    return tuple(check_state(s) for s in states)


def states_label(states: tuple[str, ...]) -> str:
    """States as a data set's name shows them: CT+NY, or "all states"."""
    return "all states" if set(states) == set(ALL_STATES) else "+".join(states)


def check_year_horizon(year: int, horizon: str) -> None:
    if int(year) < FIRST_YEAR:
        raise UserError(
            f"ACS year {year} is not supported; folktables reads {FIRST_YEAR} and later"
        )
    if horizon not in HORIZONS:
        raise UserError(f"ACS horizon must be one of {', '.join(HORIZONS)}, not '{horizon}'")


def state_file_name(state: str, year: int) -> str:
    """The census name of a person file: psam_p09.csv (2017+), ss16pct.csv before."""
    if int(year) >= 2017:
        return f"psam_p{_STATE_CODES[state]}.csv"
    return f"ss{str(year)[-2:]}p{state.lower()}.csv"


def state_file(root: Path, state: str, year: int, horizon: str = "1-Year") -> Path:
    return Path(root) / str(year) / horizon / state_file_name(state, year)


def archive_url(state: str, year: int, horizon: str) -> str:
    return f"{pums_base_url()}/{year}/{horizon}/csv_p{state.lower()}.zip"


def missing_file_error(path: Path, state: str, year: int, horizon: str) -> UserError:
    """The census file is not on disk: where it goes, and the two settings that fix it, by
    the names the page gives them; the command line's flags for them ride along."""
    message = (
        f"the ACS {year} {horizon} person file for {state} is missing: {path}\n"
        f"Put the census file {path.name} there (it is inside {archive_url(state, year, horizon)}), "
        "choose the ACS folder that holds it (FAIRFRONT_ACS_ROOT sets the default), or allow "
        "the download."
    )
    return UserError(message, "On the command line: --acs-root FOLDER, or --download.")


def read_header(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        return handle.readline().strip().replace(" ", "").split(",")


def offline_files(root: Path) -> list[tuple[int, str, str, Path]]:
    """(year, horizon, state, path) of every person file present under `root`."""
    found = []
    for year_dir in sorted(p for p in Path(root).glob("*") if p.name.isdigit()):
        year = int(year_dir.name)
        for horizon in HORIZONS:
            for state in sorted(_STATE_CODES):
                path = state_file(root, state, year, horizon)
                if path.is_file():
                    found.append((year, horizon, state, path))
    return found


def ensure_state_file(
    root: Path,
    state: str,
    year: int,
    horizon: str,
    allow_download: bool,
    progress: Progress | None = None,
) -> Path:
    """The path of the state's person file, downloading it first if allowed and missing."""
    path = state_file(root, state, year, horizon)
    if path.is_file():
        return path
    if not allow_download:
        raise missing_file_error(path, state, year, horizon)
    download_state_file(path, state, year, horizon, progress)
    return path


def download_state_file(
    target: Path, state: str, year: int, horizon: str, progress: Progress | None = None
) -> None:
    """Fetch the census zip for one state, unpack its person file to `target`, drop the zip."""
    url = archive_url(state, year, horizon)
    target.parent.mkdir(parents=True, exist_ok=True)
    archive = target.parent / (url.rsplit("/", 1)[1] + ".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(archive, "wb") as out:
            total = response.headers.get("Content-Length")
            total = int(total) if total is not None else None
            received = 0
            while chunk := response.read(1 << 20):
                out.write(chunk)
                received += len(chunk)
                if progress is not None:
                    progress(received, total)
        _unpack_member(archive, target, url)
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "reason", error)
        if isinstance(error, urllib.error.HTTPError):
            reason = f"HTTP {error.code} {reason}"
        raise UserError(
            f"could not download {url}: {reason}\n"
            f"Without network access, put the unzipped file at {target} yourself."
        ) from error
    finally:
        archive.unlink(missing_ok=True)


def _unpack_member(archive: Path, target: Path, url: str) -> None:
    try:
        with zipfile.ZipFile(archive) as bundle:
            if target.name not in bundle.namelist():
                raise UserError(
                    f"the archive {url} holds {', '.join(bundle.namelist()) or 'nothing'}, "
                    f"not {target.name}"
                )
            partial = target.with_suffix(".csv.part")
            with bundle.open(target.name) as source, open(partial, "wb") as out:
                shutil.copyfileobj(source, out)
            partial.replace(target)
    except zipfile.BadZipFile as error:
        raise UserError(f"the download from {url} is not a zip archive") from error
