"""Shared fixtures: the ../shared data folder (skipped when absent) and an isolated cache; and
the order the tests are handed out in."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"
SHARED_DATA = SHARED / "data"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first, in their order: pytest-xdist hands tests to its processes in
    collection order, so the long ones spread over the processes from the start and the short
    ones fill the gaps, instead of one process running the last long tests alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session", autouse=True)
def threads_of_a_test_process():
    """Test processes side by side (pytest-xdist's workers) share the cores as the runner's
    workers do (`engine.threads`): more solving threads than cores make every step wait."""
    from solving_env import test_process_threads

    threads = test_process_threads()
    if threads is not None:
        from engine.threads import use_threads

        use_threads(threads)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch):
    """Each test prepares data into its own cache folder, never into data/cache."""
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("FAIRFRONT_CACHE", str(folder))
    return folder


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared data folder {SHARED_DATA}, which is absent")
    return SHARED_DATA


@pytest.fixture
def ct_acs_root(shared_data) -> Path:
    """Real ACS 2018 Connecticut person records in folktables layout (a reduced column set)."""
    root = shared_data / "acs" / "pums"
    if not (root / "2018" / "1-Year" / "psam_p09.csv").is_file():
        pytest.skip(f"needs {root}/2018/1-Year/psam_p09.csv, which is absent")
    return root
