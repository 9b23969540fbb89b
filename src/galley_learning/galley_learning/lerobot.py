"""Export a collection of recorded episodes as a LeRobotDataset, format v3.0.

The layout, file names, column names, dtypes and statistics follow LeRobot's own writer
(huggingface/lerobot v0.6.1: ``src/lerobot/datasets/{utils,feature_utils,dataset_metadata,
dataset_writer,compute_stats,video_utils,io_utils}.py``, ``src/lerobot/configs/video.py``)::

    OUT/meta/info.json                                   schema, fps, counts, path templates
    OUT/meta/stats.json                                  per-feature min/max/mean/std/count/q01..q99
    OUT/meta/tasks.parquet                               task string (pandas index) -> task_index
    OUT/meta/episodes/chunk-000/file-000.parquet         one row per episode: lengths, offsets, stats
    OUT/data/chunk-000/file-000.parquet                  one row per frame, one row group per episode
    OUT/videos/<camera key>/chunk-000/file-000.mp4       the episodes' frames, concatenated

Features: ``observation.images.base`` and ``observation.images.wrist`` (video), ``observation.state``
(float32, 20: :data:`galley_learning.policy.frames.STATE_NAMES`), ``action`` (float32, 10:
Kitchen-R's action point, :data:`~galley_learning.policy.frames.ACTION_NAMES`) and LeRobot's index
columns ``timestamp`` (s from the episode's first frame), ``frame_index``, ``episode_index``,
``index`` and ``task_index``. A frame's task is the plan step running (Kitchen-R's decomposed task);
frames between steps take the step that starts next, or the last one at the end of the episode.

Files roll over to ``file-001`` ... when they pass LeRobot's size limits (100 MB of data, 200 MB of
video), as LeRobot's writer does; the episodes' metadata stays in one file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from galley_core.config import Config, ConfigError, param
from galley_learning.policy.dataset import find_bags

__all__ = [
    "CODEBASE_VERSION",
    "ExportSummary",
    "LeRobotExportConfig",
    "LeRobotExportError",
    "export_lerobot",
    "frame_tasks",
]

CODEBASE_VERSION = "v3.0"
CHUNKS_SIZE = 1000  # files per chunk folder
DATA_FILES_SIZE_IN_MB = 100
VIDEO_FILES_SIZE_IN_MB = 200
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
TASKS_PATH = "meta/tasks.parquet"
QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
PIX_FMT = "yuv420p"
#: Camera name in galley's frames -> LeRobot feature key.
CAMERA_KEYS = {"base": "observation.images.base", "wrist": "observation.images.wrist"}
#: LeRobot's index columns (``lerobot.utils.constants.DEFAULT_FEATURES``).
INDEX_FEATURES: dict[str, dict[str, Any]] = {
    "timestamp": {"dtype": "float32", "shape": [1], "names": None},
    "frame_index": {"dtype": "int64", "shape": [1], "names": None},
    "episode_index": {"dtype": "int64", "shape": [1], "names": None},
    "index": {"dtype": "int64", "shape": [1], "names": None},
    "task_index": {"dtype": "int64", "shape": [1], "names": None},
}
_SVTAV1_PRESET = 12  # LeRobot's default preset for libsvtav1 (LIBSVTAV1_DEFAULT_PRESET)


class LeRobotExportError(Exception):
    """An input the exporter cannot use; the message names it and the fix."""


@dataclass(frozen=True)
class LeRobotExportConfig(Config):
    """How a collection is exported (``galley export-lerobot``)."""

    fps: int = param(10, "frames per second the episodes are resampled to", unit="Hz", ge=1)
    image_size: tuple[int, ...] = param(
        (), "(width, height) every image is resized to; () keeps the recorded size", unit="px", ge=2
    )
    robot_type: str = param("galley_mm", "robot_type written to meta/info.json")
    vcodec: str = param(
        "libsvtav1",
        "video encoder: AV1 (LeRobot's default) or h264, which LeRobot also decodes",
        choices=("libsvtav1", "h264"),
    )
    crf: int = param(30, "encoder quality: lower is better and larger (LeRobot's default)", ge=0, le=63)
    gop: int = param(2, "keyframe interval (LeRobot's default g: cheap random access)", unit="frames", ge=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.image_size and (len(self.image_size) != 2 or any(v % 2 for v in self.image_size)):
            raise ConfigError(
                "image_size",
                self.image_size,
                f"width and height, both even ({PIX_FMT} video); () for the recorded size",
            )


@dataclass
class ExportSummary:
    """What :func:`export_lerobot` wrote."""

    out: Path
    episodes: int
    frames: int
    tasks: list[str]
    bags: list[Path] = field(default_factory=list)


# -- inputs ------------------------------------------------------------------------------------


def frame_tasks(step: Sequence[str], fallback: str = "") -> list[str]:
    """The task of every frame: its plan step; between steps, the step that starts next.

    Frames after the last step take the last step; an episode with no step at all takes
    ``fallback`` (its instruction).
    """
    tasks = [str(s) for s in step]
    following = ""
    for i in range(len(tasks) - 1, -1, -1):
        if tasks[i]:
            following = tasks[i]
        else:
            tasks[i] = following
    last = next((s for s in reversed(step) if s), fallback)
    return [t or last for t in tasks]


# -- features and statistics -------------------------------------------------------------------


def _features(height: int, width: int, config: LeRobotExportConfig) -> dict[str, dict[str, Any]]:
    from galley_learning.policy.frames import ACTION_NAMES, STATE_NAMES

    video_info = {
        "video.height": height,
        "video.width": width,
        "video.codec": "av1" if config.vcodec == "libsvtav1" else config.vcodec,
        "video.pix_fmt": PIX_FMT,
        "video.fps": config.fps,
        "video.channels": 3,
        "has_audio": False,
        "video.g": config.gop,
        "video.crf": config.crf,
        "video.preset": _SVTAV1_PRESET if config.vcodec == "libsvtav1" else None,
        "video.fast_decode": 0,
        "video.video_backend": "pyav",
        "video.extra_options": {},
        "is_depth_map": False,
    }
    cameras = {
        key: {
            "dtype": "video",
            "shape": [height, width, 3],
            "names": ["height", "width", "channels"],
            "info": dict(video_info),
        }
        for key in CAMERA_KEYS.values()
    }
    return {
        **cameras,
        "observation.state": {"dtype": "float32", "shape": [len(STATE_NAMES)], "names": list(STATE_NAMES)},
        "action": {"dtype": "float32", "shape": [len(ACTION_NAMES)], "names": list(ACTION_NAMES)},
        **{k: dict(v) for k, v in INDEX_FEATURES.items()},
    }


def _stat_block(rows: NDArray[Any], count: int) -> dict[str, NDArray[Any]]:
    """min/max/mean/std/count/q01..q99 over the first axis of ``rows`` (N, D)."""
    rows = rows.astype(np.float64)
    stats = {
        "min": rows.min(axis=0),
        "max": rows.max(axis=0),
        "mean": rows.mean(axis=0),
        "std": rows.std(axis=0),
        "count": np.array([count], dtype=np.int64),
    }
    # LeRobot estimates quantiles from 5000-bin histograms and, below two samples, uses the mean.
    q = np.quantile(rows, QUANTILES, axis=0) if len(rows) >= 2 else np.stack([stats["mean"]] * 5)
    for name, values in zip(_quantile_keys(), q, strict=True):
        stats[name] = values
    return stats


def _quantile_keys() -> list[str]:
    return [f"q{round(q * 100):02d}" for q in QUANTILES]


def _sample_indices(n: int) -> NDArray[np.int64]:
    """LeRobot's image sampling for statistics (compute_stats.sample_indices)."""
    samples = max(min(n, 100), min(int(n**0.75), 10_000))
    return np.round(np.linspace(0, n - 1, samples)).astype(np.int64)


