"""On-disk cache of prepared arrays, keyed by a hash of everything that produced them.

Arrays go to an uncompressed .npz (fast to load, no pickle), metadata and the encoder to JSON. A
sparse X is stored as its CSR arrays.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
from scipy import sparse

from engine.data.encoding import Design, Encoder
from engine.data.group_map import GroupMap
from engine.data.prepared import SPLITS, Prepared, SplitArrays
from engine.data.subgroups import Subgroups
from engine.errors import UserError
from engine.task import Task

# 2: leakage warnings, merged group spellings, CSV feature choice; 3: overlapping subgroups;
# 4: the group map; 5: X of large data as CSR float32 (its data, indices, indptr and shape);
# 6: few-valued numeric groups named by value, whole-number identifiers left out, leaks by blanks
FORMAT_VERSION = 6


def load_cached(folder: Path, key: str) -> Prepared | None:
    arrays_path, meta_path = _paths(folder, key)
    if not (arrays_path.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != FORMAT_VERSION:
            return None
        with np.load(arrays_path, allow_pickle=False) as arrays:
            subgroups = _subgroups_from(meta.get("subgroups"))
            group_map = None if meta["group_map"] is None else GroupMap.from_dict(meta["group_map"])
            splits = {
                s: SplitArrays(
                    _design_from(arrays, s),
                    arrays[f"{s}_y"],
                    arrays[f"{s}_groups"],
                    _members_from(arrays, s, subgroups),
                )
                for s in SPLITS
            }
    except (OSError, ValueError, KeyError, UserError):
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
        subgroups=subgroups,
        task=Task(meta.get("task", Task.CLASSIFICATION)),  # written before regression: binary
        group_map=group_map,
    )


def _subgroups_from(meta: dict | None) -> Subgroups | None:
    if meta is None:
        return None
    return Subgroups(
        tuple(meta["names"]),
        np.array(meta["levels"]),
        np.array(meta["thresholds"]),
        tuple(meta["attributes"]),
    )


def _design_from(arrays, split: str) -> Design:
    """A split's X: dense as stored, or a CSR matrix from its arrays."""
    if f"{split}_X" in arrays:
        return arrays[f"{split}_X"]
    parts = (arrays[f"{split}_X_{name}"] for name in ("data", "indices", "indptr"))
    return sparse.csr_array(tuple(parts), shape=tuple(arrays[f"{split}_X_shape"]))


def _design_arrays(split: str, X: Design) -> dict[str, np.ndarray]:
    if not sparse.issparse(X):
        return {f"{split}_X": X}
    X = sparse.csr_array(X)
    return {
        f"{split}_X_data": X.data,
        f"{split}_X_indices": X.indices,
        f"{split}_X_indptr": X.indptr,
        f"{split}_X_shape": np.array(X.shape),
    }


def _members_from(arrays, split: str, subgroups: Subgroups | None) -> sparse.csr_matrix | None:
    """A split's 0/1 membership matrix from its CSR index arrays."""
    if subgroups is None:
        return None
    indices, indptr = arrays[f"{split}_members_indices"], arrays[f"{split}_members_indptr"]
    shape = (len(indptr) - 1, len(subgroups))
    return sparse.csr_matrix((np.ones(len(indices)), indices, indptr), shape=shape)


def store(folder: Path, prepared: Prepared) -> None:
    """Write atomically: a reader never sees half an entry."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays_path, meta_path = _paths(folder, prepared.key)
    arrays = {}
    for s in SPLITS:
        part = prepared.split(s)
        arrays.update({**_design_arrays(s, part.X), f"{s}_y": part.y, f"{s}_groups": part.groups})
        if part.members is not None:
            arrays.update(
                {
                    f"{s}_members_indices": part.members.indices,
                    f"{s}_members_indptr": part.members.indptr,
                }
            )
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
        "task": str(prepared.task),
        "group_map": None if prepared.group_map is None else prepared.group_map.to_dict(),
        "subgroups": None
        if prepared.subgroups is None
        else {
            "names": list(prepared.subgroups.names),
            "levels": prepared.subgroups.levels.tolist(),
            "thresholds": prepared.subgroups.thresholds.tolist(),
            "attributes": list(prepared.subgroups.attributes),
        },
    }
    partial = arrays_path.with_name(f"{prepared.key}.{os.getpid()}.part.npz")
    np.savez(partial, **arrays)
    partial.replace(arrays_path)
    partial_meta = meta_path.with_name(f"{prepared.key}.{os.getpid()}.part.json")
    partial_meta.write_text(json.dumps(meta))
    partial_meta.replace(meta_path)


def _paths(folder: Path, key: str) -> tuple[Path, Path]:
    return folder / f"{key}.npz", folder / f"{key}.json"
