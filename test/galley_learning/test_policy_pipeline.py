"""Learning from bags at toy size, end to end: collect -> dataset -> train -> evaluate in the simulator.

The collection is real: oracle episodes with cameras (64x48) and the recorder on, in two worker
processes. Training is the toy preset for a few dozen steps; evaluation runs the trained policy in
place of the oracle with a short step time limit. ``galley collect``, ``galley train`` and
``galley eval --policy`` make them through the command line, as a user would.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("diffusers")
import torch

from galley_cli.main import main
from galley_core.config import ConfigError
from galley_core.tasks.suite import load_suite
from galley_episodes import CollectConfig, collect
from galley_learning.policy import checkpoints
from galley_learning.policy.dataset import DatasetConfig, PolicyData, build_dataset, find_bags, sampled_frames
from galley_learning.policy.frames import ACTION_NAMES, STATE_NAMES, episode_frames
from galley_learning.policy.goals import GOAL_NAMES
from galley_learning.policy.observations import state_names
from galley_learning.policy.runtime import PolicyRunner
from galley_learning.policy.train import TrainConfig, heldout_mse, train
from galley_runtime.config_files import config_dirs
from galley_sim.scene_model import TUCKED


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("collection")
    argv = ["collect", "--episodes", "2", "--out", str(out), "--workers", "2", "--image-size", "64x48"]
    assert main(argv) == 0  # as a user collects
    assert json.loads((out / "collection.json").read_text())["episodes_total"] == 2
    return out


@pytest.fixture(scope="module")
def dataset(collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("data") / "dataset"
    config = DatasetConfig(image_size=(32, 24), val_fraction=0.5, observation="privileged", actions="delta")
    build_dataset(collection, out, config)
    return out


@pytest.fixture(scope="module")
def run(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "run"
    argv = ["train", "--data", str(dataset), "--out", str(out), "--steps", "30", "--batch-size", "8"]
    assert main([*argv, "--eval-every", "15", "--checkpoint-every", "15"]) == 0  # as a user trains
    return out


def test_collection_keeps_successes_apart_from_failures(collection: Path) -> None:
    report = json.loads((collection / "collection.json").read_text())
    for name, record in report["episodes"].items():
        where = "episodes" if record["success"] else "failed"
        assert (collection / where / name / "bag" / "metadata.yaml").exists()
        # the picture of what went wrong, only where something did
        assert (collection / where / name / "topdown.png").exists() == (not record["success"])
        assert record["plan"] and record["instruction"]
    assert report["this_run"]["episodes_per_hour"] > 0
    assert all("failed" not in p.parts for p in find_bags(collection))
    assert "image_width: 64" in (collection / "params.yaml").read_text()
    # every topic but /clock, which the bag's timestamps repeat
    metadata = yaml.safe_load((find_bags(collection)[0] / "metadata.yaml").read_text())
    recorded = metadata["rosbag2_bagfile_information"]["topics_with_message_count"]
    topics = {t["topic_metadata"]["name"] for t in recorded}
    assert "/clock" not in topics and {"/tf", "/joint_states", "/camera/wrist/image_raw"} <= topics


def test_collect_again_keeps_what_is_there(collection: Path) -> None:
    before = json.loads((collection / "collection.json").read_text())["episodes"]
    report = collect(CollectConfig(episodes=2, image_size=(64, 48)), out=collection, progress=False)
    assert report["this_run"]["episodes"] == 0
    assert report["episodes"] == before
    # other camera settings would mix two kinds of episode under one params.yaml: refused
    with pytest.raises(ValueError, match="other camera settings"):
        collect(CollectConfig(episodes=3, image_size=(32, 24)), out=collection, progress=False)
    assert "image_width: 64" in (collection / "params.yaml").read_text()


def test_frames_hold_kitchen_r_action_points(collection: Path) -> None:
    bag = find_bags(collection)[0]
    frames = episode_frames(bag, image_size=None)
    n = len(frames)
    assert frames.action.shape == (n, len(ACTION_NAMES)) and frames.state.shape == (n, len(STATE_NAMES))
    assert frames.images["base"].shape == (n, 48, 64, 3) and frames.images["wrist"].dtype == np.uint8
    quat = frames.action[:, 5:9]
    np.testing.assert_allclose(np.linalg.norm(quat, axis=1), 1.0, atol=1e-6)
    assert np.all((frames.action[:, 9] >= 0) & (frames.action[:, 9] <= 1))
    # The oracle drove (v up to Kitchen-R's 0.18 m/s) and used the gripper (open and closed).
    assert 0.1 < frames.action[:, 0].max() <= 0.18 + 1e-6
    assert frames.action[:, 9].min() < 0.2 and frames.action[:, 9].max() > 0.8
    # Relative state: identity at the first frame; the absolute half is the measured tcp pose.
    np.testing.assert_allclose(
        frames.state[0, :10], [0, 0, 0, 1, 0, 0, 0, 1, 0, frames.state[0, 9]], atol=1e-9
    )
    np.testing.assert_allclose(frames.state[:, 10:13], frames.ee_pose[:, :3])
    plan = json.loads((bag / "episode.json").read_text())["plan"]
    assert {s for s in frames.step.tolist() if s} == set(plan)


def test_contact_point_is_where_the_oracle_grasps_and_releases(collection: Path) -> None:
    """``contact`` actions: the oracle's arm target relative to the step's contact point.

    Where the oracle's gripper closes in a pick, its target is the grasp point (the contact point,
    0 within the arm's tracking); where it opens in a place, it is the release point, the release
    height above where the held object stands at the target. The object's origin is neither (a
    bowl is grasped at its rim, 6 cm off; an apple 3.7 cm above its bottom).
    """
    switches = {"pick": [], "place": []}
    for bag in find_bags(collection):
        frames = episode_frames(bag, image_size=None, cameras={}, observation="privileged", actions="contact")
        grip = frames.action[:, 9]
        for i in range(1, len(frames)):
            kind = str(frames.step[i]).split(" ", 1)[0]
            closes, opens = grip[i - 1] > 0.5 >= grip[i], grip[i - 1] <= 0.5 < grip[i]
            if frames.step[i] == frames.step[i - 1] and (
                (kind == "pick" and closes) or (kind == "place" and opens)
            ):
                switches[kind].append(frames.action[i, 2:5])
    assert switches["pick"] and switches["place"]
    for offset in switches["pick"]:
        assert np.linalg.norm(offset) < 0.02
    for offset in switches["place"]:
        assert np.linalg.norm(offset[:2]) < 0.02 and 0.0 <= offset[2] < 0.03


def test_dataset_files_split_and_statistics(dataset: Path) -> None:
    data = PolicyData.open(dataset)
    n = int(data.episode_ends[-1])
    assert data.images["base"].shape == (n, 24, 32, 3) and data.action.shape == (n, 10)
    assert sorted(data.splits) == ["train", "val"]
    ((start, end),) = data.episode_ranges("train")
    stats = data.meta["stats"]["action"]
    np.testing.assert_allclose(stats["max"], np.asarray(data.action[start:end]).max(axis=0), rtol=1e-6)
    assert set(data.meta["steps"]) >= {
        s for e in data.meta["episodes"] for s in e["plan"] if e["split"] == "train"
    }
    with pytest.raises(FileExistsError, match="not empty"):
        build_dataset(dataset.parent.parent, dataset)


def test_dataset_built_in_parallel_is_the_same(collection: Path, dataset: Path, tmp_path: Path) -> None:
    config = DatasetConfig(image_size=(32, 24), val_fraction=0.5, observation="privileged", actions="delta")
    build_dataset(collection, tmp_path / "p", config, workers=2)
    serial, parallel = PolicyData.open(dataset), PolicyData.open(tmp_path / "p")
    assert parallel.meta["steps"] == serial.meta["steps"] and parallel.splits == serial.splits
    assert parallel.meta["stats"] == serial.meta["stats"]
    for name in ("state", "action", "step", "episode_ends"):
        np.testing.assert_array_equal(getattr(parallel, name), getattr(serial, name))
    np.testing.assert_array_equal(parallel.images["wrist"], serial.images["wrist"])


def test_training_reports_checkpoints_and_resumes(run: Path, dataset: Path) -> None:
    report = json.loads((run / "report.json").read_text())
    assert report["steps"] == 30 and np.isfinite(report["loss"]) and report["mse_val"] is not None
    assert (run / "loss.png").stat().st_size > 0 and (run / "policy.pt").exists()
    assert len((run / "loss.csv").read_text().splitlines()) == 31
    resumed = train(dataset, run, TrainConfig(steps=35))
    assert resumed["steps"] == 35
    assert len((run / "loss.csv").read_text().splitlines()) == 36


def test_checkpoints_are_spaced_in_time_and_the_loss_log_appended(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint holds the whole loss history: written every step, a long run slows to a crawl."""
    written: list[str] = []
    replacing = checkpoints.replacing
    monkeypatch.setattr(
        checkpoints, "replacing", lambda path: (written.append(path.name), replacing(path))[1]
    )
    spaced = TrainConfig(steps=12, batch_size=4, checkpoint_every=1, checkpoint_seconds=3600.0)
    train(dataset, tmp_path / "spaced", spaced)
    assert written == ["checkpoint.pt", "policy.pt"]  # the last step's only: none was due within the hour
    out = tmp_path / "run"
    train(dataset, out, replace(spaced, checkpoint_seconds=0.0))
    assert written[2:] == ["checkpoint.pt", "policy.pt"] * 12  # every step, with no time spacing
    train(dataset, out, TrainConfig(steps=15))  # resumed: the run's own settings, three more steps
    assert written[26:] == ["checkpoint.pt", "policy.pt"] * 3
    rows = list(csv.DictReader((out / "loss.csv").open()))
    assert [int(r["step"]) for r in rows] == list(range(1, 16))  # appended after the resume, no row twice


