"""The embedded host's bag writer: rosbag2 (mcap or sqlite3) through ``rosbags``, crash-safe by splitting.

``rosbags`` writes a bag's metadata.yaml, and an mcap file's summary and footer, only when the bag
is closed; a killed process leaves neither, and readers refuse such a bag. So the bag is written as
a sequence of files (``<name>_0.mcap``, ``<name>_1.mcap``, ... as ``ros2 bag record
--max-bag-duration`` does): every ``split_period_s`` of ROS time (and at every :meth:`flush`) the
current file is closed, complete and indexed, and metadata.yaml is rewritten atomically to list
every finished file. A process killed at any moment leaves a bag that rosbags, ``ros2 bag`` and
Foxglove read up to the last finished file; the unfinished one, in a hidden ``.writing_<n>`` folder,
is ignored by them and lost (at most ``split_period_s`` of data).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import StoragePlugin, Writer

from galley_nodes.embedded.rosbags_messages import typestore
from galley_nodes.qos import QoS
from galley_nodes.recording.writer import BagWriter, BagWriterError

__all__ = ["RosbagsWriter", "rosbags_qos"]

_NS = 1_000_000_000
_PLUGINS = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
_INFINITE = QosTime(0x7FFFFFFF, 0xFFFFFFFF)


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


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

    def add_topic(self, topic: str, type_name: str, qos: QoS) -> None:
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

    # -- files ---------------------------------------------------------------------------------

    def _open_split(self, time_ns: int) -> None:
        staging = self.path / f".writing_{self._split_index}"
        writer = Writer(staging, version=Writer.VERSION_LATEST, storage_plugin=_PLUGINS[self.storage])
        writer.open()
        self._writer, self._split_start_ns = writer, time_ns
        self._connections = {}
        for topic in self._topics:
            self._connect(topic)

    def _connect(self, topic: str) -> None:
        assert self._writer is not None
        type_name, qos = self._topics[topic]
        self._connections[topic] = self._writer.add_connection(
            topic, type_name, typestore=typestore(), offered_qos_profiles=[rosbags_qos(qos)]
        )

    def _finish_split(self) -> None:
        writer, self._writer = self._writer, None
        assert writer is not None
        writer.close()
        staging = writer.path
        split = _load_yaml(staging / "metadata.yaml")["rosbag2_bagfile_information"]
        [storage_file] = split["relative_file_paths"]
        name = f"{self.path.name}_{self._split_index}{Path(storage_file).suffix}"
        os.replace(staging / storage_file, self.path / name)
        shutil.rmtree(staging)
        self._split_index += 1
        self._merge(split, name)
        self._write_metadata()

    def _merge(self, split: dict[str, Any], name: str) -> None:
        split["relative_file_paths"] = [name]
        for f in split["files"]:
            f["path"] = name
        if self._metadata is None:
            self._metadata = split
            return
        meta = self._metadata
        start = min(
            meta["starting_time"]["nanoseconds_since_epoch"],
            split["starting_time"]["nanoseconds_since_epoch"],
        )
        end = max(
            meta["starting_time"]["nanoseconds_since_epoch"] + meta["duration"]["nanoseconds"],
            split["starting_time"]["nanoseconds_since_epoch"] + split["duration"]["nanoseconds"],
        )
        meta["starting_time"]["nanoseconds_since_epoch"] = start
        meta["duration"]["nanoseconds"] = end - start
        meta["message_count"] += split["message_count"]
        meta["relative_file_paths"].append(name)
        meta["files"] += split["files"]
        counts = {t["topic_metadata"]["name"]: t for t in meta["topics_with_message_count"]}
        for entry in split["topics_with_message_count"]:
            known = counts.get(entry["topic_metadata"]["name"])
            if known is None:
                meta["topics_with_message_count"].append(entry)
            else:
                known["message_count"] += entry["message_count"]

    def _write_metadata(self) -> None:
        if self._metadata is None:
            return
        self._metadata["custom_data"] = dict(self._custom) or None
        tmp = self.path / "metadata.yaml.tmp"
        with tmp.open("w") as f:
            # libyaml's dumper: the merged metadata grows with every split, and ruamel's pure-Python
            # emitter made rewriting it a quarter of an episode's wall time.
            yaml.dump(
                {"rosbag2_bagfile_information": self._metadata},
                f,
                Dumper=_Dumper,
                default_flow_style=False,
                sort_keys=False,
            )
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path / "metadata.yaml")


def _load_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(), Loader=_Loader)
