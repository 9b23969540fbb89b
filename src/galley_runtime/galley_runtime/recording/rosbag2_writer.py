"""The bag writer under ROS 2: rosbag2's own ``rosbag2_py.SequentialWriter``.

Written against rosbag2_py of ROS 2 Jazzy (``TopicMetadata(id, name, type, serialization_format,
offered_qos_profiles, type_description_hash)``, ``StorageOptions(uri, storage_id,
max_bagfile_duration, custom_data)``, ``SequentialWriter.close()``), with Humble's
``TopicMetadata(name, type, serialization_format)`` as the fallback. Checked on rosbag2 jazzy
built from source on PyPI's Jazzy wheels (``test_rosbag2_writer.py``; it skips where rosbag2_py is
missing, as in CI).

Each topic is stored with the QoS it was offered with (``ros2 bag play`` publishes with it) and the
type description hash (``RIHS01_...``) its publishers advertise in the graph, where the host can
tell (:meth:`galley_runtime.node.NodeHost.topic_type_hash`); rosbag2 looks up the message
definition itself, in the ament index, except for action types (``pkg/action/Name_FeedbackMessage``,
which Jazzy's look-up does not parse: stored empty, with encoding ``unknown``, which rosbags refuses;
hence ``auto`` prefers rosbags, :mod:`.open_writer`). :meth:`close` closes the bag at once (rosbag2 writes
metadata.yaml then), not when the writer happens to be garbage-collected, so a bag is complete as
soon as the recorder's ``on_shutdown`` returns: a launch ended with Ctrl-C leaves a finished bag.

Crash safety is rosbag2's: the bag is split every ``split_period_s`` (``max_bagfile_duration``,
whole seconds, at least 1), and ``ros2 bag reindex`` rebuilds the metadata of a bag whose recorder
was killed (rosbag2 writes metadata.yaml only when the bag is closed). rosbag2_py takes
``custom_data`` only when the bag is opened; the episode metadata the recorder learns later is
written into metadata.yaml after the writer has closed, and into the sidecar JSON in any case.
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

__all__ = ["Rosbag2PyWriter", "rosbag2_qos"]


def rosbag2_qos(qos: QoS) -> Any:
    """The ``rclcpp::QoS`` (rosbag2_py's binding) of a galley QoS profile, as rosbag2 stores offers.

    rosbag2_py binds the class in ``rosbag2_py._storage`` (TopicMetadata takes a list of them) and
    does not re-export it.
    """
    from rosbag2_py._storage import QoS as Rclcpp  # noqa: PLC0415 (optional: rosbag2_py)

    profile = Rclcpp(qos.depth)
    profile = profile.keep_last(qos.depth) if qos.history == "keep_last" else profile.keep_all()
    profile = profile.reliable() if qos.reliability == "reliable" else profile.best_effort()
    return profile.transient_local() if qos.durability == "transient_local" else profile.durability_volatile()


class Rosbag2PyWriter(BagWriter):
    """A rosbag2 bag written by rosbag2_py (see the module docstring).

    Raises:
        BagWriterError: rosbag2 has no writer plugin for ``storage``, or refuses to open the bag.
    """

    def __init__(self, path: Path, *, storage: str = "mcap", split_period_s: float = 5.0) -> None:
        import rosbag2_py  # noqa: PLC0415 (optional: rosbag2_py)

        self._rosbag2 = rosbag2_py
        self.path = Path(path)
        plugins = rosbag2_py.get_registered_writers()
        if storage not in plugins:
            known = ", ".join(sorted(plugins)) or "none"
            raise BagWriterError(
                f"rosbag2 has no {storage!r} storage plugin (it has: {known}); "
                f"build rosbag2_storage_{storage}, or use the rosbags writer (recorder parameter writer)"
            )
        self._split_s = max(1, math.ceil(split_period_s))
        self._custom: dict[str, str] = {}
        self._topics: dict[str, int] = {}
        self._bytes = 0
        options = rosbag2_py.StorageOptions(
            uri=str(self.path), storage_id=storage, max_bagfile_duration=self._split_s
        )
        self._writer: Any = rosbag2_py.SequentialWriter()
        try:  # creates the bag folder, where the recorder writes its sidecar at once
            self._writer.open(options, rosbag2_py.ConverterOptions("cdr", "cdr"))
        except RuntimeError as err:
            raise BagWriterError(f"rosbag2 cannot open bag {self.path}: {err}") from None

    @property
    def bytes_written(self) -> int:
        return self._bytes

    def add_topic(self, topic: str, type_name: str, qos: QoS, *, type_hash: str = "") -> None:
        if topic in self._topics:
            return
        if self._writer is None:
            raise BagWriterError(f"bag {self.path} is closed")
        self._topics[topic] = len(self._topics)
        try:  # Jazzy and later
            metadata = self._rosbag2.TopicMetadata(
                id=self._topics[topic],
                name=topic,
                type=type_name,
                serialization_format="cdr",
                offered_qos_profiles=[rosbag2_qos(qos)],
                type_description_hash=type_hash,
            )
        except TypeError:  # Humble: no id, no hash, offered QoS as YAML text
            metadata = self._rosbag2.TopicMetadata(name=topic, type=type_name, serialization_format="cdr")
        self._writer.create_topic(metadata)

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
        writer, self._writer = self._writer, None
        if writer is None:
            return
        if hasattr(writer, "close"):  # Jazzy and later
            writer.close()
        else:  # Humble's binding has no close(): the C++ destructor closes the bag
            del writer
            gc.collect()
        metadata = self.path / "metadata.yaml"
        if not metadata.exists():
            raise BagWriterError(f"rosbag2 closed bag {self.path} without writing its metadata.yaml")
        update_custom_data(metadata, self._custom)  # also {} for rosbag2's `custom_data: ~`, as rosbags' bags
