"""The embedded host's bag writer: rosbag2 (mcap or sqlite3) through ``rosbags``, crash-safe by splitting.

``rosbags`` writes a bag's metadata.yaml, and an mcap file's summary and footer, only when the bag
is closed; a killed process leaves neither, and readers refuse such a bag. So the bag is written as
a sequence of files (``<name>_0.mcap``, ``<name>_1.mcap``, ... as ``ros2 bag record
--max-bag-duration`` does): every ``split_period_s`` of ROS time (and at every :meth:`flush`) the
current file is closed, complete and indexed, and metadata.yaml is rewritten atomically to list
every finished file. A process killed at any moment leaves a bag that rosbags, ``ros2 bag`` and
Foxglove read up to the last finished file; the unfinished one stays in a hidden ``.writing_<n>``
folder (:mod:`.staging`), which they ignore. ``galley bag repair`` (:mod:`.repair`) recovers an
unfinished mcap file up to its last whole chunk (rosbags writes a chunk every 1 MiB of messages),
so a crash loses at most that much; an unfinished sqlite3 file holds nothing (see :mod:`.repair`).
While recording, the writer holds the bag folder's :class:`~.staging.RecordingLock`, which tells
readers and the repair a live recording from an interrupted one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import StoragePlugin, Writer

from galley_runtime.qos import QoS
from galley_runtime.recording.metadata_file import write_metadata
from galley_runtime.recording.staging import RecordingLock, adopt_split, staging_folder
from galley_runtime.recording.writer import BagWriter, BagWriterError
from galley_runtime.rosbags_messages import message_definition, typestore

__all__ = ["RosbagsWriter", "rosbags_qos"]

_NS = 1_000_000_000
_PLUGINS = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
_INFINITE = QosTime(0x7FFFFFFF, 0xFFFFFFFF)


def rosbags_qos(qos: QoS) -> Qos:
    """The rosbags record of a galley QoS profile (as rosbag2 stores offered QoS)."""
    return Qos(
        QosHistory.KEEP_LAST if qos.history == "keep_last" else QosHistory.KEEP_ALL,
        qos.depth,
        QosReliability.RELIABLE if qos.reliability == "reliable" else QosReliability.BEST_EFFORT,
        QosDurability.TRANSIENT_LOCAL if qos.durability == "transient_local" else QosDurability.VOLATILE,
        _INFINITE,
        _INFINITE,
        QosLiveliness.AUTOMATIC,
        _INFINITE,
        False,
    )


class RosbagsWriter(BagWriter):
    """A rosbag2 bag folder written in files of ``split_period_s`` (see the module docstring).

    Args:
        path: the bag folder to create.
        storage: ``mcap`` or ``sqlite3``.
        split_period_s: ROS time per file, seconds.
    """

    def __init__(self, path: Path, *, storage: str = "mcap", split_period_s: float = 5.0) -> None:
        if not split_period_s > 0:
            raise BagWriterError(f"split_period_s = {split_period_s} must be > 0 (seconds)")
        self.path = Path(path)
        self.storage = storage
        self.split_period_ns = round(split_period_s * _NS)
        try:
            self.path.mkdir(parents=True)
        except FileExistsError:
            raise BagWriterError(f"bag folder {self.path} exists already; choose another name") from None
        self._lock = RecordingLock.acquire(self.path)  # a new folder: no one else holds it
        self._topics: dict[str, tuple[str, QoS]] = {}
        self._custom: dict[str, str] = {}
        self._writer: Writer | None = None
        self._connections: dict[str, Any] = {}
        self._split_start_ns = 0
        self._split_index = 0
        self._metadata: dict[str, Any] | None = None
        self._bytes = 0
        self._closed = False

    @property
    def bytes_written(self) -> int:
        return self._bytes

    @property
    def files(self) -> list[str]:
        """The finished files of the bag, in order."""
        if self._metadata is None:
            return []
        return list(self._metadata["relative_file_paths"])

    def add_topic(self, topic: str, type_name: str, qos: QoS, *, type_hash: str = "") -> None:
        if topic in self._topics:
            return
        self._topics[topic] = (type_name, qos)
        if self._writer is not None:
            self._connect(topic)

    def write(self, topic: str, data: bytes, time_ns: int) -> None:
        if self._closed:
            raise BagWriterError(f"bag {self.path} is closed")
        if self._writer is None:
            self._open_split(time_ns)
        elif time_ns - self._split_start_ns >= self.split_period_ns:
            self._finish_split()
            self._open_split(time_ns)
        assert self._writer is not None
        self._writer.write(self._connections[topic], time_ns, data)
        self._bytes += len(data)

    def set_custom_data(self, data: Mapping[str, str]) -> None:
        self._custom.update({str(k): str(v) for k, v in data.items()})

    def flush(self) -> None:
        """Finish the current file now (the next write starts another)."""
        if self._writer is not None:
            self._finish_split()
        else:
            self._write_metadata()

    def close(self) -> None:
        if self._closed:
            return
        self.flush()
        self._closed = True
        if self._lock is not None:
            self._lock.release()

    # -- files ---------------------------------------------------------------------------------

    def _open_split(self, time_ns: int) -> None:
        staging = staging_folder(self.path, self._split_index)
        writer = Writer(staging, version=Writer.VERSION_LATEST, storage_plugin=_PLUGINS[self.storage])
        writer.open()
        self._writer, self._split_start_ns = writer, time_ns
        self._connections = {}
        for topic in self._topics:
            self._connect(topic)

    def _connect(self, topic: str) -> None:
        assert self._writer is not None
        type_name, qos = self._topics[topic]
        store = typestore()
        self._connections[topic] = self._writer.add_connection(
            topic,
            type_name,
            msgdef=message_definition(type_name),
            rihs01=store.hash_rihs01(type_name),
            offered_qos_profiles=[rosbags_qos(qos)],
        )

    def _finish_split(self) -> None:
        writer, self._writer = self._writer, None
        assert writer is not None
        writer.close()
        self._metadata = adopt_split(self.path, writer.path, self._split_index, self._metadata, self._custom)
        self._split_index += 1

    def _write_metadata(self) -> None:
        if self._metadata is not None:
            write_metadata(self.path, self._metadata, self._custom)
