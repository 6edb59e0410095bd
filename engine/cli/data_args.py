"""Command-line flags that choose a data source and its preparation (shared by sub-commands)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.data.acs import ACSSpec, SyntheticACSSpec
from engine.data.acs_tasks import ALL_TASKS
from engine.data.adult import AdultSpec
from engine.data.classic import CLASSIC, ClassicSpec
from engine.data.csv_source import CSVSpec
from engine.data.grouping import MODES
from engine.data.paths import acs_root
from engine.data.prepare import PrepareOptions
from engine.data.sources import DataSpec, grouping_from_args
from engine.data.subgroups import SubgroupSpec
from engine.data.synthetic_pums import FULL_SIZE_PERSONS
from engine.errors import UserError
from engine.task import Task

DEFAULT_ATTRIBUTE = {
    "adult": "sex",
    "acs": "SEX",
    "synthetic": "SEX",
    **{kind: data.protected[0] for kind, data in CLASSIC.items()},
}


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group("data source")
    source.add_argument(
        "--source",
        "--data",
        dest="source",
        choices=("adult", *CLASSIC, "acs", "synthetic", "csv"),
        default="adult",
        help="adult (bundled, default); compas, german, crime, law (classic data sets: German "
        "credit and Communities and Crime bundled, COMPAS and Law school by `make classic-data`); "
        "acs (census files via folktables); synthetic (seeded census-layout records); "
        "csv (your table)",
    )
    source.add_argument(
        "--state",
        nargs="+",
        default=["CT"],
        metavar="ST",
        help="ACS state code(s), or 'all' for the 50 states and Puerto Rico; several are pooled "
        "(default CT)",
    )
    source.add_argument("--year", type=int, default=2018, help="ACS survey year (default 2018)")
    source.add_argument(
        "--task",
        default="income",
        help="ACS task: " + ", ".join(_label_words(name, t.task) for name, t in ALL_TASKS.items()),
    )
    source.add_argument("--horizon", default="1-Year", choices=("1-Year", "5-Year"))
    source.add_argument(
        "--acs-root",
        type=Path,
        default=None,
        help=f"ACS folder in folktables layout (default $FAIRFRONT_ACS_ROOT or {acs_root()})",
    )
    source.add_argument(
        "--download",
        action="store_true",
        help="allow downloading missing ACS files from the census website",
    )
    source.add_argument(
        "--n-persons",
        type=int,
        default=5000,
        help="synthetic: persons to generate, shared among several states by population "
        f"({FULL_SIZE_PERSONS:,} with --state all give about 1.66 M income rows)",
    )
    source.add_argument("--synthetic-seed", type=int, default=0, help="synthetic: generator seed")
    source.add_argument("--csv", type=Path, help="csv: the file")
    source.add_argument(
        "--label",
        help="csv: the label column; for a classic data set one of its labels, the first by "
        "default (`python -m engine data show` describes it): "
        + "; ".join(
            f"{kind}: "
            + ", ".join(_label_words(name, label.task) for name, label in data.labels.items())
            for kind, data in CLASSIC.items()
        ),
    )
    source.add_argument("--positive", help="csv: the label value that counts as positive")
    source.add_argument(
        "--features",
        nargs="+",
        metavar="COLUMN",
        help="csv: the feature columns besides the protected ones (default: every other column "
        "except identifier and free-text columns)",
    )
    prep = parser.add_argument_group("protected attribute and preparation")
    prep.add_argument(
        "--attribute",
        nargs="+",
        help="protected attribute; two or more give their intersection (default: sex for Adult, "
        "SEX for ACS; for the classic data sets the first of "
        + "; ".join(f"{kind}: {', '.join(data.protected)}" for kind, data in CLASSIC.items())
        + ")",
    )
    prep.add_argument(
        "--grouping",
        nargs="+",
        default=["auto"],
        choices=MODES,
        help="how values become groups, one for all attributes or one each",
    )
    prep.add_argument("--top-k", type=int, default=3, help="groups kept by top-k grouping")
    prep.add_argument("--bins", type=float, nargs="+", default=[], help="bin edges for numbers")
    prep.add_argument("--min-group-size", type=int, default=50)
    prep.add_argument("--small-groups", choices=("merge", "refuse"), default="merge")
    prep.add_argument(
        "--split", type=float, nargs=3, default=[0.6, 0.2, 0.2], metavar=("TRAIN", "VAL", "TEST")
    )
    prep.add_argument("--seed", type=int, default=0, help="split seed")
    prep.add_argument(
        "--cross-terms",
        action="store_true",
        help="append group indicators and group×feature products",
    )
    prep.add_argument(
        "--drop-protected",
        action="store_true",
        help="leave the protected attribute out of the features",
    )
    prep.add_argument("--no-cache", action="store_true", help="prepare afresh, do not cache")
    prep.add_argument(
        "--subgroups",
        nargs="+",
        metavar="COLUMN",
        help="overlapping subgroups for the intersectional_hinge constraint (paper 001 §5.3): "
        "rows whose every one of these numeric columns is at least one of its quantile "
        "thresholds, e.g. --data crime --subgroups racepctblack racePctHisp racePctAsian",
    )
    prep.add_argument(
        "--subgroup-thresholds",
        type=int,
        default=10,
        metavar="T",
        help="quantile thresholds per subgroup column, at 0, 1/T, ..., (T-1)/T (default 10)",
    )
    prep.add_argument(
        "--subgroup-min-share",
        type=float,
        default=0.01,
        metavar="SHARE",
        help="keep the subgroups holding more than this share of the training rows (default 0.01)",
    )


def _label_words(name: str, task: Task) -> str:
    """A label's name, marked when it is real-valued."""
    return name if task is Task.CLASSIFICATION else f"{name} (real-valued)"


