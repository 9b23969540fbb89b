"""One HDF5 file per episode: a group per topic, the same messages as the bag.

Layout (``h5py``)::

    /                         attrs: episode (JSON: scene, seed, plan, step results, success, version)
    /topics/<topic>/          attrs: type ("sensor_msgs/msg/Image"), count
        timestamp_ns (N,)     int64: receive time, as in the bag
        cdr (N,)              variable-length uint8: the CDR bytes of each message, as in the bag
    /topics/<image topic>/    (sensor_msgs/msg/Image with a known encoding)
        timestamp_ns (N,)     int64
        header_stamp_ns (N,)  int64
        image (N, H, W[, C])  uint8 / uint16 / float32 by encoding; one chunk per image, compressed
                              attrs: encoding, frame_id

The topic's name without its leading slash is the group path (``/camera/base/image_raw`` ->
``/topics/camera/base/image_raw``). Decode a ``cdr`` entry with
``galley_runtime.rosbags_messages.deserialize(bytes(entry), type)``. An image whose size
differs from the topic's first goes to the topic's ``cdr`` dataset instead, with its time in
``cdr_timestamp_ns``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import h5py
import numpy as np

__all__ = ["IMAGE_ENCODINGS", "Hdf5EpisodeWriter"]

#: Image encodings stored as arrays: numpy dtype and channels (0: a 2-D image).
IMAGE_ENCODINGS: dict[str, tuple[str, int]] = {
    "rgb8": ("uint8", 3),
    "bgr8": ("uint8", 3),
    "rgba8": ("uint8", 4),
    "bgra8": ("uint8", 4),
    "mono8": ("uint8", 0),
    "8UC1": ("uint8", 0),
    "mono16": ("uint16", 0),
    "16UC1": ("uint16", 0),
    "32FC1": ("float32", 0),
}
_BATCH = 256


class _Topic:
    """Buffered appends to one topic's datasets."""

    def __init__(self, group: h5py.Group, type_name: str, compression: str | None) -> None:
        self.group = group
        self.compression = compression
        group.attrs["type"] = type_name
        group.attrs["count"] = 0
        self.times = group.create_dataset("timestamp_ns", (0,), dtype="i8", maxshape=(None,), chunks=(1024,))
        self.cdr: h5py.Dataset | None = None
        self.image: h5py.Dataset | None = None
        self.stamps: h5py.Dataset | None = None
        self._pending_times: list[int] = []
        self._pending_cdr: list[np.ndarray[Any, Any]] = []
        self._pending_cdr_times: list[int] = []
        self.count = 0

    def add_cdr(self, time_ns: int, data: bytes) -> None:
        self._pending_cdr_times.append(time_ns)
        self._pending_cdr.append(np.frombuffer(data, dtype=np.uint8))
        if len(self._pending_cdr) >= _BATCH:
            self.flush()

    def add_image(self, time_ns: int, stamp_ns: int, pixels: np.ndarray[Any, Any], msg: Any) -> bool:
        if self.image is None:
            self.image = self.group.create_dataset(
                "image",
                (0, *pixels.shape),
                dtype=pixels.dtype,
                maxshape=(None, *pixels.shape),
                chunks=(1, *pixels.shape),
                compression=self.compression,
                shuffle=self.compression is not None and pixels.dtype.itemsize > 1,
            )
            self.image.attrs["encoding"] = str(msg.encoding)
            self.image.attrs["frame_id"] = str(msg.header.frame_id)
            self.stamps = self.group.create_dataset(
                "header_stamp_ns", (0,), dtype="i8", maxshape=(None,), chunks=(1024,)
            )
        if self.image.shape[1:] != pixels.shape:
            return False
        assert self.stamps is not None
        n = self.image.shape[0]
        self.image.resize(n + 1, axis=0)
        self.image[n] = pixels
        self.stamps.resize(n + 1, axis=0)
        self.stamps[n] = stamp_ns
        self._pending_times.append(time_ns)
        self.count += 1
        if len(self._pending_times) >= _BATCH:
            self.flush()
        return True

    def flush(self) -> None:
        if self._pending_cdr:
            if self.cdr is None:
                self.cdr = self.group.create_dataset(
                    "cdr", (0,), dtype=h5py.vlen_dtype(np.uint8), maxshape=(None,), chunks=(256,)
                )
            n = self.cdr.shape[0]
            self.cdr.resize(n + len(self._pending_cdr), axis=0)
            self.cdr[n:] = self._pending_cdr
            if self.image is None:
                self._pending_times += self._pending_cdr_times
            else:  # an image topic's odd-sized images: their times apart from the images'
                if "cdr_timestamp_ns" not in self.group:
                    self.group.create_dataset("cdr_timestamp_ns", (0,), dtype="i8", maxshape=(None,))
                times = self.group["cdr_timestamp_ns"]
                times.resize(n + len(self._pending_cdr), axis=0)
                times[n:] = self._pending_cdr_times
            self.count += len(self._pending_cdr)
            self._pending_cdr, self._pending_cdr_times = [], []
        if self._pending_times:
            n = self.times.shape[0]
            self.times.resize(n + len(self._pending_times), axis=0)
            self.times[n:] = self._pending_times
            self._pending_times = []
        self.group.attrs["count"] = self.count


