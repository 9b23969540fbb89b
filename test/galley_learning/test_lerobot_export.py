"""galley export-lerobot: real recorded episodes written as a LeRobotDataset v3.0 and read back.

The expected layout, column names and dtypes are LeRobot's (huggingface/lerobot v0.6.1, whose
writer made the same files from the same features when this exporter was written).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from galley_cli.main import main
from galley_learning.lerobot import frame_tasks
from galley_learning.policy.frames import ACTION_NAMES, STATE_NAMES, episode_frames

av = pytest.importorskip("av")

PLANS = ("move to the purple zone", "move to the blue zone")
CAMERAS = ("observation.images.base", "observation.images.wrist")
STATS = ("min", "max", "mean", "std", "count", "q01", "q10", "q50", "q90", "q99")


def _small_params(folder: Path) -> Path:
    params = folder / "small.yaml"
    params.write_text(
        "sim:\n  ros__parameters:\n    image_width: 64\n    image_height: 48\n    depth_enabled: false\n"
    )
    return params


@pytest.fixture(scope="session")
def collection(tmp_path_factory):
    """Two short successful episodes with cameras under episodes/, and one under failed/."""
    from galley_episodes import run_episode

    root = tmp_path_factory.mktemp("collection")
    params = _small_params(tmp_path_factory.mktemp("params"))
    for i, plan in enumerate(PLANS):
        summary = run_episode(
            "Move the bowl to the green zone",
            seed=i,
            plan=plan,
            out_dir=root / "episodes" / f"ep_{i:06d}",
            video=True,
            progress=False,
            params=[params],
        )
        assert summary["success"], summary
    shutil.copytree(root / "episodes" / "ep_000000", root / "failed" / "ep_000009")
    return root


@pytest.fixture(scope="session")
def exported(collection, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "galley_ds"
    proc = subprocess.run(
        [sys.executable, "-m", "galley_cli.main", "export-lerobot", str(collection), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


def _info(out: Path) -> dict:
    return json.loads((out / "meta" / "info.json").read_text())


def _data(out: Path) -> pa.Table:
    return pq.read_table(out / "data" / "chunk-000" / "file-000.parquet")


def _episodes(out: Path) -> list[dict]:
    return pq.read_table(out / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pylist()


def _decode(path: Path) -> tuple[np.ndarray, list[float], str]:
    """Every frame (T, H, W, 3), its time (s) and the stream's codec."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = list(container.decode(video=0))
        images = np.stack([f.to_ndarray(format="rgb24") for f in frames])
        return images, [float(f.pts * f.time_base) for f in frames], stream.codec_context.codec.canonical_name


def test_frame_tasks_fill_the_gaps_between_steps_with_the_next_step():
    assert frame_tasks(["", "", "a", "a", "", "b", "", ""]) == ["a", "a", "a", "a", "b", "b", "b", "b"]
    assert frame_tasks(["", ""], "Move the bowl") == ["Move the bowl", "Move the bowl"]


def test_layout_progress_and_info(exported, collection):
    out, stdout = exported
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == [
        "data/chunk-000/file-000.parquet",
        "meta/episodes/chunk-000/file-000.parquet",
        "meta/info.json",
        "meta/stats.json",
        "meta/tasks.parquet",
        "videos/observation.images.base/chunk-000/file-000.mp4",
        "videos/observation.images.wrist/chunk-000/file-000.mp4",
    ]
    lines = stdout.strip().splitlines()
    assert len(lines) == 3  # one per episode (failed/ is not exported), then the summary
    assert lines[0].startswith("[1/2] ") and "ep_000000" in lines[0] and "frames" in lines[0]
    assert lines[1].startswith("[2/2] ") and "ep_000001" in lines[1]
    assert lines[2].startswith("exported 2 episodes, ") and str(out) in lines[2]

    info = _info(out)
    total = _data(out).num_rows
    assert info["codebase_version"] == "v3.0"
    assert info["robot_type"] == "galley_mm"
    assert (info["total_episodes"], info["total_frames"], info["total_tasks"]) == (2, total, 2)
    assert (info["chunks_size"], info["data_files_size_in_mb"], info["video_files_size_in_mb"]) == (
        1000,
        100,
        200,
    )
    assert info["fps"] == 10
    assert info["splits"] == {"train": "0:2"}
    assert info["data_path"] == "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    assert info["video_path"] == "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    features = info["features"]
    assert list(features) == [
        *CAMERAS,
        "observation.state",
        "action",
        "timestamp",
        "frame_index",
        "episode_index",
        "index",
        "task_index",
    ]
    assert features["observation.state"] == {"dtype": "float32", "shape": [20], "names": list(STATE_NAMES)}
    assert features["action"] == {"dtype": "float32", "shape": [10], "names": list(ACTION_NAMES)}
    assert features["timestamp"] == {"dtype": "float32", "shape": [1], "names": None}
    for key in ("frame_index", "episode_index", "index", "task_index"):
        assert features[key] == {"dtype": "int64", "shape": [1], "names": None}
    for key in CAMERAS:
        ft = features[key]
        assert (ft["dtype"], ft["shape"], ft["names"]) == (
            "video",
            [48, 64, 3],
            ["height", "width", "channels"],
        )
        video = ft["info"]
        assert video["video.codec"] == "av1" and video["video.pix_fmt"] == "yuv420p"
        assert (video["video.height"], video["video.width"], video["video.fps"]) == (48, 64, 10)
        assert video["video.channels"] == 3 and video["has_audio"] is False and video["is_depth_map"] is False