def data_spec_from_args(args: argparse.Namespace) -> DataSpec:
    root = str(args.acs_root) if args.acs_root is not None else str(acs_root())
    if args.source == "adult":
        return AdultSpec()
    if args.source in CLASSIC:
        return ClassicSpec(args.source, label=args.label or "")
    if args.source == "acs":
        return ACSSpec(
            states=tuple(args.state),
            year=args.year,
            task=args.task,
            horizon=args.horizon,
            root=root,
            allow_download=args.download,
        )
    if args.source == "synthetic":
        return SyntheticACSSpec(
            state=",".join(args.state),
            year=args.year,
            task=args.task,
            n_persons=args.n_persons,
            seed=args.synthetic_seed,
        )
    if args.csv is None or args.label is None or not args.attribute:
        raise UserError("--source csv needs --csv FILE, --label COLUMN and --attribute COLUMN")
    return CSVSpec(
        path=str(args.csv),
        label=args.label,
        protected=tuple(args.attribute),
        positive=args.positive,
        features=tuple(args.features) if args.features else None,
    )


def prepare_options_from_args(args: argparse.Namespace) -> PrepareOptions:
    attributes = args.attribute or [DEFAULT_ATTRIBUTE[args.source]]
    return PrepareOptions(
        grouping=grouping_from_args(attributes, args.grouping, args.top_k, args.bins),
        split=tuple(args.split),
        seed=args.seed,
        min_group_size=args.min_group_size,
        small_groups=args.small_groups,
        cross_terms=args.cross_terms,
        drop_protected=args.drop_protected,
        subgroups=SubgroupSpec(
            tuple(args.subgroups), args.subgroup_thresholds, args.subgroup_min_share
        )
        if args.subgroups
        else None,
    )


def print_download_progress(received: int, total: int | None) -> None:
    done = f"{received / 2**20:.1f} MB"
    shown = f"{done} of {total / 2**20:.1f} MB" if total else done
    print(f"\rdownloading: {shown}", end="", file=sys.stderr, flush=True)
