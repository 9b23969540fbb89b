"""Datasets collected in parts: joined with merge_datasets (and `galley train --data A B`), and a bag
perception never saw an object in skipped by build_dataset with its reason."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

from galley_learning.policy import dataset as dataset_module
from galley_learning.policy.dataset import DatasetConfig, PolicyData, build_dataset
from galley_learning.policy.frames import ACTION_NAMES, EpisodeFrames, NoEstimatesError
from galley_learning.policy.goals import GOAL_NAMES
from galley_learning.policy.merge import merge_datasets
from galley_learning.policy.observations import state_names

CONFIG = DatasetConfig(cameras=(), observation="sensors", actions="anchor")
PARAMS = "sim:\n  ros__parameters:\n    camera_rate_hz: 5.0\n"


def _dataset(
    root: Path,
    episodes: list[tuple[int, str, list[str]]],
    *,
    config: DatasetConfig = CONFIG,
    base: float = 0.0,
) -> Path:
    """A dataset folder as build_dataset writes it: ``episodes`` of (frames, split, step texts)."""
    root.mkdir(parents=True)
    dim = len(state_names(config.observation))
    total = sum(n for n, _, _ in episodes)
    rng = np.random.default_rng(int(base))
    np.save(root / "state.npy", (base + rng.normal(size=(total, dim))).astype(np.float32))
    np.save(root / "action.npy", (base + rng.normal(size=(total, len(ACTION_NAMES)))).astype(np.float32))
    np.save(root / "sampled.npy", np.ones(total, dtype=bool))
    np.save(root / "episode_ends.npy", np.cumsum([n for n, _, _ in episodes], dtype=np.int64))
    steps = sorted({s for _, _, texts in episodes for s in texts})
    ids = [steps.index(texts[k * len(texts) // n]) for n, _, texts in episodes for k in range(n)]
    np.save(root / "step.npy", np.asarray(ids, dtype=np.int16))
    meta = {
        "frames": total,
        "cameras": [],
        "stats": {},
        "config": asdict(config),
        "steps": steps,
        "state_names": list(state_names(config.observation)),
        "action_names": list(ACTION_NAMES),
        "episodes": [
            {"bag": f"{root.name}/{i}", "frames": n, "split": sp} for i, (n, sp, _) in enumerate(episodes)
        ],
    }
    (root / "meta.json").write_text(json.dumps(meta))
    (root / "params.yaml").write_text(PARAMS)
    return root


def test_merge_joins_frames_steps_splits_and_statistics(tmp_path: Path) -> None:
    a = _dataset(tmp_path / "a", [(5, "train", ["pick the cup"]), (3, "val", ["move to the red zone"])])
    b = _dataset(
        tmp_path / "b",
        [(4, "train", ["place the cup", "pick the cup"]), (2, "train", ["pick the fork"])],
        base=10.0,
    )
    meta = merge_datasets([a, b], tmp_path / "ab")
    joined, da, db = PolicyData.open(tmp_path / "ab"), PolicyData.open(a), PolicyData.open(b)

    assert meta["frames"] == len(joined.state) == 14
    assert joined.episode_ends.tolist() == [5, 8, 12, 14]
    assert joined.splits == ["train", "val", "train", "train"]
    np.testing.assert_array_equal(joined.state, np.concatenate([da.state, db.state]))
    texts = lambda d: [d.meta["steps"][i] for i in d.step]  # noqa: E731
    assert texts(joined) == texts(da) + texts(db)  # each frame keeps its step's text
    assert len(joined.meta["steps"]) == 4  # "pick the cup" once
    train = np.concatenate([da.state[:5], db.state])  # the held-out episode is not in the statistics
    np.testing.assert_allclose(meta["stats"]["state"]["mean"], train.mean(axis=0), rtol=1e-5)
    assert (tmp_path / "ab" / "params.yaml").read_text() == PARAMS
    assert joined.meta["merged_from"] == [str(a), str(b)]


def test_merge_refuses_datasets_built_otherwise(tmp_path: Path) -> None:
    a = _dataset(tmp_path / "a", [(5, "train", ["pick the cup"])])
    b = _dataset(tmp_path / "b", [(5, "train", ["pick the cup"])], config=replace(CONFIG, rate_hz=5.0))
    with pytest.raises(ValueError, match="different rate_hz"):
        merge_datasets([a, b], tmp_path / "out")
    c = _dataset(tmp_path / "c", [(5, "train", ["pick the cup"])], config=replace(CONFIG, seed=3))
    (c / "params.yaml").write_text(PARAMS.replace("5.0", "10.0"))
    with pytest.raises(ValueError, match=r"params\.yaml differ"):
        merge_datasets([a, c], tmp_path / "out")
    with pytest.raises(ValueError, match="two or more"):
        merge_datasets([a], tmp_path / "out")


def test_train_joins_several_data_folders(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("diffusers")
    from galley_cli.main import main

    a = _dataset(tmp_path / "a", [(40, "train", ["pick the cup"]), (30, "val", ["place the cup"])])
    b = _dataset(
        tmp_path / "b", [(40, "train", ["pick the fork"]), (30, "val", ["place the fork"])], base=1.0
    )
    run = tmp_path / "run"
    argv = ["train", "--data", str(a), str(b), "--out", str(run), "--size", "lowdim-mlp", "--steps", "2"]
    assert main([*argv, "--batch-size", "4", "--threads", "1"]) == 0
    assert PolicyData.open(run / "dataset").episode_ends.tolist() == [40, 70, 110, 140]
    assert (run / "params.yaml").read_text() == PARAMS


def test_a_bag_without_estimates_is_skipped_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ep_000000", "ep_000001", "ep_000002"):
        (tmp_path / "c" / "episodes" / name / "bag").mkdir(parents=True)
        (tmp_path / "c" / "episodes" / name / "bag" / "metadata.yaml").write_text(
            "rosbag2_bagfile_information: {}\n"
        )

    def frames(bag: Path, **_: object) -> EpisodeFrames:
        if bag.parent.name == "ep_000001":
            raise NoEstimatesError(f"bag {bag} has no /perception/objects estimate of a step's object")
        n = 6
        zeros = lambda d: np.zeros((n, d))  # noqa: E731
        return EpisodeFrames(
            t_s=np.arange(n) / 10.0,
            images={},
            state=zeros(len(state_names("sensors"))),
            action=zeros(len(ACTION_NAMES)),
            step=np.asarray(["pick the cup"] * n),
            ee_pose=zeros(7),
            odom=zeros(5),
            goal=zeros(len(GOAL_NAMES)),
            sensors=zeros(0),
            absolute=zeros(10),
        )

    monkeypatch.setattr(dataset_module, "episode_frames", frames)
    meta = build_dataset(tmp_path / "c", tmp_path / "d", CONFIG)
    assert [Path(e["bag"]).parent.name for e in meta["episodes"]] == ["ep_000000", "ep_000002"]
    assert PolicyData.open(tmp_path / "d").episode_ends.tolist() == [6, 12]
    (skipped,) = meta["skipped"]
    assert Path(skipped["bag"]).parent.name == "ep_000001" and "no /perception/objects" in skipped["reason"]
