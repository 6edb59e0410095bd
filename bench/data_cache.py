"""Preparing a data set afresh versus reloading it from the on-disk cache.

Prints, per data set, the seconds to prepare from the raw files, to reload a cached preparation,
and their ratio. Target: every reload under one second.

    .venv/bin/python bench/data_cache.py [--acs-root ../shared/data/acs/pums]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.acs import ACSSpec, SyntheticACSSpec  # noqa: E402
from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402


def timed(spec, options, cache: Path) -> float:
    start = time.perf_counter()
    load_prepared(spec, options, cache_dir=cache)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    default_root = Path(__file__).resolve().parents[2] / "shared/data/acs/pums"
    parser.add_argument("--acs-root", type=Path, default=default_root)
    args = parser.parse_args()
    cases = [
        ("Adult, sex", AdultSpec(), PrepareOptions(grouping=(GroupingSpec("sex"),))),
        (
            "Adult, sex, cross-terms",
            AdultSpec(),
            PrepareOptions(grouping=(GroupingSpec("sex"),), cross_terms=True),
        ),
        (
            "synthetic ACSIncome CA, 50k persons",
            SyntheticACSSpec("CA", 2018, "income", 50_000),
            PrepareOptions(grouping=(GroupingSpec("RAC1P", "binary"),)),
        ),
    ]
    if (args.acs_root / "2018/1-Year/psam_p09.csv").is_file():
        spec = ACSSpec(states=("CT",), year=2018, task="income", root=str(args.acs_root))
        cases.append(
            (
                "ACS CT 2018 income",
                spec,
                PrepareOptions(grouping=(GroupingSpec("RAC1P", "binary"),)),
            )
        )
    print(f"{'data set':<38}{'prepare s':>11}{'reload s':>10}{'prepare/reload':>16}")
    with tempfile.TemporaryDirectory() as folder:
        for name, spec, options in cases:
            spec.files()  # generated files are written before timing
            fresh = timed(spec, options, Path(folder))
            reload = min(timed(spec, options, Path(folder)) for _ in range(3))
            print(f"{name:<38}{fresh:>11.3f}{reload:>10.3f}{fresh / reload:>16.1f}")


if __name__ == "__main__":
    main()