def test_frames_parquet_schema_and_indices(exported):
    out, _ = exported
    table = _data(out)
    schema = table.schema
    assert schema.names == [
        "observation.state",
        "action",
        "timestamp",
        "frame_index",
        "episode_index",
        "index",
        "task_index",
    ]
    for key, size in (("observation.state", 20), ("action", 10)):
        assert pa.types.is_fixed_size_list(schema.field(key).type)
        assert schema.field(key).type.list_size == size and schema.field(key).type.value_type == pa.float32()
    assert schema.field("timestamp").type == pa.float32()
    for key in ("frame_index", "episode_index", "index", "task_index"):
        assert schema.field(key).type == pa.int64()
    hf = json.loads(schema.metadata[b"huggingface"])["info"]["features"]  # as datasets writes it
    assert hf["observation.state"] == {
        "feature": {"dtype": "float32", "_type": "Value"},
        "length": 20,
        "_type": "List",
    }
    assert hf["index"] == {"dtype": "int64", "_type": "Value"}
    assert (
        pq.ParquetFile(out / "data" / "chunk-000" / "file-000.parquet").num_row_groups == 2
    )  # one per episode

    cols = table.to_pydict()
    n = table.num_rows
    assert cols["index"] == list(range(n))
    episodes = _episodes(out)
    for ep in episodes:
        lo, hi = ep["dataset_from_index"], ep["dataset_to_index"]
        assert hi - lo == ep["length"] > 50
        assert cols["episode_index"][lo:hi] == [ep["episode_index"]] * ep["length"]
        assert cols["frame_index"][lo:hi] == list(range(ep["length"]))
        np.testing.assert_allclose(cols["timestamp"][lo:hi], np.arange(ep["length"]) / 10, atol=1e-5)
    assert [e["dataset_from_index"] for e in episodes] == [0, episodes[0]["dataset_to_index"]]
    assert episodes[-1]["dataset_to_index"] == n
    state = np.array(cols["observation.state"])
    action = np.array(cols["action"])
    assert state.shape == (n, 20) and action.shape == (n, 10)
    assert np.isfinite(state).all() and np.isfinite(action).all()
    assert ((action[:, 9] >= 0) & (action[:, 9] <= 1)).all()  # gripper opening


def test_tasks_are_the_plan_steps(exported):
    out, _ = exported
    tasks = pq.read_table(out / "meta" / "tasks.parquet")
    assert (
        tasks.schema.field("task_index").type == pa.int64() and tasks.schema.field("task").type == pa.string()
    )
    assert json.loads(tasks.schema.metadata[b"pandas"])["index_columns"] == ["task"]  # pandas: index = task
    by_index = dict(
        zip(tasks.column("task_index").to_pylist(), tasks.column("task").to_pylist(), strict=True)
    )
    assert sorted(by_index.values()) == sorted(PLANS)
    cols = _data(out).to_pydict()
    for ep, plan in zip(_episodes(out), PLANS, strict=True):
        assert ep["tasks"] == [plan]
        lo, hi = ep["dataset_from_index"], ep["dataset_to_index"]
        assert {by_index[t] for t in cols["task_index"][lo:hi]} == {plan}  # "" between steps filled


