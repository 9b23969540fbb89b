"""``--cluster`` on a real Ray cluster of this machine: a head (no CPUs, so it runs no episode) and two
worker nodes of one CPU each (ray.cluster_utils.Cluster, separate raylets and object stores).

An evaluation and a collection give, episode for episode, what the local run gives; a worker process
killed in the middle of an episode costs a retry, not the episode; a driver killed midway is
resumed with --resume. Episodes are short: one move, a 6 s step time limit (eval) or 16x16 cameras
(collect).
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (requirements-cluster.txt)")

from galley_episodes import CollectConfig, EvalConfig, collect, evaluate  # noqa: E402 (after the skip)

EVAL = {"episodes": 3, "steps": 1, "split": "test"}
VARYING = ("wall_time_s", "ran_on")  # what may differ between two runs of the same episodes


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    store = 80 * 1024**2
    nodes = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "object_store_memory": store, "include_dashboard": False},
    )
    for _ in range(2):
        nodes.add_node(num_cpus=1, object_store_memory=store)
    nodes.wait_for_nodes()
    yield nodes.address
    nodes.shutdown()


@pytest.fixture(scope="module")
def short_steps(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("params") / "short.yaml"
    path.write_text("task_executor:\n  ros__parameters:\n    step_time_limit_s: 6.0\n")
    return path


@pytest.fixture(scope="module")
def local_eval(tmp_path_factory, short_steps):
    out = tmp_path_factory.mktemp("local_eval")
    evaluate(EvalConfig(mode="policy", workers=1, **EVAL), out_dir=out, params=[short_steps])
    return out


def _rows(out: Path) -> list[dict[str, str]]:
    with (out / "episodes.csv").open() as f:
        return list(csv.DictReader(f))


def _same_episodes(out: Path, reference: Path) -> list[str]:
    """Assert the episodes' rows and metrics equal the reference's; where each cluster episode ran."""
    rows, expected = _rows(out), _rows(reference)
    assert [{k: v for k, v in r.items() if k not in VARYING} for r in rows] == [
        {k: v for k, v in r.items() if k not in VARYING} for r in expected
    ]
    metrics, local = (json.loads((o / "metrics.json").read_text()) for o in (out, reference))
    for key in ("wall_time_s", "real_time_factor"):
        metrics.pop(key), local.pop(key)
    assert metrics == local
    return [r["ran_on"] for r in rows]


def test_an_evaluation_on_the_cluster_equals_the_local_one(cluster, local_eval, short_steps, tmp_path):
    evaluate(EvalConfig(mode="policy", cluster=cluster, **EVAL), out_dir=tmp_path, params=[short_steps])
    where = _same_episodes(tmp_path, local_eval)
    assert all(" node " in w for w in where)
    assert len({w.split(" node ")[1].split()[0] for w in where}) == 2  # both worker nodes took episodes
    assert {r["success"] for r in _rows(tmp_path)} == {"False"}  # 6 s is too short to arrive
    assert max(float(r["path_length_m"]) for r in _rows(tmp_path)) > 0.2  # but the robot drove


def test_a_killed_driver_is_resumed(cluster, local_eval, short_steps, tmp_path, repo):
    argv = ["eval", "--mode", "policy", "--episodes", "3", "--steps", "1", "--split", "test"]
    argv += ["--params", str(short_steps), "--out", str(tmp_path), "--cluster", cluster]
    driver = subprocess.Popen(
        [sys.executable, "-m", "galley_cli.main", *argv],
        cwd=repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while not list((tmp_path / "episodes").glob("*.json")) and time.monotonic() < deadline:
        assert driver.poll() is None, "the driver ended before its first episode"
        time.sleep(0.2)
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    kept = {p.name: p.read_text() for p in (tmp_path / "episodes").glob("*.json")}
    assert 1 <= len(kept) < 3 and not (tmp_path / "metrics.json").exists()
    proc = subprocess.run(
        [sys.executable, "-m", "galley_cli.main", *argv, "--resume"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"{len(kept)} episode(s) already in" in proc.stdout
    assert all((tmp_path / "episodes" / n).read_text() == t for n, t in kept.items())  # not run again
    _same_episodes(tmp_path, local_eval)


def _kill_one_episode_worker(killed: list[int], stop: threading.Event) -> None:
    """SIGKILL the first Ray worker seen in the middle of an episode (its bag being written)."""
    from galley_episodes.cluster_ray import TASK_NAME

    scratch = Path(tempfile.gettempdir()) / "galley-episodes"
    while not stop.is_set() and not killed:
        for folder in scratch.glob("*/ep_*/bag") if scratch.is_dir() else []:
            pid = int(folder.parent.parent.name.split("-")[0])
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if TASK_NAME.encode() in title:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.1)


def _collection(out: Path) -> dict[str, dict]:
    episodes = json.loads((out / "collection.json").read_text())["episodes"]
    return {n: {k: v for k, v in r.items() if k not in VARYING} for n, r in episodes.items()}


def _files(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.suffix != ".png")


def test_a_collection_survives_a_killed_worker_and_equals_the_local_one(cluster, tmp_path):
    settings = {"episodes": 2, "steps": 1, "image_size": (16, 16), "seed": 1_000_000}
    collect(CollectConfig(workers=2, **settings), out=tmp_path / "local", progress=False)
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_one_episode_worker, args=(killed, stop), daemon=True)
    killer.start()
    try:
        report = collect(CollectConfig(cluster=cluster, **settings), out=tmp_path / "ray", progress=False)
    finally:
        stop.set()
        killer.join()
    assert killed, "no episode was caught running"
    ran_on = [
        r["ran_on"]
        for r in json.loads((tmp_path / "ray" / "collection.json").read_text())["episodes"].values()
    ]
    assert all(f"pid {killed[0]}" not in w for w in ran_on)  # its episode was run again by another worker
    assert report["this_run"]["episodes"] == 2 and report["episodes_total"] == 2  # none lost, none twice
    assert _collection(tmp_path / "ray") == _collection(tmp_path / "local")
    assert _files(tmp_path / "ray") == _files(tmp_path / "local")  # the same episodes' files, no partial ones
    assert not (tmp_path / "ray" / ".work").exists()
    for name in _collection(tmp_path / "ray"):
        folder = next((tmp_path / "ray").glob(f"*/{name}"))
        local = next((tmp_path / "local").glob(f"*/{name}"))
        sim = json.loads((folder / "episode.json").read_text())
        assert sim["steps"] == json.loads((local / "episode.json").read_text())["steps"]


def test_a_planner_evaluation_on_the_cluster_equals_the_local_one(cluster, capsys):
    from galley_cli.eval_planner import run_planner_eval

    settings = {"splits": ("test", "out_of_scope"), "limit": 2, "progress": lambda m: None}
    local = run_planner_eval("galley", **settings)
    remote = run_planner_eval("galley", cluster=cluster, **settings)
    assert " node " in remote.pop("ran_on")
    for figures in (local, remote):
        figures.pop("seconds_per_instruction", None)
        figures.pop("ran_on", None)
    assert remote == local


def test_no_cluster_at_the_address_is_one_line(repo, tmp_path):
    argv = ["collect", "--episodes", "1", "--out", str(tmp_path), "--cluster", "127.0.0.1:1"]
    proc = subprocess.run(
        [sys.executable, "-m", "galley_cli.main", *argv],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--cluster 127.0.0.1:1: nothing answers at 127.0.0.1:1" in proc.stderr