class Hdf5EpisodeWriter:
    """Writes one episode's messages to an HDF5 file (layout in the module docstring).

    Args:
        path: the file to create.
        compression: ``lzf`` (fast, the default), ``gzip`` or ``none`` for the image datasets.
    """

    def __init__(self, path: Path, *, compression: str = "lzf") -> None:
        if compression not in ("lzf", "gzip", "none"):
            raise ValueError(f"HDF5 compression {compression!r}: use lzf, gzip or none")
        self.path = Path(path)
        self.file = h5py.File(self.path, "x")
        self._compression = None if compression == "none" else compression
        self._topics: dict[str, _Topic] = {}

    def write(self, topic: str, type_name: str, time_ns: int, data: bytes, msg: Any = None) -> None:
        """Add one message (its CDR bytes, and the message object when the caller has it)."""
        entry = self._topics.get(topic)
        if entry is None:
            group = self.file.require_group("topics/" + topic.strip("/"))
            entry = self._topics[topic] = _Topic(group, type_name, self._compression)
        if type_name == "sensor_msgs/msg/Image":
            if msg is None:
                from galley_runtime.rosbags_messages import deserialize  # noqa: PLC0415 (optional: rosbags)

                msg = deserialize(data, type_name)
            pixels = _pixels(msg)
            stamp = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)
            if pixels is not None and entry.add_image(time_ns, stamp, pixels, msg):
                return
        entry.add_cdr(time_ns, data)

    def set_metadata(self, metadata: Mapping[str, Any]) -> None:
        """The episode's metadata, as JSON in the root attribute ``episode``."""
        self.file.attrs["episode"] = json.dumps(metadata, sort_keys=True)

    def flush(self) -> None:
        for entry in self._topics.values():
            entry.flush()
        self.file.flush()

    def close(self) -> None:
        if not self.file:
            return
        self.flush()
        self.file.close()


def _pixels(msg: Any) -> np.ndarray[Any, Any] | None:
    """The image as an (H, W[, C]) array, None for an encoding not in IMAGE_ENCODINGS or a bad size."""
    known = IMAGE_ENCODINGS.get(str(msg.encoding))
    if known is None:
        return None
    dtype, channels = known
    height, width = int(msg.height), int(msg.width)
    raw = msg.data if isinstance(msg.data, np.ndarray) else np.frombuffer(bytes(msg.data), np.uint8)
    shape = (height, width, channels) if channels else (height, width)
    itemsize = np.dtype(dtype).itemsize
    if raw.size != height * width * max(channels, 1) * itemsize or bool(msg.is_bigendian):
        return None
    return raw.view(dtype).reshape(shape)
