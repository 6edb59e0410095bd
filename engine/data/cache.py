"""On-disk cache of prepared arrays, keyed by a hash of everything that produced them.

Arrays go to an uncompressed .npz (fast to load, no pickle), metadata and the encoder to JSON.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np

from engine.data.encoding import Encoder
from engine.data.prepared import SPLITS, Prepared, SplitArrays

FORMAT_VERSION = 2  # 2: leakage warnings, merged group spellings, CSV feature choice


def load_cached(folder: Path, key: str) -> Prepared | None:
    arrays_path, meta_path = _paths(folder, key)
    if not (arrays_path.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != FORMAT_VERSION:
            return None
        with np.load(arrays_path, allow_pickle=False) as arrays:
            splits = {
                s: SplitArrays(arrays[f"{s}_X"], arrays[f"{s}_y"], arrays[f"{s}_groups"])
                for s in SPLITS
            }
    except (OSError, ValueError, KeyError):
        return None  # a damaged entry is rebuilt
    return Prepared(
        **splits,
        feature_names=tuple(meta["feature_names"]),
        group_names=tuple(meta["group_names"]),
        encoder=Encoder.from_dict(meta["encoder"]),
        dataset_name=meta["dataset_name"],
        label_name=meta["label_name"],
        synthetic=meta["synthetic"],
        missing_features=tuple(meta["missing_features"]),
        warnings=tuple(meta["warnings"]),
        notes=tuple(meta["notes"]),
        key=key,
    )


def store(folder: Path, prepared: Prepared) -> None:
    """Write atomically: a reader never sees half an entry."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays_path, meta_path = _paths(folder, prepared.key)
    arrays = {}
    for s in SPLITS:
        part = prepared.split(s)
        arrays.update({f"{s}_X": part.X, f"{s}_y": part.y, f"{s}_groups": part.groups})
    meta = {
        "format": FORMAT_VERSION,
        "feature_names": list(prepared.feature_names),
        "group_names": list(prepared.group_names),
        "encoder": asdict(prepared.encoder),
        "dataset_name": prepared.dataset_name,
        "label_name": prepared.label_name,
        "synthetic": prepared.synthetic,
        "missing_features": list(prepared.missing_features),
        "warnings": list(prepared.warnings),
        "notes": list(prepared.notes),
    }
    partial = arrays_path.with_name(f"{prepared.key}.{os.getpid()}.part.npz")
    np.savez(partial, **arrays)
    partial.replace(arrays_path)
    partial_meta = meta_path.with_name(f"{prepared.key}.{os.getpid()}.part.json")
    partial_meta.write_text(json.dumps(meta))
    partial_meta.replace(meta_path)


def _paths(folder: Path, key: str) -> tuple[Path, Path]:
    return folder / f"{key}.npz", folder / f"{key}.json"
