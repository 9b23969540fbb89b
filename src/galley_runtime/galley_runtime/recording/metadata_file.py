"""A bag's metadata.yaml: read it, merge a finished file into it, write it atomically, edit ``custom_data``.

rosbag2 lists a bag's files, topics (types, offered QoS, message counts), time span and
``custom_data`` (string pairs) in metadata.yaml; readers open only the files it lists. Galley's
split writer (:mod:`.rosbags_writer`) and ``galley bag repair`` (:mod:`.repair`) both add files to
a bag through :func:`merge_split_info` and :func:`write_metadata`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from galley_core.files import replacing

__all__ = [
    "load_metadata",
    "load_yaml",
    "merge_split_info",
    "read_custom_data",
    "update_custom_data",
    "write_metadata",
]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def load_yaml(path: Path) -> Any:
    """A YAML file's content (libyaml's loader where it is built)."""
    return yaml.load(Path(path).read_text(), Loader=_Loader)


def load_metadata(bag: Path) -> dict[str, Any] | None:
    """The ``rosbag2_bagfile_information`` of a bag folder's metadata.yaml; None when it has none."""
    path = Path(bag) / "metadata.yaml"
    if not path.exists():
        return None
    return dict(load_yaml(path)["rosbag2_bagfile_information"])


def merge_split_info(merged: dict[str, Any] | None, split: dict[str, Any], name: str) -> dict[str, Any]:
    """Add one finished file, described by its own metadata ``split``, to a bag's metadata ``merged``.

    ``split`` is the ``rosbag2_bagfile_information`` rosbags wrote for a one-file bag; its file is
    now ``name`` in the bag folder. Returns the merged metadata (``split`` itself when ``merged`` is
    None): files and paths appended, the time span widened, message counts summed per topic.
    """
    split["relative_file_paths"] = [name]
    for f in split["files"]:
        f["path"] = name
    if merged is None:
        return split
    start = min(
        merged["starting_time"]["nanoseconds_since_epoch"],
        split["starting_time"]["nanoseconds_since_epoch"],
    )
    end = max(
        merged["starting_time"]["nanoseconds_since_epoch"] + merged["duration"]["nanoseconds"],
        split["starting_time"]["nanoseconds_since_epoch"] + split["duration"]["nanoseconds"],
    )
    merged["starting_time"]["nanoseconds_since_epoch"] = start
    merged["duration"]["nanoseconds"] = end - start
    merged["message_count"] += split["message_count"]
    merged["relative_file_paths"].append(name)
    merged["files"] += split["files"]
    counts = {t["topic_metadata"]["name"]: t for t in merged["topics_with_message_count"]}
    for entry in split["topics_with_message_count"]:
        known = counts.get(entry["topic_metadata"]["name"])
        if known is None:
            merged["topics_with_message_count"].append(entry)
        else:
            known["message_count"] += entry["message_count"]
    return merged


def write_metadata(bag: Path, info: dict[str, Any], custom_data: Mapping[str, str] | None = None) -> None:
    """Write ``info`` as the bag folder's metadata.yaml, atomically (a reader sees the old or the new).

    Args:
        bag: the bag folder.
        info: the ``rosbag2_bagfile_information`` mapping.
        custom_data: replaces ``info``'s ``custom_data`` when given (an empty mapping: none).

    ``custom_data`` is always written as a mapping, ``{}`` when there is none: rosbag2 reads it as
    one and refuses the whole file on ``null`` (``ros2 bag info``: "bad conversion"), which is what
    rosbags writes for a bag without custom data.
    """
    if custom_data is not None:
        info["custom_data"] = {str(k): str(v) for k, v in custom_data.items()}
    elif info.get("custom_data") is None:
        info["custom_data"] = {}
    with replacing(Path(bag) / "metadata.yaml") as tmp, tmp.open("w") as f:
        # libyaml's dumper: a split bag's metadata grows with every file, and ruamel's pure-Python
        # emitter made rewriting it a quarter of an episode's wall time.
        yaml.dump(
            {"rosbag2_bagfile_information": info},
            f,
            Dumper=_Dumper,
            default_flow_style=False,
            sort_keys=False,
        )
        f.flush()
        os.fsync(f.fileno())


def update_custom_data(metadata_yaml: Path, data: Mapping[str, str]) -> None:
    """Merge ``data`` into the ``custom_data`` of a bag's metadata.yaml, atomically."""
    info = load_metadata(metadata_yaml.parent)
    if info is None:
        raise FileNotFoundError(f"no bag metadata at {metadata_yaml}")
    write_metadata(metadata_yaml.parent, info, {**(info.get("custom_data") or {}), **data})


def read_custom_data(bag: Path) -> dict[str, str]:
    """The ``custom_data`` of a bag folder's metadata.yaml ({} when it has none)."""
    info = load_metadata(bag)
    if info is None:
        raise FileNotFoundError(f"no bag metadata at {Path(bag) / 'metadata.yaml'}")
    return dict(info.get("custom_data") or {})
