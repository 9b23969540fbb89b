"""``galley bag repair``: finish the files a killed recording left unfinished, as ``ros2 bag reindex`` does.

A recording killed by a signal, a crash or a power cut (:mod:`.rosbags_writer`, :mod:`.staging`)
leaves its finished files, listed in metadata.yaml (none when it died within its first
``split_period_s``), and the file it was writing in a hidden ``.writing_<n>/`` folder, which no
rosbag2 reader opens. :func:`repair_bag` makes that file a finished one:

* **mcap**: rosbags writes the header, then every 1 MiB of messages a chunk (with the schemas and
  channels first used in it) and its message indexes; the summary and footer come only at close.
  rosbags' own reader cannot open such a file (it starts from the footer), so it is read with the
  ``mcap`` package's stream reader, record by record, up to the last whole record: every message
  of every whole chunk, checked against the chunk's CRC where the writer set one. Those messages are
  rewritten with rosbags' writer as ``<bag name>_<n>.mcap``, with each topic's type and message
  definition from the file's own schemas and its offered QoS from its channel, and merged into
  metadata.yaml. What is lost is the chunk being filled when the process died (at most 1 MiB of
  messages: about 0.1 s of ``galley run --video``, a few seconds with the cameras off).
* **sqlite3**: nothing can be recovered. rosbags writes a file's messages in one transaction that it
  commits at close; after a kill SQLite rolls it back (the ``.db3-journal`` beside it), leaving no
  topic and no message. The repair checks that the file holds no committed message, says so, and
  removes the staging folder.

The repair is idempotent (a finished bag is left as it is) and safe to interrupt: it writes in a
``.repair_<n>/`` folder, moves the finished file into the bag, rewrites metadata.yaml atomically, and
removes ``.writing_<n>/`` last; run again, it completes whatever a crash cut short. It keeps the
finished files and the bag's ``custom_data``, which it brings up to date from the recorder's
``episode.json`` (rewritten at every change, metadata.yaml only at each finished file) and to which
it adds ``galley.repair`` (JSON: what it recovered, per file). It refuses a bag whose recording
process still runs (:class:`~.staging.RecordingLock`).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import struct
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.metadata import parse_qos  # rosbags' parser of the QoS records its writer stores
from rosbags.typesys import Stores, get_types_from_idl, get_types_from_msg, get_typestore

from galley_runtime.recording.episode_info import custom_data_of
from galley_runtime.recording.metadata_file import load_metadata, load_yaml, write_metadata
from galley_runtime.recording.staging import (
    REPAIR_PREFIX,
    RecordingLock,
    adopt_split,
    split_file_name,
    staged_splits,
    staging_folder,
)

try:  # optional: only the repair of an unfinished .mcap file needs it (pinned in requirements.txt)
    from mcap.exceptions import EndOfFile, McapError
    from mcap.records import Channel, Message, Schema
    from mcap.stream_reader import StreamReader
except ImportError:  # pragma: no cover - depends on the environment
    StreamReader = None

__all__ = ["MCAP_REQUIREMENT", "RecoveredFile", "RepairError", "RepairReport", "repair_bag"]

#: The mcap package the repair of .mcap files is written against.
MCAP_REQUIREMENT = "mcap==1.6.0"


class RepairError(Exception):
    """A bag cannot be repaired (not a bag, being recorded, a file the repair does not know)."""


@dataclass(frozen=True)
class RecoveredFile:
    """What the repair made of one unfinished file.

    Attributes:
        staged: the unfinished file, relative to the bag folder.
        file: the finished file made from it; None when nothing could be recovered.
        messages: messages recovered.
        topics: topics among them.
        start_ns: first message's time (ROS time, ns); 0 without messages.
        end_ns: last message's time.
        size_bytes: the unfinished file's size.
        dropped_bytes: its bytes after the last whole record (a record cut by the kill).
        note: what happened, in words.
    """

    staged: str
    file: str | None
    messages: int
    topics: int
    start_ns: int
    end_ns: int
    size_bytes: int
    dropped_bytes: int
    note: str


@dataclass(frozen=True)
class RepairReport:
    """The outcome of :func:`repair_bag`: what was recovered, and the bag as it now is."""

    bag: Path
    recovered: list[RecoveredFile]
    files: int
    messages: int
    topics: int
    duration_ns: int

    @property
    def changed(self) -> bool:
        return bool(self.recovered)


def repair_bag(bag: Path) -> RepairReport:
    """Recover every unfinished file of ``bag`` (see the module docstring).

    Raises:
        RepairError: ``bag`` is no bag folder, its recording still runs, or an unfinished file
            cannot be read (the message names the file and why).
    """
    bag = Path(bag)
    if not bag.is_dir():
        raise RepairError(
            f"{bag} is not a bag folder; give the folder that holds metadata.yaml or .writing_<n>/"
        )
    lock = RecordingLock.acquire(bag)
    if lock is None:
        raise RepairError(
            f"{bag} is being recorded (or repaired) by a running process; repair it once it has stopped"
        )
    try:
        return _repair(bag)
    finally:
        lock.release()


def _repair(bag: Path) -> RepairReport:
    for _, folder in staged_splits(bag, REPAIR_PREFIX):
        shutil.rmtree(folder)  # the output of a repair cut short; its source is still staged
    merged = load_metadata(bag)
    staged = staged_splits(bag)
    if merged is None and not staged:
        raise RepairError(
            f"{bag} is not a galley bag: no metadata.yaml and no unfinished file (.writing_<n>/) in it; "
            "a bag that ros2 bag record left unfinished is repaired with: ros2 bag reindex"
        )
    recovered: list[RecoveredFile] = []
    if staged:
        custom = dict((merged or {}).get("custom_data") or {})
        sidecar = bag / "episode.json"
        if sidecar.exists():
            custom.update(custom_data_of(json.loads(sidecar.read_text())))
        for index, folder in staged:
            result, merged = _repair_one(bag, index, folder, merged, custom)
            recovered.append(result)
        if merged is not None:
            previous = json.loads(custom.get("galley.repair", "[]"))
            custom["galley.repair"] = json.dumps(
                previous + [{"staged": r.staged, "file": r.file, "messages": r.messages} for r in recovered]
            )
            write_metadata(bag, merged, custom)
    info = merged or {}
    return RepairReport(
        bag=bag,
        recovered=recovered,
        files=len(info.get("relative_file_paths", [])),
        messages=int(info.get("message_count", 0)),
        topics=len(info.get("topics_with_message_count", [])),
        duration_ns=int(info.get("duration", {}).get("nanoseconds", 0)),
    )


def _repair_one(
    bag: Path, index: int, folder: Path, merged: dict[str, Any] | None, custom: dict[str, str]
) -> tuple[RecoveredFile, dict[str, Any] | None]:
    """Recover staging folder ``folder`` (file ``index``); returns what happened and the bag's metadata."""
    listed = set((merged or {}).get("relative_file_paths", []))
    if (folder / "metadata.yaml").exists():
        # rosbags closed the file; the process died while adopting it (moving it, listing it).
        split = load_yaml(folder / "metadata.yaml")["rosbag2_bagfile_information"]
        name = split_file_name(bag, index, Path(split["relative_file_paths"][0]).suffix)
        staged = f"{folder.name}/{Path(split['relative_file_paths'][0]).name}"
        count, topics = int(split["message_count"]), len(split["topics_with_message_count"])
        start = int(split["starting_time"]["nanoseconds_since_epoch"])
        end = start + int(split["duration"]["nanoseconds"])
        if name not in listed:
            merged = adopt_split(bag, folder, index, merged, custom)
        else:
            shutil.rmtree(folder)
        note = "closed before the kill; listed now"
        return RecoveredFile(staged, name, count, topics, start, end, 0, 0, note), merged
    files = sorted(f for f in folder.iterdir() if f.suffix in (".mcap", ".db3"))
    if not files:
        shutil.rmtree(folder)
        return RecoveredFile(
            folder.name, None, 0, 0, 0, 0, 0, 0, "empty: the recorder died opening it"
        ), merged
    source = files[0]
    staged, size = f"{folder.name}/{source.name}", source.stat().st_size
    name = split_file_name(bag, index, source.suffix)
    if name in listed:  # recovered by a repair that died before it removed the staging folder
        shutil.rmtree(folder)
        return RecoveredFile(staged, name, 0, 0, 0, 0, size, 0, f"recovered already as {name}"), merged
    if source.suffix == ".db3":
        committed = _sqlite_messages(source)
        if committed:
            raise RepairError(
                f"{bag / staged} holds {committed} committed messages, which galley's writer never leaves "
                "(it commits a file once, at close); galley bag repair does not recover such a file"
            )
        shutil.rmtree(folder)
        note = "nothing to recover: SQLite rolled back the transaction the killed writer had not committed"
        return RecoveredFile(staged, None, 0, 0, 0, 0, size, size, note), merged
    target = staging_folder(bag, index, REPAIR_PREFIX)
    result = _rewrite_mcap(source, target, staged, name)
    if result.messages == 0:
        shutil.rmtree(target)
        shutil.rmtree(folder)
        return replace(result, file=None, note=f"nothing to recover: no whole chunk ({result.note})"), merged
    merged = adopt_split(bag, target, index, merged, custom)
    shutil.rmtree(folder)  # last: until here a crash leaves the source to recover again
    return result, merged


