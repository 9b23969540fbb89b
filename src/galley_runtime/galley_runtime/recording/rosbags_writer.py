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

A split costs seconds of pure-Python YAML in rosbags (metadata.yaml at the close, each topic's
offered QoS at the open: 3.6 s for 50 topics on a busy 2-core machine), and under ROS 2 the
recorder writes from its subscription callbacks: a split done there held every message that came
meanwhile and stamped them all at once, so the bag showed a gap of up to a second in every topic
and the monitor, replaying it, aborted on /scan's rate where the live monitor had passed. So a
worker thread does both: it closes and adopts the finished file, and it opens the next file while
the current one is written (a killed recorder leaves that one empty, and the file the worker was
still closing unfinished: the repair recovers it). A write
at a split only swaps files; :meth:`RosbagsWriter.settle` waits for the worker. sqlite3 files split
in the writing thread as before: Python's sqlite3 connections belong to the thread that made them.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
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
#: An open file of the bag: rosbags' writer and its connection per topic.
_File = tuple[Writer, dict[str, Any]]


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
        self._file: _File | None = None  # the file being written (index _split_index)
        self._next: Future[_File] | None = None  # the next file, opened by the worker
        self._split_start_ns = 0
        self._split_index = 0
        self._metadata: dict[str, Any] | None = None  # written by the worker, or after settle()
        self._bytes = 0
        self._closed = False
        self._ahead = storage == "mcap"  # the worker opens and closes files (sqlite3: this thread)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="galley-bag-writer")
        self._tasks: list[Future[Any]] = []

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
        if self._file is not None:
            self._connect(self._file, topic)
        if self._next is not None:
            upcoming = self._next
            self._submit(lambda: self._connect(upcoming.result(), topic))

    def write(self, topic: str, data: bytes, time_ns: int) -> None:
        if self._closed:
            raise BagWriterError(f"bag {self.path} is closed")
        if self._file is None:
            self._begin(time_ns)
        elif time_ns - self._split_start_ns >= self.split_period_ns:
            self._rotate(time_ns)
        assert self._file is not None
        writer, connections = self._file
        writer.write(connections[topic], time_ns, data)
        self._bytes += len(data)

    def set_custom_data(self, data: Mapping[str, str]) -> None:
        self._custom.update({str(k): str(v) for k, v in data.items()})

    def settle(self) -> None:
        """Wait for the worker: every file finished so far is in the bag and listed (raises its error)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.result()

    def flush(self) -> None:
        """Finish the current file now (the next write starts another)."""
        self.settle()
        if self._file is not None:
            self._finish(self._file, self._split_index, dict(self._custom))
            self._file = None
            self._split_index += 1
        else:
            self._write_metadata()

    def close(self) -> None:
        if self._closed:
            return
        try:
            self.flush()
        finally:
            self._closed = True
            self._discard_next()
            self._worker.shutdown(wait=True)
            if self._lock is not None:
                self._lock.release()

    # -- files ---------------------------------------------------------------------------------

    def _submit(self, task: Callable[[], Any]) -> Future[Any]:
        future = self._worker.submit(task)
        self._tasks.append(future)
        return future

    def _begin(self, time_ns: int) -> None:
        """The first file, or the first after a flush; the worker opens the one after it."""
        self._file = self._take_next() if self._next is not None else self._open(self._split_index)
        self._split_start_ns = time_ns
        index = self._split_index + 1
        if self._ahead:
            self._next = self._submit(lambda: self._open(index))

    def _rotate(self, time_ns: int) -> None:
        """At a split: write to the file the worker opened; it finishes this one."""
        if not self._ahead:
            self.flush()
            self._begin(time_ns)
            return
        finished, index, custom = self._file, self._split_index, dict(self._custom)
        assert finished is not None
        self._file = self._take_next()
        self._split_index += 1
        self._split_start_ns = time_ns
        self._submit(lambda: self._finish(finished, index, custom))
        after = self._split_index + 1
        self._next = self._submit(lambda: self._open(after))

    def _take_next(self) -> _File:
        assert self._next is not None
        self.settle()  # its topics connected (normally done long before the split)
        upcoming, self._next = self._next, None
        return upcoming.result()

    def _discard_next(self) -> None:
        """Remove the file opened ahead and never written (the bag is closed)."""
        if self._next is None:
            return
        upcoming, self._next = self._next, None
        try:
            writer, _ = upcoming.result()
        except Exception:  # its error was raised by settle(), or does not matter now
            return
        writer.close()
        shutil.rmtree(writer.path, ignore_errors=True)

    def _open(self, index: int) -> _File:
        writer = Writer(
            staging_folder(self.path, index),
            version=Writer.VERSION_LATEST,
            storage_plugin=_PLUGINS[self.storage],
        )
        writer.open()
        file: _File = (writer, {})
        for topic in list(self._topics):
            self._connect(file, topic)
        return file

    def _connect(self, file: _File, topic: str) -> None:
        writer, connections = file
        if topic in connections:  # connected when the file was opened
            return
        type_name, qos = self._topics[topic]
        store = typestore()
        connections[topic] = writer.add_connection(
            topic,
            type_name,
            msgdef=message_definition(type_name),
            rihs01=store.hash_rihs01(type_name),
            offered_qos_profiles=[rosbags_qos(qos)],
        )

    def _finish(self, file: _File, index: int, custom: dict[str, str]) -> None:
        writer, _ = file
        writer.close()
        self._metadata = adopt_split(self.path, writer.path, index, self._metadata, custom)

    def _write_metadata(self) -> None:
        if self._metadata is not None:
            write_metadata(self.path, self._metadata, self._custom)