def test_episodes_parquet_schema(exported):
    out, _ = exported
    schema = pq.read_schema(out / "meta" / "episodes" / "chunk-000" / "file-000.parquet")
    ints = [
        "episode_index",
        "length",
        "data/chunk_index",
        "data/file_index",
        "dataset_from_index",
        "dataset_to_index",
    ]
    for key in CAMERAS:
        ints += [f"videos/{key}/chunk_index", f"videos/{key}/file_index"]
        for name in ("from_timestamp", "to_timestamp"):
            assert schema.field(f"videos/{key}/{name}").type == pa.float64()
    ints += ["meta/episodes/chunk_index", "meta/episodes/file_index"]
    for key in ints:
        assert schema.field(key).type == pa.int64(), key
    assert schema.field("tasks").type.value_type == pa.string()
    features = _info(out)["features"]
    for key in features:
        for stat in STATS:
            field = schema.field(f"stats/{key}/{stat}").type
            assert pa.types.is_list(field), (key, stat)
            depth = 3 if key in CAMERAS and stat != "count" else 1  # images: (3, 1, 1)
            for _ in range(depth - 1):
                field = field.value_type
            assert field.value_type == (pa.int64() if stat == "count" else pa.float64()), (key, stat)


def test_videos_hold_every_frame_at_its_timestamp(exported, collection):
    out, _ = exported
    episodes = _episodes(out)
    total = _info(out)["total_frames"]
    for key, camera in zip(CAMERAS, ("base", "wrist"), strict=True):
        images, times, codec = _decode(out / "videos" / key / "chunk-000" / "file-000.mp4")
        assert images.shape == (total, 48, 64, 3)
        assert codec == "av1"
        for ep in episodes:
            lo, hi = ep["dataset_from_index"], ep["dataset_to_index"]
            t0, t1 = ep[f"videos/{key}/from_timestamp"], ep[f"videos/{key}/to_timestamp"]
            assert t1 - t0 == pytest.approx(ep["length"] / 10)
            # LeRobot decodes frame i of an episode at from_timestamp + timestamp.
            np.testing.assert_allclose(times[lo:hi], t0 + np.arange(ep["length"]) / 10, atol=1e-4)
            bag = collection / "episodes" / f"ep_{ep['episode_index']:06d}" / "bag"
            source = episode_frames(bag, rate_hz=10, image_size=None).images[camera]
            error = np.abs(images[lo:hi].astype(int) - source.astype(int)).mean(axis=(1, 2, 3))
            assert error.max() < 8, f"{key} episode {ep['episode_index']}: lossy beyond AV1 crf 30"


def test_stats_match_the_data(exported):
    out, _ = exported
    stats = json.loads((out / "meta" / "stats.json").read_text())
    features = _info(out)["features"]
    assert set(stats) == set(features)
    cols = _data(out).to_pydict()
    n = len(cols["index"])
    for key in ("observation.state", "action", "timestamp", "frame_index", "index"):
        values = np.array(cols[key], dtype=np.float64).reshape(n, -1)
        s = stats[key]
        assert set(s) == set(STATS)
        assert s["count"] == [n]
        np.testing.assert_allclose(s["min"], values.min(axis=0), atol=1e-6)
        np.testing.assert_allclose(s["max"], values.max(axis=0), atol=1e-6)
        np.testing.assert_allclose(s["mean"], values.mean(axis=0), atol=1e-5)
        np.testing.assert_allclose(s["std"], values.std(axis=0), rtol=1e-4, atol=1e-6)
        for q in ("q01", "q10", "q50", "q90", "q99"):
            assert (np.array(s["min"]) - 1e-9 <= s[q]).all() and (
                np.array(s[q]) <= np.array(s["max"]) + 1e-9
            ).all()
    for key in CAMERAS:
        s = stats[key]
        assert np.array(s["mean"]).shape == (3, 1, 1)
        assert 0 <= np.min(s["min"]) <= np.max(s["max"]) <= 1
    # Per-episode stats in the episodes file; stats.json aggregates them.
    episodes = _episodes(out)
    for ep in episodes:
        lo, hi = ep["dataset_from_index"], ep["dataset_to_index"]
        state = np.array(cols["observation.state"][lo:hi])
        np.testing.assert_allclose(ep["stats/observation.state/mean"], state.mean(axis=0), atol=1e-5)
        assert ep["stats/observation.state/count"] == [ep["length"]]
    assert (
        sum(ep["stats/observation.images.base/count"][0] for ep in episodes) == stats[CAMERAS[0]]["count"][0]
    )


