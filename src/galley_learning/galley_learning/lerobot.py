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
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from galley_learning.lerobot_config import LeRobotExportConfig
from galley_learning.lerobot_files import (
    CHUNKS_SIZE,
    CODEBASE_VERSION,
    DATA_FILES_SIZE_IN_MB,
    DATA_PATH,
    EPISODES_PATH,
    PIX_FMT,
    SVTAV1_PRESET,
    TASKS_PATH,
    VIDEO_FILES_SIZE_IN_MB,
    VIDEO_PATH,
    DataWriter,
    VideoWriter,
    data_schema,
    write_tasks,
)
from galley_learning.lerobot_stats import (
    aggregate,
    episode_stats,
    jsonable,
)
from galley_learning.policy.dataset import find_bags
from galley_learning.policy.frames import ACTION_NAMES, CAMERAS, STATE_NAMES, episode_frames, load_robot_arm

__all__ = [
    "CODEBASE_VERSION",
    "ExportSummary",
    "LeRobotExportConfig",
    "LeRobotExportError",
    "export_lerobot",
    "frame_tasks",
]

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


class LeRobotExportError(Exception):
    """An input the exporter cannot use; the message names it and the fix."""


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
        "video.preset": SVTAV1_PRESET if config.vcodec == "libsvtav1" else None,
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


# -- writers -----------------------------------------------------------------------------------


# -- the export --------------------------------------------------------------------------------


def _instruction(bag: Path) -> str:
    """The instruction in the recorder's episode.json ("" when there is none)."""
    try:
        meta = json.loads((bag / "episode.json").read_text())
    except (OSError, ValueError):
        return ""
    return str(meta.get("instruction", "")) if isinstance(meta, dict) else ""


def _episodes(bags: list[Path], config: LeRobotExportConfig) -> Iterator[tuple[Path, Any, str]]:
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
        self.data: DataWriter | None = None
        self.videos = {key: VideoWriter(root, key, config) for key in CAMERA_KEYS.values()}
        self.tasks: dict[str, int] = {}
        self.rows: list[dict[str, Any]] = []
        self.stats: list[dict[str, Any]] = []
        self.frames = 0

    def _check_images(self, bag: Path, images: dict[str, NDArray[np.uint8]]) -> None:
        height, width = images[CAMERA_KEYS["base"]].shape[1:3]
        if not self.features:
            self.features = _features(height, width, self.config)
            self.data = DataWriter(self.root, data_schema(self.features))
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
        ep_stats = episode_stats(columns, images)
        self.stats.append(ep_stats)
        for key, block in jsonable(ep_stats).items():
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
        write_tasks(self.root / TASKS_PATH, list(self.tasks))
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
        (meta / "stats.json").write_text(json.dumps(jsonable(aggregate(self.stats)), indent=4) + "\n")


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