def _sqlite_messages(path: Path) -> int:
    """Messages committed to an sqlite3 bag file (opening it rolls back what a killed writer left open)."""
    with closing(sqlite3.connect(path)) as db:
        try:
            return int(db.execute("SELECT count(*) FROM messages").fetchone()[0])
        except sqlite3.DatabaseError:  # no messages table: killed before even the schema was committed
            return 0


class _WholeReads:
    """A file whose short read (the end of a file cut inside a record) ends the stream.

    mcap's stream reader ends at a read that returns nothing and takes a short one as whole; where
    the cut falls inside a record's length field, it then fails to unpack it instead of ending.
    """

    def __init__(self, f: BinaryIO) -> None:
        self._f = f

    def read(self, size: int = -1) -> bytes:
        data = self._f.read(size)
        if size > 0 and len(data) < size:
            raise EndOfFile()
        return data


def _rewrite_mcap(source: Path, target: Path, staged: str, name: str) -> RecoveredFile:
    """Copy every message of ``source``'s whole records into a new one-file bag ``target`` (closed).

    ``staged`` and ``name`` are the source's and the finished file's names for the result.
    """
    if StreamReader is None:
        raise RepairError(
            f"recovering {source} needs the Python package mcap: pip install {MCAP_REQUIREMENT}"
        )
    writer = Writer(target, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    schemas: dict[int, Any] = {}
    connections: dict[int, Any] = {}
    types = get_typestore(Stores.EMPTY)
    used: set[int] = set()
    count, start, end, whole = 0, 0, 0, 0
    with source.open("rb") as f:
        try:
            for record in StreamReader(_WholeReads(f), validate_crcs=True).records:
                if isinstance(record, Schema):
                    schemas.setdefault(record.id, record)
                elif isinstance(record, Channel) and record.id not in connections:
                    connections[record.id] = _connect(writer, record, schemas, types, source)
                elif isinstance(record, Message):
                    writer.write(connections[record.channel_id], record.log_time, record.data)
                    start = record.log_time if count == 0 else min(start, record.log_time)
                    end, count = max(end, record.log_time), count + 1
                    used.add(record.channel_id)
                whole = f.tell()  # every record yielded so far was read whole (a chunk's after the chunk)
            note = "the file was complete"
        except EndOfFile:
            note = "read up to its last whole record"
        except (McapError, struct.error, ValueError, KeyError) as err:
            note = f"damaged after byte {whole}: {type(err).__name__}: {err}"
    writer.close()
    size = source.stat().st_size
    return RecoveredFile(staged, name, count, len(used), start, end, size, size - whole, note)


def _connect(writer: Writer, channel: Any, schemas: dict[int, Any], types: Any, source: Path) -> Any:
    """The rewritten file's connection for an mcap channel: its schema's type and definition, its QoS."""
    schema = schemas.get(channel.schema_id)
    if schema is None or schema.encoding not in ("ros2msg", "ros2idl"):
        raise RepairError(
            f"{source}: topic {channel.topic} has no ROS 2 message definition, which rosbag2 needs"
        )
    text = schema.data.decode()
    if schema.name not in types.fielddefs:  # a store of the file's own definitions, for their hashes
        parsed = (
            get_types_from_msg(text, schema.name)
            if schema.encoding == "ros2msg"
            else get_types_from_idl(text)
        )
        types.register(parsed)
    qos = parse_qos(channel.metadata.get("offered_qos_profiles", ""))
    return writer.add_connection(
        channel.topic,
        schema.name,
        msgdef=text,
        rihs01=types.hash_rihs01(schema.name),
        serialization_format=channel.message_encoding,
        offered_qos_profiles=qos,
    )
