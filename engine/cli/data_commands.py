"""`python -m engine data list|show`: what data is on offer, and what a preparation gives."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engine.cli.data_args import (
    add_data_arguments,
    data_spec_from_args,
    prepare_options_from_args,
    print_download_progress,
)
from engine.data.acs_files import offline_files
from engine.data.acs_tasks import REGRESSION_TASKS, TASKS, ACSTask
from engine.data.adult import ADULT_DIR
from engine.data.classic import CLASSIC
from engine.data.paths import acs_root
from engine.data.prepared import LABEL_STATISTIC_WORDS, summary_statistic
from engine.data.sources import load_prepared
from engine.data.synthetic_pums import is_synthetic

SOURCES = {
    "adult": "UCI Adult, bundled (train 32,561 / test 16,281); the offline default",
    "acs": "ACS census person files through folktables, by state(s), year and task",
    "synthetic": "seeded synthetic records in the census layout (labelled synthetic)",
    "csv": "your own table: a binary label column and protected column(s)",
    **{
        kind: f"{entry.title}: {entry.label()[1].description}; protected "
        f"{', '.join(entry.protected)}; --label {', '.join(entry.labels)}"
        for kind, entry in CLASSIC.items()
    },
}


def register(commands: argparse._SubParsersAction) -> None:
    data = commands.add_parser("data", help="list data sources, show a prepared data set")
    actions = data.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="sources, ACS tasks, ACS files available offline")
    listing.add_argument("--acs-root", type=Path, default=None)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=list_data)
    show = actions.add_parser("show", help="rows, features, groups and label rates per split")
    add_data_arguments(show)
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=show_data)


def list_data(args: argparse.Namespace) -> int:
    root = args.acs_root or acs_root()
    files = [
        {
            "year": year,
            "horizon": horizon,
            "state": state,
            "path": str(path),
            "megabytes": round(path.stat().st_size / 2**20, 1),
            "synthetic": is_synthetic(path),
        }
        for year, horizon, state, path in offline_files(root)
    ]
    listing = {
        "sources": SOURCES,
        "adult": {"folder": str(ADULT_DIR), "present": (ADULT_DIR / "adult.data.gz").is_file()},
        "acs_root": str(root),
        "acs_files": files,
        "tasks": [_task_entry(t) for t in TASKS.values()],
        "regression_tasks": [_task_entry(t) for t in REGRESSION_TASKS.values()],
    }
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    print("Sources:")
    for name, text in SOURCES.items():
        print(f"  {name:<10} {text}")
    for key, title in (
        ("tasks", "ACS tasks (--task)"),
        ("regression_tasks", "ACS tasks with a real-valued label (--task)"),
    ):
        print(f"\n{title}:")
        for task in listing[key]:
            print(f"  {task['name']:<22} {task['folktables']:<24} label: {task['label']}")
    print(f"\nACS files available offline under {root}:")
    if not files:
        print("  none (put census files there, or use --download with network access)")
    for f in files:
        mark = "  (synthetic)" if f["synthetic"] else ""
        print(f"  {f['state']}  {f['year']}  {f['horizon']}  {f['megabytes']:>7.1f} MB{mark}")
    return 0


def _task_entry(task: ACSTask) -> dict:
    return {
        "name": task.name,
        "folktables": task.folktables_name,
        "label": task.label_name,
        "features": list(task.features),
    }


def show_data(args: argparse.Namespace) -> int:
    spec = data_spec_from_args(args)
    options = prepare_options_from_args(args)
    prepared = load_prepared(
        spec, options, use_cache=not args.no_cache, progress=print_download_progress
    )
    summary = prepared.summary()
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(format_summary(summary))
    return 0


def format_summary(summary: dict) -> str:
    lines = [f"{summary['dataset']}  —  label: {summary['label']}"]
    if summary["synthetic"]:
        lines.append("SYNTHETIC DATA: generated records, not real people")
    if summary["reduced"]:
        lines.append(f"REDUCED TASK: missing columns {', '.join(summary['missing_features'])}")
    rows = summary["rows"]
    lines.append(
        f"rows: train {rows['train']:,}, val {rows['val']:,}, test {rows['test']:,}; "
        f"encoded features: {summary['features']}"
    )
    width = max(len(g["name"]) for g in summary["groups"]) + 2
    statistic = summary_statistic(summary)
    header = f"{'group':<{width}}" + "".join(f"{s:>22}" for s in ("train", "val", "test"))
    column = f"size  {LABEL_STATISTIC_WORDS[statistic]}"
    lines += ["", header, f"{'':<{width}}" + f"{column:>22}" * 3]
    for group in summary["groups"]:
        cells = ""
        for split in ("train", "val", "test"):
            part = group[split]
            value = "—" if part[statistic] is None else f"{part[statistic]:.3f}"
            cells += f"{part['size']:>12,}{value:>10}"
        lines.append(f"{group['name']:<{width}}{cells}")
    for warning in summary["warnings"]:
        lines.append(f"warning: {warning}")
    for note in summary["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)
