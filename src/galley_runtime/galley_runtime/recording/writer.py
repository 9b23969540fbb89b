"""The bag writer interface of the ``recorder`` node, and how an implementation is chosen."""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path

from galley_runtime.qos import QoS

__all__ = ["STORAGES", "BagWriter", "BagWriterError", "open_bag_writer"]

#: rosbag2 storage plugins galley writes: mcap (the default) and sqlite3.
STORAGES = ("mcap", "sqlite3")


class BagWriterError(RuntimeError):
    """A bag cannot be written (the folder exists, the storage is unknown, the disk is full)."""


class BagWriter(ABC):
    """Writes serialised (CDR) messages to a rosbag2 bag folder.

    Life cycle: :meth:`add_topic` for each topic before its first :meth:`write`, :meth:`flush`
    whenever what was written so far must survive a crash, :meth:`close` once.
    """

    #: The bag folder.
    path: Path

    @abstractmethod
    def add_topic(self, topic: str, type_name: str, qos: QoS) -> None:
        """Declare a topic (absolute name, ``pkg/msg/Type``, the QoS it was offered with)."""

    @abstractmethod
    def write(self, topic: str, data: bytes, time_ns: int) -> None:
        """Write one message's CDR bytes received at ``time_ns`` (ROS time, nanoseconds)."""

    @abstractmethod
    def set_custom_data(self, data: Mapping[str, str]) -> None:
        """Key-value strings for the bag's metadata (``custom_data`` in metadata.yaml)."""

    @abstractmethod
    def flush(self) -> None:
        """Make everything written so far readable even if the process is killed afterwards."""

    @abstractmethod
    def close(self) -> None:
        """Finish the bag: everything written is readable, metadata complete."""

    @property
    @abstractmethod
    def bytes_written(self) -> int:
        """Bytes of message data written so far."""


def open_bag_writer(
    path: Path, *, storage: str = "mcap", split_period_s: float = 5.0, implementation: str = "auto"
) -> BagWriter:
    """A writer for a new bag folder ``path``.

    Args:
        path: the bag folder to create; it must not exist.
        storage: ``mcap`` or ``sqlite3``.
        split_period_s: start a new bag file every this many seconds of ROS time (what readers lose of a
            killed recording until ``galley bag repair``).
        implementation: ``rosbags`` (embedded host), ``rosbag2_py`` (ROS 2's own writer), or ``auto``:
            rosbag2_py when it imports and the messages are rclpy's, else rosbags.

    Raises:
        BagWriterError: the folder exists, an unknown storage, or the implementation is missing.
    """
    if storage not in STORAGES:
        raise BagWriterError(f"storage {storage!r} is not supported; use one of {', '.join(STORAGES)}")
    if path.exists():
        raise BagWriterError(f"bag folder {path} exists already; choose another bag_name or output_dir")
    if implementation == "auto":
        from galley_runtime import messages

        rclpy_messages = type(messages.backend()).__name__ == "RclpyMessages"
        have_rosbag2 = importlib.util.find_spec("rosbag2_py") is not None
        implementation = "rosbag2_py" if rclpy_messages and have_rosbag2 else "rosbags"
    if implementation == "rosbag2_py":
        from galley_runtime.recording.rosbag2_writer import Rosbag2PyWriter

        return Rosbag2PyWriter(path, storage=storage, split_period_s=split_period_s)
    if implementation == "rosbags":
        from galley_runtime.recording.rosbags_writer import RosbagsWriter

        return RosbagsWriter(path, storage=storage, split_period_s=split_period_s)
    raise BagWriterError(f"bag writer {implementation!r} is unknown; use auto, rosbags or rosbag2_py")
