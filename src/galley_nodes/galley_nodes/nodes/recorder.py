"""``recorder``: writes every topic (or the configured ones) to a rosbag2 bag, and HDF5 on request.

Subscribes to the topics in the graph (``topics``, default all, minus ``exclude_topics``) at
start and every ``discovery_period_s``, so topics created later (e.g. /tf by its first
broadcaster) join; ``latched_topics`` are subscribed transient-local so that their last message
reaches the bag even when it was published before the recorder subscribed. Each message is
stamped with its receive time (ROS time) and written as CDR to ``<output_dir>/<bag_name>/``:
rosbag2 with mcap storage (``storage: sqlite3`` on request), through ``rosbags`` in the embedded
host and ``rosbag2_py`` under ROS 2 (see :mod:`galley_runtime.recording`). With ``hdf5: true`` the
same messages also go to ``<bag>/episode.h5`` (one file per episode, :mod:`galley_runtime.recording.hdf5`).

Episode metadata (scene, seed, plan, per-step results, monitor verdicts, success flag, software
version; :mod:`galley_runtime.recording.episode_info`) goes into the bag's ``custom_data`` and a
sidecar ``<bag>/episode.json``, both refreshed while recording. A process killed mid-episode
leaves a bag readable up to its last finished file (every ``split_period_s`` of ROS time) and the
file it was writing unfinished; ``galley bag repair`` recovers that one up to its last whole chunk
(:mod:`galley_runtime.recording.repair`), and ``galley replay`` names the repair until then. With
``stop_on_abort`` the recording ends at the monitor's ABORT, as Kitchen-R's collector does, unless
the task executor replans after it (``max_replans``, the executor's): then it goes on to the end.
The recorder refuses to start when less than ``min_free_disk_mb`` is free where it would write.

One recorder records one episode (one bag, one HDF5 file), or, with ``per_instruction`` (what
``ros2 launch ... record:=true`` sets), a launch session as one bag per instruction:
``<output_dir>/<bag_name>_<n>/``, the first from the start to the second instruction, each next one
from its instruction (on /task/instruction, or a new /task/plan once the previous task is done) to
the next. Each such bag starts with the last message of every latched topic (the map, the static
transforms, the scene's preflight...), so it is read on its own; an ABORT with ``stop_on_abort``
ends the instruction's bag, not the session; a bag whose task did not succeed is renamed
``<bag_name>_<n>_failed`` when it is finished. Add the recorder to an embedded host first so that it
shuts down last and sees every other node's last messages.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from galley_core.config import Config, ConfigError, param
from galley_core.files import replacing
from galley_runtime.node import Node, Timer
from galley_runtime.qos import QoS
from galley_runtime.recording.episode_info import EpisodeInfo
from galley_runtime.recording.open_writer import open_bag_writer
from galley_runtime.recording.serialization import serialize

__all__ = ["DiskSpaceError", "RecorderConfig", "RecorderNode"]

_LATCHED = (
    "/tf_static",
    "/camera/top_down/image_raw",
    "/sim/preflight",
    "/map",
    "/task/result",
    "/task/status",
    "/navigation/status",
    "/planner/status",
    "/planner/inflated_map",
    "/trajectory",
    "/markers",
    "/arm/status",
    "/arm/target",
    "/task/plan",
    "/task_planner/status",
    "/failure_injector/injected",
)

#: Latched topics of the world rather than of a task: per_instruction writes their last message at
#: the start of each instruction's bag, so that it is read on its own (a task's latched plan, status
#: or result would be the previous task's there).
_CARRIED = (
    "/tf_static",
    "/map",
    "/sim/preflight",
    "/camera/top_down/image_raw",
    "/planner/inflated_map",
    "/markers",
)


class DiskSpaceError(ConfigError):
    """Too little free disk space to start (or go on) recording.

    A ConfigError on ``min_free_disk_mb`` so the CLI reports it as a user error, with the
    message written for a person rather than the generic "field = value" form.
    """

    def __init__(self, message: str, free_mb: float) -> None:
        super().__init__("min_free_disk_mb", free_mb, message)
        self.args = (message,)

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class RecorderConfig(Config):
    output_dir: str = param("runs/bags", "folder that receives the bag folder")
    bag_name: str = param("", "bag folder name; empty: episode_<UTC date and time>")
    storage: str = param("mcap", "rosbag2 storage plugin", choices=("mcap", "sqlite3"))
    writer: str = param(
        "auto",
        "bag writer; auto: rosbags where it imports (it stores every definition), else rosbag2_py",
        choices=("auto", "rosbags", "rosbag2_py"),
    )
    topics: tuple[str, ...] = param((), "absolute names of the topics to record; empty: every topic")
    exclude_topics: tuple[str, ...] = param((), "topics never recorded")
    latched_topics: tuple[str, ...] = param(
        _LATCHED, "topics subscribed transient-local (their publishers latch)"
    )
    discovery_period_s: float = param(0.2, "how often new topics are looked for", unit="s", gt=0.0)
    split_period_s: float = param(
        20.0,
        "a new bag file every this much ROS time: what a killed recorder loses until galley bag repair",
        unit="s",
        gt=0.0,
    )
    hdf5: bool = param(False, "also write the episode to <bag>/episode.h5")
    hdf5_compression: str = param(
        "lzf", "compression of HDF5 image datasets", choices=("lzf", "gzip", "none")
    )
    min_free_disk_mb: float = param(
        1024.0, "refuse to start (and stop) below this free space", unit="MB", ge=0.0
    )
    stop_on_abort: bool = param(True, "end the recording at the monitor's ABORT on /episode/events")
    max_replans: int = param(
        0,
        "the task executor's max_replans: while replans are left an ABORT ends a plan, not the episode, "
        "and stop_on_abort waits for the episode's end",
        ge=0,
    )
    queue_depth: int = param(1000, "subscription queue length per topic", ge=1)
    per_instruction: bool = param(
        False, "one bag per instruction, <bag_name>_<n>, for a session of many (ros2 launch record:=true)"
    )


class RecorderNode(Node):
    name = "recorder"
    Config = RecorderConfig
    timers = (Timer("on_discover", period_s=lambda c: c.discovery_period_s),)

    def __init__(self, host: Any, config: RecorderConfig) -> None:
        super().__init__(host, config)
        c = config
        self.output = Path(c.output_dir)
        self.output.mkdir(parents=True, exist_ok=True)
        self._check_disk(self.output)
        self.name = c.bag_name or datetime.now(timezone.utc).strftime("episode_%Y%m%d-%H%M%S")
        self.types: dict[str, str] = {}
        self.busy_s = 0.0  # wall time spent writing, for bench/recorder.py
        self.bags: list[Path] = []  # every bag finished, in order (per_instruction: one per instruction)
        self._latched: dict[str, Any] = {}  # the last message of each latched topic, for the next bag
        self.closed = False  # no bag open: the session's end, or (per_instruction) between two bags
        self._ended = False  # the session's end
        self._open()
        self.on_discover()

    def _open(self) -> None:
        """Start a bag: the session's, or (per_instruction) the next instruction's."""
        c = self.config
        name = f"{self.name}_{len(self.bags) + 1}" if c.per_instruction else self.name
        self.bag_path = self.output / name
        self.writer = open_bag_writer(
            self.bag_path, storage=c.storage, split_period_s=c.split_period_s, implementation=c.writer
        )
        self.hdf5: Any = None
        if c.hdf5:
            from galley_runtime.recording.hdf5 import Hdf5EpisodeWriter  # noqa: PLC0415 (optional: h5py)

            self.hdf5 = Hdf5EpisodeWriter(self.bag_path / "episode.h5", compression=c.hdf5_compression)
        self._serialize = serialize
        self.info = EpisodeInfo(storage=c.storage, bag=name, started_ns=self.now_ns(), complete=False)
        self.counts: dict[str, int] = {}
        self._splits = 0
        self.closed = False
        for topic, type_name in self.types.items():
            self._add_topic(topic, type_name)
        for topic, msg in self._latched.items():  # the new bag is read on its own
            self._write(topic, self.types[topic], msg)
        writer = type(self.writer).__name__
        self.log.info(f"recording to {self.bag_path} ({c.storage} by {writer}{', HDF5' if c.hdf5 else ''})")

    # -- topics --------------------------------------------------------------------------------

    def on_discover(self) -> None:
        if self.closed:
            return
        c = self.config
        for topic, types in self.host.topic_names_and_types():
            if topic in self.types or not types or topic in c.exclude_topics:
                continue
            if c.topics and topic not in c.topics:
                continue
            qos = QoS.latched(depth=c.queue_depth) if topic in c.latched_topics else QoS(depth=c.queue_depth)
            self.types[topic] = types[0]
            self._add_topic(topic, types[0])
            self.host.create_subscription(topic, types[0], self._recorder_for(topic, types[0]), qos)
        self._refresh_metadata()

    def _add_topic(self, topic: str, type_name: str) -> None:
        self.counts[topic] = 0
        latched = topic in self.config.latched_topics
        self.writer.add_topic(
            topic,
            type_name,
            QoS.latched() if latched else QoS(),
            type_hash=self.host.topic_type_hash(topic, type_name),
        )

    def _recorder_for(self, topic: str, type_name: str) -> Any:
        carried = topic in self.config.latched_topics and topic in _CARRIED

        def record(msg: Any) -> None:
            if carried:
                self._latched[topic] = msg
            if self.config.per_instruction and self._starts_a_task(topic):
                if not self.closed:
                    self._finish_bag("the next instruction")
                if not self._ended:
                    self._open()
            if self.closed:
                return
            self._write(topic, type_name, msg)
            final = len(self.info.replans) >= self.config.max_replans or self.info.done
            if self.config.stop_on_abort and self.info.aborted and final:
                abort = self.info.abort or {}
                reason = f"aborted by the monitor ({abort.get('rule')}): {abort.get('reason')}"
                if self.config.per_instruction:
                    self._finish_bag(reason)  # the next instruction opens the next bag
                else:
                    self.finish(reason)

        return record

    def _write(self, topic: str, type_name: str, msg: Any) -> None:
        start = time.perf_counter()
        now, data = self.now_ns(), self._serialize(msg)
        self.writer.write(topic, data, now)
        if self.hdf5 is not None:
            self.hdf5.write(topic, type_name, now, data, msg)
        self.counts[topic] += 1
        self.busy_s += time.perf_counter() - start
        self.info.note(topic, msg)

    def _starts_a_task(self, topic: str) -> bool:
        """per_instruction: whether a message on ``topic`` begins the next instruction's bag."""
        if topic == "/task/instruction":
            return self.closed or bool(self.info.instruction or self.info.plan or self.counts.get(topic))
        return topic == "/task/plan" and (self.closed or self.info.done)

    # -- metadata ------------------------------------------------------------------------------

    def _refresh_metadata(self) -> None:
        if not self.info.changed:
            return
        self.info.changed = False
        self.writer.set_custom_data(self.info.custom_data())
        self._write_sidecar()
        files = getattr(self.writer, "files", None)
        if files is not None and len(files) != self._splits:
            self._splits = len(files)
            self._check_disk(self.bag_path, stopping=True)

    def _write_sidecar(self) -> None:
        with replacing(self.bag_path / "episode.json") as tmp:
            tmp.write_text(json.dumps(self.info.to_dict(), indent=2, sort_keys=True))

    def _check_disk(self, folder: Path, *, stopping: bool = False) -> None:
        free_mb = shutil.disk_usage(folder).free / 1e6
        if free_mb >= self.config.min_free_disk_mb:
            return
        text = (
            f"only {free_mb:.0f} MB free on the disk of {folder} (min_free_disk_mb = "
            f"{self.config.min_free_disk_mb:g}); free some space, point output_dir at a larger disk, "
            "or lower min_free_disk_mb"
        )
        if not stopping:
            raise DiskSpaceError(f"recorder refuses to start: {text}", free_mb)
        self.log.error(f"recording stopped: {text}")
        self.finish("disk nearly full")

    def finish(self, reason: str) -> None:
        """End the recording: close the bag and the HDF5 file, write the final metadata."""
        self._ended = True
        self._finish_bag(reason)

    def _finish_bag(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.info.recording.update(complete=True, stop_reason=reason, ended_ns=self.now_ns())
        self.info.changed = True
        self.writer.set_custom_data(self.info.custom_data())
        self.writer.close()
        if self.hdf5 is not None:
            self.hdf5.set_metadata(self.info.to_dict())
            self.hdf5.close()
        self._write_sidecar()
        total = sum(self.counts.values())
        if self.config.per_instruction and not self.info.success:
            failed = self.bag_path.with_name(self.bag_path.name + "_failed")
            self.bag_path = self.bag_path.rename(failed)  # kept, and marked for a person reading the folder
        self.bags.append(self.bag_path)
        self.log.info(
            f"recording ended ({reason}): {total} messages on {len(self.counts)} topics in {self.bag_path}"
        )

    def on_shutdown(self) -> None:
        self.finish("shutdown")