def test_resampling_and_resizing_options(collection, tmp_path):
    out = tmp_path / "small"
    assert (
        main(
            [
                "export-lerobot",
                str(collection),
                str(out),
                "--fps",
                "5",
                "--image-size",
                "32x24",
                "--robot-type",
                "x",
                "--vcodec",
                "h264",
            ]
        )
        == 0
    )
    info = _info(out)
    assert (info["fps"], info["robot_type"]) == (5, "x")
    assert info["features"][CAMERAS[0]]["shape"] == [24, 32, 3]
    assert info["features"][CAMERAS[1]]["info"]["video.fps"] == 5
    assert info["features"][CAMERAS[1]]["info"]["video.codec"] == "h264"
    images, times, codec = _decode(out / "videos" / CAMERAS[1] / "chunk-000" / "file-000.mp4")
    assert codec == "h264"
    assert images.shape == (info["total_frames"], 24, 32, 3)
    assert times[1] == pytest.approx(0.2)
    np.testing.assert_allclose(_data(out).column("timestamp").to_numpy()[:3], [0.0, 0.2, 0.4], atol=1e-6)


@pytest.fixture(scope="module")
def camera_less(tmp_path_factory):
    """A collection whose one bag was recorded without cameras."""
    from galley_episodes import run_episode

    root = tmp_path_factory.mktemp("no_cameras")
    run_episode(
        "Move the bowl to the green zone",
        seed=2,
        plan=PLANS[0],
        out_dir=root / "ep_000000",
        video=False,
        progress=False,
        params=[_small_params(root)],
    )
    return root


def _fails(capsys, *args: str) -> str:
    assert main(["export-lerobot", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("galley export-lerobot: ") and "\n" not in err and "Traceback" not in err
    return err


def test_bad_inputs_are_one_line_naming_the_input_and_the_fix(collection, camera_less, tmp_path, capsys):
    out = tmp_path / "out"
    missing = tmp_path / "nowhere"
    assert str(missing) in _fails(capsys, str(missing), str(out))
    empty = tmp_path / "empty"
    (empty / "episodes").mkdir(parents=True)
    err = _fails(capsys, str(empty), str(out))
    assert "no bags under" in err and str(empty / "episodes") in err and "galley run" in err
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    err = _fails(capsys, str(collection), str(full))
    assert str(full) in err and "not an empty folder" in err
    assert (full / "keep.txt").read_text() == "mine"
    err = _fails(capsys, str(camera_less), str(out))
    assert "no camera images" in err and "--video" in err and str(camera_less / "ep_000000" / "bag") in err
    assert not out.exists() and not list(tmp_path.glob(".out.*"))  # a failed export leaves nothing
    assert "--image-size" in _fails(capsys, str(collection), str(out), "--image-size", "31x24")
    assert "--fps" in _fails(capsys, str(collection), str(out), "--fps", "0")


def test_files_roll_over_past_the_size_limits(collection, tmp_path, monkeypatch):
    from galley_learning import lerobot, lerobot_files

    monkeypatch.setattr(lerobot_files, "DATA_FILES_SIZE_IN_MB", 1e-6)
    monkeypatch.setattr(lerobot_files, "VIDEO_FILES_SIZE_IN_MB", 1e-6)
    out = tmp_path / "rolled"
    lerobot.export_lerobot(collection, out)
    second = _episodes(out)[1]
    assert (second["data/chunk_index"], second["data/file_index"]) == (0, 1)
    assert (
        pq.read_table(out / "data" / "chunk-000" / "file-001.parquet").column("index")[0].as_py()
        == (second["dataset_from_index"])
    )
    for key in CAMERAS:
        assert (second[f"videos/{key}/file_index"], second[f"videos/{key}/from_timestamp"]) == (1, 0.0)
        images, _, _ = _decode(out / "videos" / key / "chunk-000" / "file-001.mp4")
        assert len(images) == second["length"]