def test_cosine_schedule_decays_the_rate_to_zero_at_the_last_step_and_resumes_in_place(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rates: list[float] = []
    step = torch.optim.AdamW.step
    monkeypatch.setattr(
        torch.optim.AdamW,
        "step",
        lambda self, *a, **k: (rates.append(self.param_groups[0]["lr"]), step(self, *a, **k))[1],
    )
    cosine = TrainConfig(steps=8, batch_size=4, lr=1e-3, lr_schedule="cosine")
    train(dataset, tmp_path / "run", cosine)
    expected = [1e-3 * 0.5 * (1 + math.cos(math.pi * s / 8)) for s in range(8)]
    np.testing.assert_allclose(rates, expected)
    train(dataset, tmp_path / "run", TrainConfig(steps=12))  # resumed: cosine over the 12 steps now
    np.testing.assert_allclose(
        rates[8:], [1e-3 * 0.5 * (1 + math.cos(math.pi * s / 12)) for s in range(8, 12)]
    )
    train(dataset, tmp_path / "flat", replace(cosine, lr_schedule="constant"))
    assert rates[12:] == [1e-3] * 8
    with pytest.raises(ValueError, match="lr_schedule = 'linear' is not allowed"):
        TrainConfig(lr_schedule="linear")


def test_policy_acts_in_physical_units(run: Path) -> None:
    runner = PolicyRunner(run)
    c = runner.config
    images = {cam: np.zeros((c.obs_horizon, 240, 320, 3), np.uint8) for cam in c.cameras}
    actions = runner.act(images, np.zeros((c.obs_horizon, c.state_dim)), "pick the bowl")
    assert actions.shape == (c.horizon, 10) and np.all(np.isfinite(actions))
    stats = runner.normalizer.stats["action"]
    assert np.all(actions >= np.asarray(stats["min"]) - 1e-3) and np.all(
        actions <= np.asarray(stats["max"]) + 1e-3
    )
    assert heldout_mse(run) == pytest.approx(
        json.loads((run / "report.json").read_text())["mse_val"], rel=0.5
    )


def test_eval_runs_the_learned_policy_in_the_simulator(run: Path, tmp_path: Path) -> None:
    short = tmp_path / "short.yaml"
    short.write_text(
        "task_executor:\n  ros__parameters:\n    step_time_limit_s: 4.0\n"
        "sim:\n  ros__parameters:\n    image_width: 64\n    image_height: 48\n    depth_enabled: false\n"
    )
    argv = ["eval", "--mode", "policy", "--episodes", "2", "--policy", str(run), "--params", str(short)]
    assert main([*argv, "--workers", "2", "--out", str(tmp_path / "eval")]) == 0  # as a user evaluates
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert metrics["sr"] is not None and 0.0 <= metrics["sr"] <= 1.0
    assert metrics["mse"] is not None and metrics["p"] is None  # P needs EM: joint mode
    rows = list(csv.DictReader((tmp_path / "eval" / "episodes.csv").open()))
    newest = sorted(p for d in config_dirs() for p in (d / "suites").glob("*.yaml"))[-1]
    suite = [e.id for e in load_suite(newest)[1] if e.split == "test"]
    assert [r["id"] for r in rows] == suite[:2]  # in suite order, whichever worker finished first
    assert all("exceeded the 4 s step time limit" in r["failure"] or r["success"] == "True" for r in rows)
    assert metrics["mean_path_length_m"] > 0.0  # the policy drove the base
    steps = list(csv.DictReader((tmp_path / "eval" / "steps.csv").open()))  # every executed step
    for r in rows:
        mine = [s for s in steps if s["id"] == r["id"]]
        assert [s["index"] for s in mine] == [str(k) for k in range(len(mine))] and mine
        assert sum(s["success"] == "True" for s in mine) == int(r["steps_succeeded"])
        assert next((s["reason"] for s in mine if s["success"] != "True"), "") == r["failure"]
    ran = [s["step"].split()[0] for s in steps]
    assert set(metrics["sr_executed_by_action"]) == set(ran)
    for kind, sr in metrics["sr_executed_by_action"].items():
        ok = [s["success"] == "True" for s in steps if s["step"].startswith(kind)]
        assert sr == pytest.approx(sum(ok) / len(ok)) and sr >= metrics["sr_by_action"][kind]


def test_the_shipped_policy_runs_by_name_with_the_cameras_it_was_trained_with(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run carries its collection's params.yaml (64x48 cameras, through the dataset and training);
    shipped under a name, ``galley eval --policy NAME`` runs it with those cameras, not galley.yaml's."""
    from galley_learning.policy import shipped
    from galley_runtime.embedded import EmbeddedHost

    assert "image_width: 64" in (run / "params.yaml").read_text()
    weights = tmp_path / "weights"
    shutil.copytree(run, weights / "toy", ignore=shutil.ignore_patterns("checkpoint.pt", "dataset"))
    monkeypatch.setattr(shipped, "WEIGHTS", weights)
    cameras: list[tuple[int, int]] = []
    shutdown = EmbeddedHost.shutdown

    def seen_at_the_end(self: EmbeddedHost) -> None:
        config = self.node("sim").config
        cameras.append((config.image_width, config.image_height))
        shutdown(self)

    monkeypatch.setattr(EmbeddedHost, "shutdown", seen_at_the_end)
    short = tmp_path / "short.yaml"  # the user's file: no camera settings of its own
    short.write_text("task_executor:\n  ros__parameters:\n    step_time_limit_s: 2.0\n")
    argv = ["eval", "--mode", "policy", "--policy", "toy", "--episodes", "1", "--steps", "1"]
    assert main([*argv, "--params", str(short), "--out", str(tmp_path / "eval")]) == 0
    assert cameras == [(64, 48)]
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert metrics["policy"] == str(weights / "toy") and metrics["episodes"] == 1


def test_policy_node_sees_what_training_sees(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No skew between training and acting: the node's observations are the dataset's frames.

    A policy episode is recorded; at every chunk the node samples, its state rows and images must
    equal those :func:`episode_frames` derives from the bag at that instant, and the (v, ω) it then
    commands must be the bag's action there.
    """
    import galley_nodes.nodes.diffusion_policy as node_module
    from galley_episodes import run_episode

    seen: list[dict[str, object]] = []
    act = PolicyRunner.act

    def recording_act(self: PolicyRunner, images: dict, state: np.ndarray, step_text: str) -> np.ndarray:
        chunk = act(self, images, state, step_text)
        seen.append({"images": images, "state": state, "step": step_text, "chunk": chunk})
        return chunk

    on_frame = node_module.DiffusionPolicyNode.on_frame

    def timed_on_frame(self: node_module.DiffusionPolicyNode) -> None:
        chunks = self.chunks
        on_frame(self)
        if self.chunks != chunks:
            seen[-1]["t_s"] = self.now_ns() / 1e9

    monkeypatch.setattr(PolicyRunner, "act", recording_act)
    monkeypatch.setattr(node_module.DiffusionPolicyNode, "on_frame", timed_on_frame)
    params = tmp_path / "short.yaml"
    params.write_text(
        "task_executor:\n  ros__parameters:\n    step_time_limit_s: 3.0\n"
        "sim:\n  ros__parameters:\n    image_width: 32\n    image_height: 24\n    depth_enabled: false\n"
    )
    run_episode(
        "Move the bowl to the green zone", seed=0, out_dir=tmp_path / "ep", params=[params], policy=run
    )
    config = PolicyRunner(run).config
    assert (config.observation, config.actions) == ("privileged", "delta")  # the dataset's
    frames = episode_frames(
        tmp_path / "ep" / "bag", image_size=(32, 24), observation=config.observation, actions=config.actions
    )
    h = config.obs_horizon
    assert len(seen) >= 3
    for chunk in seen[:-1]:  # the last may fall after the bag's last tick
        k = int(np.argmin(np.abs(frames.t_s - chunk["t_s"])))
        assert abs(frames.t_s[k] - chunk["t_s"]) < 0.02 and frames.step[k] == chunk["step"]
        rows = np.maximum(np.arange(k - h + 1, k + 1), 0)  # history before the first frame: the first
        np.testing.assert_allclose(chunk["state"], frames.state[rows], atol=1e-9)
        for camera, images in chunk["images"].items():
            np.testing.assert_array_equal(images[-1], frames.images[camera][k])
        np.testing.assert_allclose(chunk["chunk"][0, :2], frames.action[k, :2], atol=1e-6)
    # The step's target came through: the executor's goal and the planner's path, seen from the
    # robot, in both.
    names = state_names(config.observation)
    last = np.stack([c["state"][-1] for c in seen])
    assert np.abs(last[:, [names.index(n) for n in ("goal_x", "goal_y", "goal_dist")]]).max() > 0.1
    assert np.abs(last[:, [names.index(n) for n in ("path_x", "path_y", "path_far_x")]]).max() > 0.1


def test_after_a_failed_pick_the_policy_carries_the_object_teleported_into_its_gripper(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every step scored: the failed pick's object is put into the gripper, the arm tucked under the
    policy node, which then holds the gripper closed and follows the arm's jump (else its RMPflow,
    still where the pick left the arm, would swing the arm back and drop the object)."""
    from galley_episodes import run_episode
    from galley_runtime.embedded import EmbeddedHost

    end: dict[str, np.ndarray] = {}
    shutdown = EmbeddedHost.shutdown

    def seen_at_the_end(self: EmbeddedHost) -> None:
        sim = self.node("sim").sim
        end["bowl"], end["tcp"] = (
            sim.object_poses()["bowl"].translation,
            sim.site_transform("tcp").translation,
        )
        end["arm"] = sim.joint_state()[0][: len(TUCKED)]
        shutdown(self)

    monkeypatch.setattr(EmbeddedHost, "shutdown", seen_at_the_end)
    # The pick reaches forward with the gripper open, as far as the arm goes (delta actions: the
    # end-effector 15 cm further each action, no turn); the move's base stands still.
    reach = np.array([0.0, 0.0, 0.15, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    monkeypatch.setattr(PolicyRunner, "act", lambda self, images, state, step: np.tile(reach, (16, 1)))
    params = tmp_path / "every_step.yaml"
    params.write_text(
        "monitor:\n  ros__parameters:\n    abort_on_failure: false\n"  # as config/policy_eval.yaml
        "task_executor:\n  ros__parameters:\n    step_time_limit_s: 3.0\n    teleport_on_failure: true\n"
        "sim:\n  ros__parameters:\n    image_width: 32\n    image_height: 24\n    depth_enabled: false\n"
    )
    plan = "pick the bowl; move to the green zone"  # the pick where the robot starts: it cannot reach
    summary = run_episode(
        "Move the bowl to the green zone", seed=0, plan=plan, params=[params], policy=run, progress=False
    )
    assert (summary["steps"][0]["step"], summary["steps"][0]["success"]) == ("pick the bowl", False)
    assert summary["steps"][1]["duration_s"] >= 3.0  # the move ran (standing: teleported to its goal)
    assert np.linalg.norm(end["bowl"] - end["tcp"]) < 0.08 and end["bowl"][2] > 0.94
    np.testing.assert_allclose(end["arm"], TUCKED, atol=0.05)  # where the teleport put the arm


def test_a_move_is_not_trained_on_after_it_arrived() -> None:
    g = np.zeros((5, len(GOAL_NAMES)))
    col = GOAL_NAMES.index
    g[:4, col("is_move")] = 1.0
    g[1:4, col("goal_cos")] = 1.0  # frame 0: no goal yet; frame 4: a pick
    g[:, col("goal_dist")] = [0.0, 0.5, 0.1, 0.07, 0.0]
    assert sampled_frames(g, 0.10).tolist() == [True, True, False, False, True]
    assert sampled_frames(g, 0.0).all()
    # Arrived but still turning to the goal heading (frame 2: 0.5 rad off): the oracle's turn is
    # trained on until the base faces the heading within move_done_rad.
    g[2, [col("goal_cos"), col("goal_sin")]] = math.cos(0.5), math.sin(0.5)
    g[3, [col("goal_cos"), col("goal_sin")]] = math.cos(-0.05), math.sin(-0.05)
    assert sampled_frames(g, 0.10, 0.1).tolist() == [True, True, True, False, True]
    assert sampled_frames(g, 0.10, math.pi).tolist() == [True, True, False, False, True]
    with pytest.raises(ValueError, match="move_done_m"):
        DatasetConfig(move_done_m=-1.0)
    with pytest.raises(ValueError, match="move_done_rad"):
        DatasetConfig(move_done_rad=0.0)


def test_policy_node_names_a_missing_run(tmp_path: Path) -> None:
    from galley_nodes.registry import load_node_class
    from galley_runtime.embedded import EmbeddedHost

    host = EmbeddedHost([])
    with pytest.raises(ConfigError, match="run"):
        host.add_node(load_node_class("diffusion_policy"), parameters={"run": str(tmp_path / "nowhere")})


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "run")]) == 2
    assert "galley collect" in capsys.readouterr().err
    assert main(["collect", "--episodes", "0", "--out", str(tmp_path / "c")]) == 2
    assert "at least 1" in capsys.readouterr().err
    assert main(["eval", "--mode", "policy", "--policy", str(tmp_path), "--out", str(tmp_path / "e")]) == 2
    assert "policy.pt" in capsys.readouterr().err
    assert main(["eval", "--mode", "policy", "--workers", "0"]) == 2
    assert "argument --workers: 0 is not allowed: at least 1" in capsys.readouterr().err


def test_collection_stops_at_a_mistake_every_episode_would_repeat(tmp_path: Path) -> None:
    from galley_episodes import CollectError

    config = CollectConfig(episodes=3, camera_rate_hz=-1.0)
    with pytest.raises(CollectError, match="camera_rate_hz") as err:
        collect(config, out=tmp_path / "c", progress=False)
    assert "nothing more was recorded" in str(err.value)
    assert not list((tmp_path / "c" / "failed").iterdir())