def _image_stats(images: NDArray[np.uint8]) -> dict[str, NDArray[Any]]:
    """Per-channel stats of sampled frames, in [0, 1], shaped (3, 1, 1) as LeRobot stores them."""
    sampled = images[_sample_indices(len(images))]
    h, w = sampled.shape[1:3]
    if max(h, w) >= 300:  # LeRobot's auto_downsample_height_width
        step = int(max(h, w) / 150)
        sampled = sampled[:, ::step, ::step]
    stats = _stat_block(sampled.reshape(-1, 3), len(sampled))
    return {k: v if k == "count" else (v / 255.0).reshape(3, 1, 1) for k, v in stats.items()}


def _episode_stats(columns: dict[str, NDArray[Any]], images: dict[str, NDArray[np.uint8]]) -> dict[str, Any]:
    stats: dict[str, Any] = {key: _image_stats(frames) for key, frames in images.items()}
    for key, values in columns.items():
        rows = values.reshape(len(values), -1)
        stats[key] = _stat_block(rows, len(rows))
    return stats


def _aggregate(per_episode: list[dict[str, Any]]) -> dict[str, Any]:
    """LeRobot's aggregate_stats: count-weighted means, pooled variance, weighted quantiles."""
    out: dict[str, Any] = {}
    for key in per_episode[0]:
        blocks = [s[key] for s in per_episode]
        counts = np.stack([b["count"] for b in blocks]).astype(np.float64)
        means = np.stack([b["mean"] for b in blocks])
        weights = counts.reshape(-1, *([1] * (means.ndim - 1)))
        total = counts.sum()
        mean = (means * weights).sum(axis=0) / total
        var = ((np.stack([b["std"] for b in blocks]) ** 2 + (means - mean) ** 2) * weights).sum(
            axis=0
        ) / total
        agg = {
            "min": np.min(np.stack([b["min"] for b in blocks]), axis=0),
            "max": np.max(np.stack([b["max"] for b in blocks]), axis=0),
            "mean": mean,
            "std": np.sqrt(var),
            "count": np.array([int(total)], dtype=np.int64),
        }
        for q in _quantile_keys():
            agg[q] = (np.stack([b[q] for b in blocks]) * weights).sum(axis=0) / total
        out[key] = agg
    return out


