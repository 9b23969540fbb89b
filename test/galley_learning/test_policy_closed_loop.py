"""A learned policy in closed loop at toy size: what training must produce, not only that it runs.

Collects a few move-only oracle episodes with DART perturbations (``galley collect --steps 1
--perturb 1``; the perception node runs and its estimates are recorded), trains the
low-dimensional MLP policy on one CPU thread for 2,000 steps with the ``sensors`` observation (what
a robot has: no ground truth) and, as the control, with ``proprio`` (proprioception and the step's
kind, less the step's target), and evaluates both on held-out suite episodes (seeds collection
never draws), every step scored, with the perception node in the loop (a ``sensors`` policy has
the cameras render for it). The policy that sees its goal must drive towards it; the one that does
not see it must not. Fixed seeds, one torch thread: the same numbers every run.

The moves read the map's goal and the planner's path, not perception's estimates (a pick's and a
place's do); picks and places are measured at full size (galley_learning README).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import Reader

pytest.importorskip("torch")

from galley_cli.main import main
from galley_learning.policy.dataset import find_bags
from galley_runtime.recording.dataset import DatasetStreams, load_episode

EVAL_EPISODES = 3


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("moves")
    argv = ["collect", "--episodes", "5", "--steps", "1", "--perturb", "1.0", "--seed", "2000000"]
    assert main([*argv, "--out", str(out), "--image-size", "32x24"]) == 0
    return out


def _trained_and_evaluated(collection: Path, tmp: Path, observation: str) -> list[dict[str, str]]:
    run = tmp / f"run_{observation}"
    argv = ["train", "--data", str(collection), "--out", str(run), "--size", "lowdim-mlp", "--steps", "2000"]
    assert main([*argv, "--observation", observation, "--actions", "absolute", "--threads", "1"]) == 0
    limit = tmp / "limit.yaml"
    limit.write_text(
        "task_executor:\n  ros__parameters:\n    teleport_on_failure: true\n    step_time_limit_s: 30.0\n"
        "diffusion_policy:\n  ros__parameters:\n    device: cpu\n"
        # the cameras render for perception (a sensors policy): small, as the collection's
        "sim:\n  ros__parameters:\n    image_width: 32\n    image_height: 24\n"
    )
    out = tmp / f"eval_{observation}"
    argv = [
        "eval",
        "--mode",
        "policy",
        "--policy",
        str(run),
        "--episodes",
        str(EVAL_EPISODES),
        "--steps",
        "1",
        "--no-whole-plans",  # every step scored; whole plans are one move here
    ]
    assert main([*argv, "--params", str(limit), "--out", str(out)]) == 0
    return list(csv.DictReader((out / "episodes.csv").open()))


def _distances(rows: list[dict[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.array([float(r["goal_dist_start_m"]) for r in rows]),
        np.array([float(r["goal_dist_end_m"]) for r in rows]),
    )


def test_the_collection_holds_recoveries(collection: Path) -> None:
    """The simulator followed perturbed commands; the bag's actions are the oracle's own."""
    bag = find_bags(collection)[0]
    oracle = load_episode(bag, 10.0, DatasetStreams(cameras={}))["cmd_vel"]
    followed = load_episode(bag, 10.0, DatasetStreams(cameras={}, cmd_vel="/perturbed/cmd_vel"))["cmd_vel"]
    n = min(len(oracle), len(followed))
    differs = np.abs(oracle[:n] - followed[:n]).max(axis=1) > 1e-6
    assert 0.05 < differs.mean() < 0.6  # in spells, while the oracle drives
    with Reader(bag) as reader:  # perception ran during collection, its estimates recorded
        assert sum(c.msgcount for c in reader.connections if c.topic == "/perception/objects") > 10
    report = json.loads((collection / "collection.json").read_text())
    assert report["settings"]["perturb"] == 1.0
    assert all(len(r["plan"]) == 1 and r["plan"][0].startswith("move") for r in report["episodes"].values())


def test_a_policy_that_sees_its_goal_drives_to_it_and_one_that_does_not_does_not(
    collection: Path, tmp_path: Path
) -> None:
    start, end = _distances(_trained_and_evaluated(collection, tmp_path, "sensors"))
    # Held-out seeds: the base arrives within Kitchen-R's 0.10 m where the 30 s a step has here
    # allow it, and every episode ends nearer its goal (measured, sensors: 2.56 -> 0.056 m and
    # 3.31 -> 0.038, arrived; 6.05 -> 4.23 after 30 s; the privileged preset before it: 0.051,
    # 0.048, 4.26). Before the policy saw /plan and stopped training
    # on the oracle's turn in place after arrival, one of the three arrived (0.09, 5.28, 2.45 m).
    # 2,000 steps: at 1,000 the goal observation's width (the arm step's contact point, 12 more
    # values, all zero in a move) alone changed the initial weights enough to leave one arrival.
    assert np.sum(end <= 0.10) >= EVAL_EPISODES - 1
    assert np.all(end < start - 0.3)
    # The control learns from the same episodes without the step's target: it cannot know where
    # the zone is, arrives nowhere, and gets much less near (measured: 0.95, 5.13, 2.86 m; the
    # same figures since this test trained the privileged preset).
    control_start, control_end = _distances(_trained_and_evaluated(collection, tmp_path, "proprio"))
    np.testing.assert_allclose(control_start, start)  # the same episodes
    assert not np.any(control_end <= 0.10)
    assert (control_start - control_end).mean() < (start - end).mean() - 0.4
    assert control_end.mean() > end.mean() + 0.4
