"""Datasets collected in parts, joined into one: :func:`merge_datasets` (``galley train --data A B``).

A collection made on two machines, or more episodes on another day, gives two dataset folders
(:mod:`galley_learning.policy.dataset`); they train as one when they were built with the same
settings and the same sensor settings (``params.yaml``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from galley_learning.policy.dataset import PolicyData, training_stats
from galley_learning.policy.shipped import RUN_PARAMS

__all__ = ["merge_datasets"]

#: Dataset settings that may differ between the datasets :func:`merge_datasets` joins: each keeps
#: the held-out episodes its own shuffle chose.
_MERGE_FREE = ("seed", "val_fraction")


def merge_datasets(sources: Sequence[str | Path], out: str | Path) -> dict[str, Any]:
    """Join dataset folders built with the same settings into ``out``; returns its ``meta.json``.

    For a training set collected in parts (on several machines, or more episodes later): the frames
    end to end in the order given, every episode keeping its split, step texts joined, the
    statistics computed anew over all training episodes. ``params.yaml`` is copied when every source
    has the same one.

    Raises:
        FileNotFoundError: a source is not a dataset folder.
        FileExistsError: ``out`` exists and is not an empty folder.
        ValueError: fewer than two sources, or sources of different settings, observation, actions,
            cameras or sensor settings (the message names the setting and both folders).
    """
    if len(sources) < 2:
        raise ValueError("merge_datasets joins two or more dataset folders")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and is not empty; choose a new dataset folder")
    data = [PolicyData.open(src) for src in sources]
    _check_alike(data)
    first = data[0]
    out.mkdir(parents=True, exist_ok=True)
    total = sum(len(d.state) for d in data)
    columns = {"state": [d.state for d in data], "action": [d.action for d in data]}
    columns |= {f"images_{c}": [d.images[c] for d in data] for c in first.meta["cameras"]}
    if all(d.sampled is not None for d in data):
        columns["sampled"] = [d.sampled for d in data if d.sampled is not None]
    for name, parts in columns.items():
        joined = np.lib.format.open_memmap(
            out / f"{name}.npy", mode="w+", dtype=parts[0].dtype, shape=(total, *parts[0].shape[1:])
        )
        start = 0
        for part in parts:
            joined[start : start + len(part)] = part
            start += len(part)
        joined.flush()
    steps: list[str] = []
    step_ids = [_renumbered_steps(d, steps) for d in data]
    np.save(out / "step.npy", np.concatenate(step_ids))
    offsets = np.cumsum([0, *(len(d.state) for d in data)])[:-1]
    np.save(
        out / "episode_ends.npy",
        np.concatenate([d.episode_ends + o for d, o in zip(data, offsets, strict=True)]),
    )
    meta = {
        "frames": total,
        "cameras": first.meta["cameras"],
        "stats": training_stats(data),
        "config": first.meta["config"],
        "steps": steps,
        "state_names": first.meta["state_names"],
        "action_names": first.meta["action_names"],
        "episodes": [e for d in data for e in d.meta["episodes"]],
        "merged_from": [str(d.root) for d in data],
    }
    skipped = [e for d in data for e in d.meta.get("skipped", [])]
    meta |= {"skipped": skipped} if skipped else {}
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    if (first.root / RUN_PARAMS).is_file():  # then every source has the same (_check_alike)
        shutil.copyfile(first.root / RUN_PARAMS, out / RUN_PARAMS)
    return meta


def _check_alike(data: list[PolicyData]) -> None:
    """Raise ValueError unless the datasets were built alike (:func:`merge_datasets`)."""
    first = data[0]
    for other in data[1:]:
        for key in ("state_names", "action_names", "cameras"):
            if other.meta[key] != first.meta[key]:
                raise ValueError(f"{other.root} and {first.root} differ in {key}; merge datasets built alike")
        for key, value in first.meta["config"].items():
            if key not in _MERGE_FREE and other.meta["config"][key] != value:
                raise ValueError(
                    f"{other.root} and {first.root} were built with different {key} "
                    f"({other.meta['config'][key]!r}, {value!r}); merge datasets built alike"
                )
    params = {(d.root / RUN_PARAMS).read_text() if (d.root / RUN_PARAMS).is_file() else None for d in data}
    if len(params) > 1:
        raise ValueError(
            f"the datasets' {RUN_PARAMS} differ (collected with other sensor settings, or some lack it): "
            "a policy is run with one; merge collections of the same --image-size and --camera-rate"
        )


def _renumbered_steps(data: PolicyData, steps: list[str]) -> NDArray[np.int16]:
    """``data``'s step indices into ``steps``, which gains the texts it lacks."""
    index = []
    for text in data.meta["steps"]:
        if text not in steps:
            steps.append(text)
        index.append(steps.index(text))
    lookup = np.asarray([*index, -1], dtype=np.int16)  # -1 (no step) stays -1
    return lookup[np.asarray(data.step)]
