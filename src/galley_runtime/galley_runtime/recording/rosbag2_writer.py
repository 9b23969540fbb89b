"""The bag writer under ROS 2: rosbag2's own ``rosbag2_py.SequentialWriter``.

Written against rosbag2_py of ROS 2 Jazzy (``TopicMetadata(id, name, type, serialization_format,
offered_qos_profiles, type_description_hash)``, ``StorageOptions(uri, storage_id,
max_bagfile_duration, custom_data)``), with Humble's ``TopicMetadata(name, type,
serialization_format, offered_qos_profiles: str)`` as the fallback. Not exercised by galley's tests:
rosbag2_py is not installable without ROS 2.

Crash safety is rosbag2's: the bag is split every ``split_period_s`` (``max_bagfile_duration``,
whole seconds, at least 1), and ``ros2 bag reindex`` rebuilds the metadata of a bag whose recorder
was killed. rosbag2_py takes ``custom_data`` only when the bag is opened; the episode metadata the
recorder learns later is written into metadata.yaml after the writer has closed, and into the
sidecar JSON in any case.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from galley_runtime.qos import QoS
from galley_runtime.recording.metadata_file import update_custom_data
from galley_runtime.recording.writer import BagWriter, BagWriterError

__all__ = ["Rosbag2PyWriter"]


class Rosbag2PyWriter(BagWriter):
    """A rosbag2 bag written by rosbag2_py (see the module docstring)."""

    def __init__(self, path: Path, *, storage: str = "mcap", split_period_s: float = 5.0) -> None:
        import rosbag2_py  # noqa: PLC0415 (optional: rosbag2_py)

        self._rosbag2 = rosbag2_py
        self.path = Path(path)
        self._storage = storage
        self._split_s = max(1, math.ceil(split_period_s))
        self._writer: Any = None
        self._custom: dict[str, str] = {}
        self._topics: dict[str, int] = {}
        self._bytes = 0
        self._open()  # creates the bag folder, where the recorder writes its sidecar at once

    @property
    def bytes_written(self) -> int:
        return self._bytes

    def _open(self) -> None:
        options = self._rosbag2.StorageOptions(
            uri=str(self.path),
            storage_id=self._storage,
            max_bagfile_duration=self._split_s,
            custom_data=dict(self._custom),
        )
        self._writer = self._rosbag2.SequentialWriter()
        self._writer.open(options, self._rosbag2.ConverterOptions("cdr", "cdr"))

    def add_topic(self, topic: str, type_name: str, qos: QoS) -> None:
        if topic in self._topics:
            return
        if self._writer is None:
            raise BagWriterError(f"bag {self.path} is closed")
        self._topics[topic] = len(self._topics)
        offered = self._rclpy_qos(qos)
        try:  # Jazzy and later
            metadata = self._rosbag2.TopicMetadata(
                id=self._topics[topic],
                name=topic,
                type=type_name,
                serialization_format="cdr",
                offered_qos_profiles=[offered] if offered is not None else [],
            )
        except TypeError:  # Humble
            metadata = self._rosbag2.TopicMetadata(name=topic, type=type_name, serialization_format="cdr")
        self._writer.create_topic(metadata)

    @staticmethod
    def _rclpy_qos(qos: QoS) -> Any:
        try:
            from rosbag2_py import QoS as Rosbag2QoS  # noqa: PLC0415 (optional: rosbag2_py)
        except ImportError:
            return None
        profile = Rosbag2QoS(qos.depth)
        profile = profile.reliable() if qos.reliability == "reliable" else profile.best_effort()
        return (
            profile.transient_local()
            if qos.durability == "transient_local"
            else profile.durability_volatile()
        )

    def write(self, topic: str, data: bytes, time_ns: int) -> None:
        if self._writer is None or topic not in self._topics:
            raise BagWriterError(f"topic {topic!r} was not added to bag {self.path}")
        self._writer.write(topic, data, time_ns)
        self._bytes += len(data)

    def set_custom_data(self, data: Mapping[str, str]) -> None:
        self._custom.update({str(k): str(v) for k, v in data.items()})

    def flush(self) -> None:
        """rosbag2 flushes at each split; nothing more can be asked through rosbag2_py."""

    def close(self) -> None:
        if self._writer is None:
            return
        self._writer = None  # rosbag2_py closes the bag and writes metadata.yaml on destruction

        gc.collect()
        metadata = self.path / "metadata.yaml"
        if metadata.exists() and self._custom:
            update_custom_data(metadata, self._custom)
