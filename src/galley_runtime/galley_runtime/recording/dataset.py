"""Episodes of a folder of bags as time-synchronised samples: the input for training.

:func:`iter_samples` reads one bag and yields one sample per tick of ``rate_hz`` from the bag's
first message to its last, each holding the latest message of every stream at or before the tick
(sample-and-hold). :func:`load_episode` stacks them into arrays; :func:`iter_episodes` walks a
folder of bag folders (each with its metadata from the recorder's ``episode.json``).

A sample (a dict; with :func:`load_episode` every value gains a leading time axis ``T``):

====================  ===================  ==================================================
key                   shape, dtype         content
====================  ===================  ==================================================
``t_s``               (), float64          tick time, seconds of ROS time
``image/<name>``      (H, W, 3) uint8      RGB image of each camera stream (``rgb8``/``bgr8``)
``depth/<name>``      (H, W) float32       depth image, metres (``32FC1``)
``joint_position``    (J,) float64         /joint_states positions, in ``joint_names`` order
``joint_velocity``    (J,) float64         /joint_states velocities
``odom``              (5,) float64         /odom x, y (m), yaw (rad), forward speed (m/s), yaw rate (rad/s)
``cmd_vel``           (2,) float64         /cmd_vel linear.x (m/s), angular.z (rad/s)
``arm_command``       (J,) float64         /arm/joint_command positions by joint name; NaN where none
``gripper_command``   (), float64          /arm/joint_command's ``gripper`` opening (0..1); NaN where none
``step``              (), str              the plan step running (/episode/events); "" between steps
``step_index``        (), int64            its index in the plan; -1 when none runs
``valid/<key>``       (), bool             whether the stream had a message at or before the tick
====================  ===================  ==================================================

Before a stream's first message its entries are zeros (NaN for ``arm_command``) and ``valid/...``
is False. Image sizes and joint names are taken from each stream's first message.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.rosbag2 import Reader

from galley_runtime.conversions import image_from_msg, odom_row
from galley_runtime.msg_constants import ABORT, EPISODE_DONE, STEP_FAILED, STEP_STARTED, STEP_SUCCEEDED
from galley_runtime.recording.staging import interrupted_bags, interrupted_error, is_staging, staged_splits
from galley_runtime.rosbags_messages import deserialize

__all__ = ["DEFAULT_CAMERAS", "DatasetStreams", "iter_episodes", "iter_samples", "load_episode"]

#: Image streams by sample name (``image/base``, ``depth/base``, ``image/wrist``).
DEFAULT_CAMERAS: Mapping[str, str] = {
    "image/base": "/camera/base/image_raw",
    "depth/base": "/camera/base/depth/image_raw",
    "image/wrist": "/camera/wrist/image_raw",
}


@dataclass(frozen=True)
class DatasetStreams:
    """Which topic feeds which part of a sample."""

    cameras: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_CAMERAS))
    joint_states: str = "/joint_states"
    odom: str = "/odom"
    cmd_vel: str = "/cmd_vel"
    arm_command: str = "/arm/joint_command"
    episode_events: str = "/episode/events"


class _Hold:
    """The latest value of every stream, in sample form."""

    def __init__(self, streams: DatasetStreams) -> None:
        self.streams = streams
        self.values: dict[str, Any] = {}
        self.joint_names: list[str] = []
        self._by_topic: dict[str, list[str]] = {}
        for name, topic in streams.cameras.items():
            self._by_topic.setdefault(topic, []).append(name)
        for name in ("joint_states", "odom", "cmd_vel", "arm_command", "episode_events"):
            self._by_topic.setdefault(getattr(streams, name), []).append(name)

    @property
    def topics(self) -> set[str]:
        return set(self._by_topic)

    def update(self, topic: str, msg: Any) -> None:
        for name in self._by_topic.get(topic, ()):
            if name in self.streams.cameras:
                self.values[name] = image_from_msg(msg)
            elif name == "joint_states":
                if not self.joint_names:
                    self.joint_names = [str(n) for n in msg.name]
                index = {str(n): i for i, n in enumerate(msg.name)}
                order = [index[n] for n in self.joint_names if n in index]
                if len(order) == len(self.joint_names):
                    self.values["joint_position"] = np.asarray(msg.position, dtype=float)[order]
                    if len(msg.velocity) == len(msg.name):
                        self.values["joint_velocity"] = np.asarray(msg.velocity, dtype=float)[order]
            elif name == "odom":
                self.values["odom"] = odom_row(msg)
            elif name == "cmd_vel":
                self.values["cmd_vel"] = np.array([msg.linear.x, msg.angular.z], dtype=float)
            elif name == "arm_command":
                command = dict(self.values.get("_arm", {}))
                command.update(
                    zip((str(n) for n in msg.name), np.asarray(msg.position, dtype=float), strict=False)
                )
                self.values["_arm"] = command
            elif name == "episode_events":
                kind = int(msg.kind)
                if kind == STEP_STARTED:
                    self.values["_step"] = (str(msg.step), int(msg.step_index))
                elif kind in (STEP_SUCCEEDED, STEP_FAILED, EPISODE_DONE, ABORT):
                    self.values["_step"] = ("", -1)

    def sample(self, t_s: float, shapes: dict[str, tuple[tuple[int, ...], Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"t_s": t_s}
        joints = len(self.joint_names)
        defaults = {
            "joint_position": ((joints,), np.float64),
            "joint_velocity": ((joints,), np.float64),
            "odom": ((5,), np.float64),
            "cmd_vel": ((2,), np.float64),
        }
        for key, value in self.values.items():
            if not key.startswith("_") and key not in shapes:
                shapes[key] = (np.shape(value), np.asarray(value).dtype)
        for key in [*self.streams.cameras, *defaults]:
            value = self.values.get(key)
            out[f"valid/{key}"] = value is not None
            if value is None:
                shape, dtype = shapes.get(key, defaults.get(key, ((0,), np.float64)))
                value = np.zeros(shape, dtype=dtype)
            out[key] = value
        arm = self.values.get("_arm")
        out["valid/arm_command"] = arm is not None
        out["arm_command"] = np.array([(arm or {}).get(n, math.nan) for n in self.joint_names], dtype=float)
        out["gripper_command"] = float((arm or {}).get("gripper", math.nan))
        out["step"], out["step_index"] = self.values.get("_step", ("", -1))
        return out


def iter_samples(
    bag: str | Path, rate_hz: float = 10.0, streams: DatasetStreams | None = None
) -> Iterator[dict[str, Any]]:
    """Samples of one bag at ``rate_hz`` (see the module docstring for their format).

    Raises:
        ValueError: ``rate_hz`` not > 0.
        FileNotFoundError: no bag at ``bag``.
    """
    if not rate_hz > 0:
        raise ValueError(f"rate_hz = {rate_hz} must be > 0 (samples per second)")
    hold = _Hold(streams or DatasetStreams())
    period_ns = round(1e9 / rate_hz)
    shapes: dict[str, tuple[tuple[int, ...], Any]] = {}
    with Reader(Path(bag)) as reader:
        if not reader.message_count:
            return
        connections = [c for c in reader.connections if c.topic in hold.topics]
        tick, last = reader.start_time, reader.end_time - 1
        for connection, stamp, raw in reader.messages(connections):
            while tick < stamp:
                yield hold.sample(tick / 1e9, shapes)
                tick += period_ns
            hold.update(connection.topic, deserialize(raw, connection.msgtype))
        while tick <= last:
            yield hold.sample(tick / 1e9, shapes)
            tick += period_ns


def load_episode(
    bag: str | Path, rate_hz: float = 10.0, streams: DatasetStreams | None = None
) -> dict[str, np.ndarray[Any, Any]]:
    """All samples of one bag stacked: every value gains a leading time axis of length T."""
    samples = list(iter_samples(bag, rate_hz, streams))
    if not samples:
        return {}
    out = {}
    for key in samples[0]:
        values = [np.asarray(s[key]) for s in samples]
        like = next((v for v in reversed(values) if v.shape == values[-1].shape), values[-1])
        # Entries before a stream's first message: zeros shaped like its messages.
        empty = np.full_like(like, np.nan) if key == "arm_command" else np.zeros_like(like)
        out[key] = np.stack([v if v.shape == like.shape else empty for v in values])
    return out


def iter_episodes(
    folder: str | Path, rate_hz: float = 10.0, streams: DatasetStreams | None = None
) -> Iterator[tuple[Path, dict[str, Any], Iterator[dict[str, Any]]]]:
    """(bag folder, episode metadata, samples) for every bag folder under ``folder``, in name order.

    The metadata is the recorder's ``episode.json`` ({} for a bag without one).

    Raises:
        FileNotFoundError: ``folder`` holds no bag (no ``metadata.yaml`` below it).
        UnfinishedBagError: a bag under ``folder`` was interrupted while recording (the message
            names ``galley bag repair``); one being recorded now is left out.
    """
    interrupted = interrupted_bags(Path(folder))
    if interrupted:
        raise interrupted_error(interrupted, Path(folder))
    found = (p.parent for p in Path(folder).rglob("metadata.yaml") if not is_staging(p.parent))
    bags = sorted(b for b in found if not staged_splits(b))
    if not bags:
        raise FileNotFoundError(f"no bags under {folder}: a bag is a folder with metadata.yaml")
    for bag in bags:
        sidecar = bag / "episode.json"
        meta = json.loads(sidecar.read_text()) if sidecar.exists() else {}
        yield bag, meta, iter_samples(bag, rate_hz, streams)
