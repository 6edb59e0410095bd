"""Where FairFront keeps data on disk; each location can be moved by an environment variable."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
BUNDLED_DATA = PROJECT_ROOT / "data"


def acs_root() -> Path:
    """Root of the folktables-layout ACS folder: ROOT/<year>/<horizon>/psam_pNN.csv."""
    return Path(os.environ.get("FAIRFRONT_ACS_ROOT", BUNDLED_DATA / "acs"))


def cache_root() -> Path:
    """Folder of prepared-data caches and generated synthetic files."""
    return Path(os.environ.get("FAIRFRONT_CACHE", BUNDLED_DATA / "cache"))


CLASSIC_ROOT_VARIABLE = "FAIRFRONT_CLASSIC_ROOT"


def classic_roots() -> tuple[Path, ...]:
    """Folders searched in order for the classic data sets (COMPAS, German credit, Communities and
    Crime, Law school): $FAIRFRONT_CLASSIC_ROOT when set, the project's data/classic/ (bundled
    and `make classic-data` files), then ../shared/data/classic/ beside the project (tests)."""
    chosen = os.environ.get(CLASSIC_ROOT_VARIABLE)
    roots = (Path(chosen),) if chosen else ()
    return (*roots, BUNDLED_DATA / "classic", PROJECT_ROOT.parent / "shared" / "data" / "classic")