def _jsonable(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: {s: v.tolist() for s, v in block.items()} for k, block in stats.items()}


# -- writers -----------------------------------------------------------------------------------


def _hf_features(features: dict[str, dict[str, Any]]) -> dict[str, Any]:
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


def _data_schema(features: dict[str, dict[str, Any]]) -> pa.Schema:
    fields = []
    for key, ft in features.items():
        if ft["dtype"] == "video":
            continue
        scalar = pa.from_numpy_dtype(np.dtype(ft["dtype"]))
        fields.append(pa.field(key, scalar if ft["shape"] == [1] else pa.list_(scalar, ft["shape"][0])))
    meta = {"huggingface": json.dumps({"info": {"features": _hf_features(features)}})}
    return pa.schema(fields, metadata=meta)


def _next_file(chunk: int, file: int) -> tuple[int, int]:
    """LeRobot's update_chunk_file_indices."""
    return (chunk + 1, 0) if file == CHUNKS_SIZE - 1 else (chunk, file + 1)


class _DataWriter:
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
                self.chunk, self.file = _next_file(self.chunk, self.file)
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


class _VideoWriter:
    """videos/<key>/chunk-*/file-*.mp4: the episodes one after another, frame i at i / fps."""

    def __init__(self, root: Path, key: str, config: LeRobotExportConfig) -> None:
        self.root, self.key, self.config = root, key, config
        self.chunk, self.file = 0, 0
        self.frames_in_file = 0
        self._container: Any = None
        self._stream: Any = None

    @property
    def path(self) -> Path:
        return self.root / VIDEO_PATH.format(video_key=self.key, chunk_index=self.chunk, file_index=self.file)

    def _open(self, width: int, height: int) -> None:
        import av

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._container = av.open(str(self.path), "w", options={"movflags": "faststart"})
        c = self.config
        options = {"g": str(c.gop), "crf": str(c.crf)}
        if c.vcodec == "libsvtav1":
            options.update({"preset": str(_SVTAV1_PRESET), "svtav1-params": "fast-decode=0"})
        self._stream = self._container.add_stream(c.vcodec, rate=c.fps, options=options)
        self._stream.pix_fmt = PIX_FMT
        self._stream.width, self._stream.height = width, height
        self._stream.time_base = Fraction(1, c.fps)

    def write(self, frames: NDArray[np.uint8]) -> tuple[int, int, float, float]:
        """Append an episode's frames (T, H, W, 3); returns chunk, file, from and to timestamps (s)."""
        import av

        if self._container is not None and self.frames_in_file:
            size = self.path.stat().st_size
            if size + size / self.frames_in_file * len(frames) >= VIDEO_FILES_SIZE_IN_MB * 2**20:
                self.close()
                self.chunk, self.file = _next_file(self.chunk, self.file)
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


def _write_tasks(path: Path, tasks: list[str]) -> None:
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


# -- the export --------------------------------------------------------------------------------


