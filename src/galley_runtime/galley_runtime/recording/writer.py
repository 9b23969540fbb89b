"""The bag writer interface of the ``recorder`` node (:mod:`.open_writer` chooses an implementation)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path

from galley_runtime.qos import QoS

__all__ = ["STORAGES", "BagWriter", "BagWriterError"]

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
    def add_topic(self, topic: str, type_name: str, qos: QoS, *, type_hash: str = "") -> None:
        """Declare a topic (absolute name, ``pkg/msg/Type``, the QoS it was offered with).

        ``type_hash`` is the type description hash (``RIHS01_...``) the topic's publishers advertise,
        "" where the host cannot tell; a writer that computes it from the definitions it stores
        (rosbags) keeps its own.
        """

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
