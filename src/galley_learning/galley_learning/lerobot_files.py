"""The files of a LeRobot v3.0 dataset: path templates, size limits, the data and video writers.

Data and video files roll over to the next ``file-NNN`` (and chunk) past LeRobot's size limits,
as LeRobot's writer does.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from galley_learning.lerobot_config import PIX_FMT

__all__ = [
    "CHUNKS_SIZE",
    "CODEBASE_VERSION",
    "DATA_FILES_SIZE_IN_MB",
    "DATA_PATH",
    "EPISODES_PATH",
    "PIX_FMT",
    "SVTAV1_PRESET",
    "TASKS_PATH",
    "VIDEO_FILES_SIZE_IN_MB",
    "VIDEO_PATH",
    "DataWriter",
    "VideoEncoding",
    "VideoWriter",
    "data_schema",
    "hf_features",
    "next_file",
    "write_tasks",
]

CODEBASE_VERSION = "v3.0"
CHUNKS_SIZE = 1000  # files per chunk folder
DATA_FILES_SIZE_IN_MB = 100
VIDEO_FILES_SIZE_IN_MB = 200
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
TASKS_PATH = "meta/tasks.parquet"
SVTAV1_PRESET = 12  # LeRobot's default preset for libsvtav1 (LIBSVTAV1_DEFAULT_PRESET)


def hf_features(features: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The ``datasets.Features`` JSON that LeRobot's parquet files carry (schema metadata)."""
    out: dict[str, Any] = {}
    for key, ft in features.items():
        if ft["dtype"] == "video":
            continue
        value = {"dtype": ft["dtype"], "_type": "Value"}
        out[key] = (
            value if ft["shape"] == [1] else {"feature": value, "length": ft["shape"][0], "_type": "List"}
        )
    return out


def data_schema(features: dict[str, dict[str, Any]]) -> pa.Schema:
    fields = []
    for key, ft in features.items():
        if ft["dtype"] == "video":
            continue
        scalar = pa.from_numpy_dtype(np.dtype(ft["dtype"]))
        fields.append(pa.field(key, scalar if ft["shape"] == [1] else pa.list_(scalar, ft["shape"][0])))
    meta = {"huggingface": json.dumps({"info": {"features": hf_features(features)}})}
    return pa.schema(fields, metadata=meta)


def next_file(chunk: int, file: int) -> tuple[int, int]:
    """LeRobot's update_chunk_file_indices."""
    return (chunk + 1, 0) if file == CHUNKS_SIZE - 1 else (chunk, file + 1)


class DataWriter:
    """data/chunk-*/file-*.parquet: one row group per episode, a new file past the size limit."""

    def __init__(self, root: Path, schema: pa.Schema) -> None:
        self.root, self.schema = root, schema
        self.chunk, self.file = 0, 0
        self.frames_in_file = 0
        self._writer: pq.ParquetWriter | None = None

    @property
    def path(self) -> Path:
        return self.root / DATA_PATH.format(chunk_index=self.chunk, file_index=self.file)

    def write(self, table: pa.Table) -> tuple[int, int]:
        if self._writer is not None and self.frames_in_file:
            size = self.path.stat().st_size
            if size + size / self.frames_in_file * table.num_rows >= DATA_FILES_SIZE_IN_MB * 2**20:
                self.close()
                self.chunk, self.file = next_file(self.chunk, self.file)
                self.frames_in_file = 0
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(self.path, self.schema, compression="snappy", use_dictionary=True)
        self._writer.write_table(table.cast(self.schema))
        self.frames_in_file += table.num_rows
        return self.chunk, self.file

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class VideoEncoding(Protocol):
    """How the videos are encoded: what :class:`VideoWriter` reads of its config.

    The exporter passes its :class:`galley_learning.lerobot.LeRobotExportConfig`.
    """

    @property
    def fps(self) -> int: ...  # frames per second
    @property
    def vcodec(self) -> str: ...  # encoder: libsvtav1 or h264
    @property
    def crf(self) -> int: ...  # encoder quality
    @property
    def gop(self) -> int: ...  # keyframe interval, frames


class VideoWriter:
    """videos/<key>/chunk-*/file-*.mp4: the episodes one after another, frame i at i / fps."""

    def __init__(self, root: Path, key: str, config: VideoEncoding) -> None:
        self.root, self.key, self.config = root, key, config
        self.chunk, self.file = 0, 0
        self.frames_in_file = 0
        self._container: Any = None
        self._stream: Any = None

    @property
    def path(self) -> Path:
        return self.root / VIDEO_PATH.format(video_key=self.key, chunk_index=self.chunk, file_index=self.file)

    def _open(self, width: int, height: int) -> None:
        import av  # noqa: PLC0415 (optional: av)

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._container = av.open(str(self.path), "w", options={"movflags": "faststart"})
        c = self.config
        options = {"g": str(c.gop), "crf": str(c.crf)}
        if c.vcodec == "libsvtav1":
            options.update({"preset": str(SVTAV1_PRESET), "svtav1-params": "fast-decode=0"})
        self._stream = self._container.add_stream(c.vcodec, rate=c.fps, options=options)
        self._stream.pix_fmt = PIX_FMT
        self._stream.width, self._stream.height = width, height
        self._stream.time_base = Fraction(1, c.fps)

    def write(self, frames: NDArray[np.uint8]) -> tuple[int, int, float, float]:
        """Append an episode's frames (T, H, W, 3); returns chunk, file, from and to timestamps (s)."""
        import av  # noqa: PLC0415 (optional: av)

        if self._container is not None and self.frames_in_file:
            size = self.path.stat().st_size
            if size + size / self.frames_in_file * len(frames) >= VIDEO_FILES_SIZE_IN_MB * 2**20:
                self.close()
                self.chunk, self.file = next_file(self.chunk, self.file)
                self.frames_in_file = 0
        if self._container is None:
            self._open(frames.shape[2], frames.shape[1])
        start = self.frames_in_file
        for image in frames:
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="rgb24")
            frame.pts = self.frames_in_file
            frame.time_base = Fraction(1, self.config.fps)
            for packet in self._stream.encode(frame):
                self._container.mux(packet)
            self.frames_in_file += 1
        fps = self.config.fps
        return self.chunk, self.file, start / fps, self.frames_in_file / fps

    def close(self) -> None:
        if self._container is not None:
            for packet in self._stream.encode():
                self._container.mux(packet)
            self._container.close()
            self._container = None


def write_tasks(path: Path, tasks: list[str]) -> None:
    """meta/tasks.parquet as pandas writes LeRobot's tasks frame: the task strings are its index."""
    pandas_meta = {
        "index_columns": ["task"],
        "column_indexes": [
            {
                "name": None,
                "field_name": None,
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": {"encoding": "UTF-8"},
            }
        ],
        "columns": [
            {
                "name": "task_index",
                "field_name": "task_index",
                "pandas_type": "int64",
                "numpy_type": "int64",
                "metadata": None,
            },
            {
                "name": "task",
                "field_name": "task",
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": None,
            },
        ],
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": "2.3.3",
    }
    schema = pa.schema(
        [("task_index", pa.int64()), ("task", pa.string())], metadata={"pandas": json.dumps(pandas_meta)}
    )
    table = pa.table({"task_index": list(range(len(tasks))), "task": tasks}, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