def _instruction(bag: Path) -> str:
    """The instruction in the recorder's episode.json ("" when there is none)."""
    try:
        meta = json.loads((bag / "episode.json").read_text())
    except (OSError, ValueError):
        return ""
    return str(meta.get("instruction", "")) if isinstance(meta, dict) else ""


def _episodes(bags: list[Path], config: LeRobotExportConfig) -> Iterator[tuple[Path, Any, str]]:
    from galley_learning.policy.frames import CAMERAS, episode_frames, load_robot_arm

    arm = load_robot_arm()
    size = (config.image_size[0], config.image_size[1]) if config.image_size else None
    for bag in bags:
        instruction = _instruction(bag)
        try:
            frames = episode_frames(bag, rate_hz=config.fps, image_size=size, arm=arm)
        except ValueError as err:
            topic = next((t for t in CAMERAS.values() if t in str(err)), None)
            text = f"bag {bag} has no camera images ({topic})" if topic else str(err)
            fix = "record episodes with cameras (galley run --video)" if topic else "re-record the episode"
            raise LeRobotExportError(f"{text}; {fix}, or move {bag} out of the collection") from None
        if not len(frames):
            raise LeRobotExportError(
                f"bag {bag} has no frame at {config.fps} Hz; move it out of the collection"
            )
        yield bag, frames, instruction


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise LeRobotExportError(f"{out} exists and is not an empty folder; choose a new OUT or remove it")


