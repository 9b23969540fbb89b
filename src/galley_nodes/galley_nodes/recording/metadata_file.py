"""Edit a closed bag's metadata.yaml: set its ``custom_data`` (rosbag2 keeps string pairs there)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import yaml

__all__ = ["read_custom_data", "update_custom_data"]


def update_custom_data(metadata_yaml: Path, data: Mapping[str, str]) -> None:
    """Merge ``data`` into the ``custom_data`` of a bag's metadata.yaml, atomically."""
    document = yaml.safe_load(metadata_yaml.read_text())
    info = document["rosbag2_bagfile_information"]
    info["custom_data"] = {**(info.get("custom_data") or {}), **{str(k): str(v) for k, v in data.items()}}
    tmp = metadata_yaml.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(document, sort_keys=False))
    os.replace(tmp, metadata_yaml)


def read_custom_data(bag: Path) -> dict[str, str]:
    """The ``custom_data`` of a bag folder's metadata.yaml ({} when it has none)."""
    document = yaml.safe_load((Path(bag) / "metadata.yaml").read_text())
    return dict(document["rosbag2_bagfile_information"].get("custom_data") or {})
