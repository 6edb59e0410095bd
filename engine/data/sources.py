"""Data specs: small frozen descriptions of where data comes from, and loading them cached."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, fields
from pathlib import Path

from engine.data import prepare as preparation
from engine.data.acs import ACSSpec, SyntheticACSSpec
from engine.data.acs_files import Progress
from engine.data.adult import AdultSpec
from engine.data.cache import FORMAT_VERSION, load_cached, store
from engine.data.classic import CLASSIC, ClassicSpec
from engine.data.csv_source import CSVSpec, file_digest
from engine.data.grouping import GroupingSpec
from engine.data.paths import cache_root
from engine.data.prepare import PrepareOptions, prepare
from engine.data.prepared import Prepared
from engine.errors import UserError

DataSpec = AdultSpec | ACSSpec | SyntheticACSSpec | CSVSpec | ClassicSpec
SPEC_TYPES: dict[str, type] = {
    "adult": AdultSpec,
    "acs": ACSSpec,
    "synthetic": SyntheticACSSpec,
    "csv": CSVSpec,
    **dict.fromkeys(CLASSIC, ClassicSpec),  # compas, german, crime, law: kind names the data set
}


def spec_to_dict(spec: DataSpec) -> dict:
    return asdict(spec)


def spec_from_dict(data: dict) -> DataSpec:
    kind = data.get("kind")
    if kind not in SPEC_TYPES:
        raise UserError(f"unknown data source '{kind}'; the sources are {', '.join(SPEC_TYPES)}")
    cls = SPEC_TYPES[kind]
    names = {f.name for f in fields(cls)}
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names}
    return cls(**values)


def cache_key(spec: DataSpec, options: PrepareOptions, files: tuple[Path, ...]) -> str:
    """A hash of the source (its settings and its files' contents or size and time), options and
    the size from which the design is sparse.

    CSV files are identified by content; bundled, classic and large ACS state files by size and
    modification time, so that a cache hit needs no pass over them. A CSV file's name stays in
    the key: the prepared data is shown by it.
    """
    identity = {k: v for k, v in spec_to_dict(spec).items() if k not in ("allow_download", "root")}
    if isinstance(spec, CSVSpec):
        identity["path"] = Path(spec.path).name
        file_ids = [file_digest(p) for p in files]
    else:
        file_ids = [[str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns] for p in files]
    payload = {
        "source": identity,
        "files": file_ids,
        "options": asdict(options),
        "format": FORMAT_VERSION,
        "sparse_from": preparation.SPARSE_FROM_BYTES,  # it decides whether X is stored sparse
    }
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def load_prepared(
    spec: DataSpec,
    options: PrepareOptions,
    use_cache: bool = True,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> Prepared:
    """Prepared arrays for a source: from the cache when an identical preparation exists."""
    files = spec.files(progress)
    key = cache_key(spec, options, files)
    folder = (cache_dir or cache_root()) / "prepared"
    if use_cache and (hit := load_cached(folder, key)) is not None:
        return hit
    prepared = prepare(spec.load(), options, key=key)
    if use_cache:
        store(folder, prepared)
    return prepared


def grouping_from_args(attributes: list[str], modes: list[str], k: int, bins: list[float]):
    """GroupingSpecs for one attribute or an intersection; one mode for all or one per attribute."""
    if not attributes:
        raise UserError("choose a protected attribute")
    if len(modes) not in (1, len(attributes)):
        raise UserError("give one grouping for all attributes or one per attribute")
    modes = modes * len(attributes) if len(modes) == 1 else modes
    return tuple(
        GroupingSpec(a, m, k=k, bins=tuple(bins)) for a, m in zip(attributes, modes, strict=True)
    )