def export_lerobot(
    collection: str | Path,
    out: str | Path,
    config: LeRobotExportConfig | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> ExportSummary:
    """Write the successful episodes of ``collection`` to ``out`` as a LeRobotDataset v3.0.

    The dataset is written to a temporary folder beside ``out`` and moved into place at the end,
    so a failed export leaves nothing behind.

    Args:
        collection: a folder of bags (with ``episodes/``: only the bags below it).
        out: the dataset folder to create (absent or empty).
        config: fps, image size, robot type and video encoding (default: ``LeRobotExportConfig()``).
        progress: called with one line per exported episode.

    Raises:
        LeRobotExportError: a bad input (names it and the fix).
    """
    config = config or LeRobotExportConfig()
    out = Path(out)
    try:
        bags = find_bags(collection)
    except FileNotFoundError as err:
        raise LeRobotExportError(str(err)) from None
    _check_out(out)
    if importlib.util.find_spec("av") is None:
        raise LeRobotExportError(
            "the videos need PyAV: pip install av (see requirements.txt for the version)"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its configuration to stderr otherwise
    try:
        summary = _export(bags, tmp, config, progress)
        _check_out(out)
        if out.exists():
            out.rmdir()
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)  # mkdtemp made it private
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary.out = out
    return summary


class _Dataset:
    """The dataset being written under ``root``: episodes are added one by one, then finished."""

    def __init__(self, root: Path, config: LeRobotExportConfig) -> None:
        self.root, self.config = root, config
        self.features: dict[str, dict[str, Any]] = {}
        self.data: _DataWriter | None = None
        self.videos = {key: _VideoWriter(root, key, config) for key in CAMERA_KEYS.values()}
        self.tasks: dict[str, int] = {}
        self.rows: list[dict[str, Any]] = []
        self.stats: list[dict[str, Any]] = []
        self.frames = 0

    def _check_images(self, bag: Path, images: dict[str, NDArray[np.uint8]]) -> None:
        height, width = images[CAMERA_KEYS["base"]].shape[1:3]
        if not self.features:
            self.features = _features(height, width, self.config)
            self.data = _DataWriter(self.root, _data_schema(self.features))
        h, w, _ = self.features[CAMERA_KEYS["base"]]["shape"]
        for key, im in images.items():
            size = f"{im.shape[2]}x{im.shape[1]}"
            if im.shape[1:3] != (h, w):
                raise LeRobotExportError(
                    f"bag {bag}: {key} images are {size}, the first episode's are {w}x{h}; "
                    "pass --image-size WxH to resize them all"
                )
            if h % 2 or w % 2:
                raise LeRobotExportError(
                    f"bag {bag}: {key} images are {size}; {PIX_FMT} video needs even sizes: "
                    "pass --image-size WxH with even numbers"
                )

    def add(self, bag: Path, frames: Any, instruction: str) -> dict[str, Any]:
        """Write one episode (:class:`~galley_learning.policy.frames.EpisodeFrames`); returns its row."""
        images = {key: frames.images[name] for name, key in CAMERA_KEYS.items()}
        self._check_images(bag, images)
        episode_index, n, fps = len(self.rows), len(frames), self.config.fps
        episode_tasks = frame_tasks(frames.step.tolist(), instruction)
        for task in dict.fromkeys(episode_tasks):
            self.tasks.setdefault(task, len(self.tasks))
        columns: dict[str, NDArray[Any]] = {
            "observation.state": frames.state.astype(np.float32),
            "action": frames.action.astype(np.float32),
            "timestamp": (np.arange(n) / fps).astype(np.float32),
            "frame_index": np.arange(n, dtype=np.int64),
            "episode_index": np.full(n, episode_index, dtype=np.int64),
            "index": np.arange(self.frames, self.frames + n, dtype=np.int64),
            "task_index": np.array([self.tasks[t] for t in episode_tasks], dtype=np.int64),
        }
        table = pa.table(
            {
                k: pa.FixedSizeListArray.from_arrays(v.reshape(-1), v.shape[1]) if v.ndim == 2 else v
                for k, v in columns.items()
            }
        )
        assert self.data is not None
        chunk, file = self.data.write(table)
        row: dict[str, Any] = {
            "episode_index": episode_index,
            "tasks": list(dict.fromkeys(episode_tasks)),
            "length": n,
            "data/chunk_index": chunk,
            "data/file_index": file,
            "dataset_from_index": self.frames,
            "dataset_to_index": self.frames + n,
        }
        for key, frames_of_key in images.items():
            v_chunk, v_file, t_from, t_to = self.videos[key].write(frames_of_key)
            row[f"videos/{key}/chunk_index"] = v_chunk
            row[f"videos/{key}/file_index"] = v_file
            row[f"videos/{key}/from_timestamp"] = t_from
            row[f"videos/{key}/to_timestamp"] = t_to
        ep_stats = _episode_stats(columns, images)
        self.stats.append(ep_stats)
        for key, block in _jsonable(ep_stats).items():
            for name, value in block.items():
                row[f"stats/{key}/{name}"] = value
        row["meta/episodes/chunk_index"] = 0
        row["meta/episodes/file_index"] = 0
        self.rows.append(row)
        self.frames += n
        return row

    def close(self) -> None:
        """Close the data and video files (they are complete only after this)."""
        if self.data is not None:
            self.data.close()
        for writer in self.videos.values():
            writer.close()

    def finish(self) -> None:
        """Close the files and write meta/: episodes, tasks, info and stats."""
        self.close()
        episodes_path = self.root / EPISODES_PATH.format(chunk_index=0, file_index=0)
        episodes_path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(self.rows), episodes_path, compression="snappy")
        _write_tasks(self.root / TASKS_PATH, list(self.tasks))
        # The keys in the order of LeRobot's DatasetInfo.
        info = {
            "codebase_version": CODEBASE_VERSION,
            "fps": self.config.fps,
            "features": self.features,
            "total_episodes": len(self.rows),
            "total_frames": self.frames,
            "total_tasks": len(self.tasks),
            "chunks_size": CHUNKS_SIZE,
            "data_files_size_in_mb": DATA_FILES_SIZE_IN_MB,
            "video_files_size_in_mb": VIDEO_FILES_SIZE_IN_MB,
            "data_path": DATA_PATH,
            "video_path": VIDEO_PATH,
            "robot_type": self.config.robot_type,
            "splits": {"train": f"0:{len(self.rows)}"},
        }
        meta = self.root / "meta"
        (meta / "info.json").write_text(json.dumps(info, indent=4) + "\n")
        (meta / "stats.json").write_text(json.dumps(_jsonable(_aggregate(self.stats)), indent=4) + "\n")


def _export(
    bags: list[Path], root: Path, config: LeRobotExportConfig, progress: Callable[[str], None] | None
) -> ExportSummary:
    dataset = _Dataset(root, config)
    try:
        for bag, frames, instruction in _episodes(bags, config):
            row = dataset.add(bag, frames, instruction)
            if progress is not None:
                n, steps = row["length"], len(row["tasks"])
                progress(
                    f"[{row['episode_index'] + 1}/{len(bags)}] {bag}: {n} frames "
                    f"({n / config.fps:.1f} s), {steps} task{'s' * (steps != 1)}"
                )
    finally:
        dataset.close()
    dataset.finish()
    return ExportSummary(
        out=root, episodes=len(dataset.rows), frames=dataset.frames, tasks=list(dataset.tasks), bags=bags
    )
