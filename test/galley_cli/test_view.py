"""``galley run --view``: a real protocol client lists, subscribes and decodes every schema at its rate,
and a client that stalls changes nothing in the run or its bag."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("foxglove", reason="the live view needs foxglove-sdk (requirements.txt)")
pytest.importorskip("websockets", reason="the protocol client needs websockets (requirements.txt)")

from galley_runtime.view.client import Received, listen

INSTRUCTION = "Move the bowl to the green zone"
PLAN = "move to the blue zone"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_run(out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "galley_cli.main",
            "run",
            INSTRUCTION,
            "--plan",
            PLAN,
            "--out",
            str(out),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> str:
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    return out


def median_period_s(got: Received, topic: str) -> float:
    stamps = np.array([t for t, _, _ in got.messages[topic]], dtype=float) / 1e9
    return float(np.median(np.diff(stamps)))


def on_grid(got: Received, topic: str, period_s: float) -> bool:
    stamps = np.array([t for t, _, _ in got.messages[topic]], dtype=float) / 1e9
    return bool(np.all(np.abs(np.diff(stamps) / period_s - np.round(np.diff(stamps) / period_s)) < 0.05))


def wall_rate_hz(got: Received, topic: str) -> float:
    walls = [w for _, w, _ in got.messages[topic]]
    return (len(walls) - 1) / (walls[-1] - walls[0])


def fewest_expected(got: Received, topic: str, period_s: float, hz: float) -> float:
    """Half the messages the run could show: every one (its period) or ``hz`` a wall second, the fewer.

    The run's speed swings on a loaded machine, and a message is thinned only where the simulation
    outruns ``hz``; so the count, not the median gap, is compared with what the whole run allows.
    """
    (t0, w0, _), (t1, w1, _) = got.messages[topic][0], got.messages[topic][-1]
    return 0.5 * min((t1 - t0) / 1e9 / period_s, (w1 - w0) * hz)


@pytest.fixture(scope="module")
def viewed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Received, Path, str]:
    """One `galley run --view --video` watched by a client from start to end."""
    out = tmp_path_factory.mktemp("viewed") / "run"
    port = free_port()
    proc = start_run(out, "--video", "--view", str(port))
    got = asyncio.run(listen(f"ws://127.0.0.1:{port}", 240.0))  # until the command ends
    return got, out, finish(proc)


def test_the_view_lists_the_channels_with_their_schemas(viewed):
    got, _, log = viewed
    assert "live view: http://127.0.0.1:" in log
    schemas = {topic: ch["schemaName"] for topic, ch in got.channels.items()}
    assert schemas["/tf"] == "foxglove.FrameTransforms"
    assert schemas["/view/scene"] == "foxglove.SceneUpdate"
    assert schemas["/camera/base/image_raw"] == "foxglove.CompressedImage"
    assert schemas["/scan"] == "foxglove.LaserScan"
    assert schemas["/plan"] == "foxglove.PosesInFrame"
    assert schemas["/view/plan"] == "galley.PlanProgress"
    assert schemas["/diagnostics"] == "diagnostic_msgs/msg/DiagnosticArray"
    assert all(ch["encoding"] == "json" for ch in got.channels.values())


def test_each_schema_decodes_at_its_rate_on_the_simulation_clock(viewed):
    got, _, _ = viewed
    # /tf carries the simulator's frames and, where perception runs (a recorded run), its own
    frames = {t["child_frame_id"] for _, _, tf in got.messages["/tf"] for t in tf["transforms"]}
    assert {"odom", "base_link", "object/bowl"} <= frames
    # the fast streams come at their rate on the simulation's clock, thinned to what a screen shows:
    # /tf 30 a wall second, /odom and /scan 10
    for topic, period_s, hz in (("/tf", 0.02, 30), ("/odom", 0.02, 10), ("/scan", 0.1, 10)):
        assert on_grid(got, topic, period_s), f"{topic}: stamps off the {period_s} s grid"
        assert 2 < wall_rate_hz(got, topic) <= hz * 1.2, topic
        assert len(got.messages[topic]) >= fewest_expected(got, topic, period_s, hz), topic
    assert median_period_s(got, "/diagnostics") == pytest.approx(1.0, rel=0.05)  # 1 Hz, never thinned
    scan = got.messages["/scan"][-1][2]
    assert len(scan["ranges"]) == 360 and scan["frame_id"] == "laser"
    scene = got.messages["/view/scene"][-1][2]
    ids = {e["id"] for e in scene["entities"]}
    assert {"zone/green", "zone/blue", "object/bowl"} <= ids
    assert any(e["cubes"] for e in scene["entities"] if e["id"].startswith("box/"))
    image = got.messages["/camera/base/image_raw"][-1][2]
    assert image["format"] == "jpeg" and image["data"].startswith("/9j/")  # base64 of a JPEG
    path = got.messages["/plan"][-1][2]
    assert path["frame_id"] == "map" and len(path["poses"]) >= 2
    assert got.server_time_ns >= 30e9  # the simulation's clock, 40 s for this step
    progress = got.messages["/view/plan"][-1][2]
    assert progress["steps"][0]["step"] == PLAN
    assert progress["steps"][0]["state"] == "succeeded" and progress["steps"][0]["verdict"] == "pass"


def test_a_stalled_client_changes_nothing_in_the_run_or_its_bag(tmp_path, viewed):
    """The same episode: once with the view, a client that reads a frame every 50 ms and one that
    goes away after 50 messages, once without."""
    from rosbags.highlevel import AnyReader

    port = free_port()
    stalled = start_run(tmp_path / "stalled", "--view", str(port))
    url = f"ws://127.0.0.1:{port}"

    async def watch() -> list[Received]:
        def fifty(got: Received) -> bool:
            return sum(len(m) for m in got.messages.values()) >= 50

        return await asyncio.gather(listen(url, 240.0, read_delay_s=0.05), listen(url, 240.0, until=fifty))

    slow, brief = asyncio.run(watch())
    finish(stalled)
    finish(start_run(tmp_path / "plain"))
    assert sum(len(m) for m in slow.messages.values()) > 0
    assert sum(len(m) for m in brief.messages.values()) >= 50
    episodes = [json.loads((tmp_path / r / "episode.json").read_text()) for r in ("stalled", "plain")]
    for e in episodes:
        e.pop("wall_time_s"), e.pop("real_time_factor")
    assert episodes[0] == episodes[1]

    def counts(bag: Path) -> dict[str, int]:
        with AnyReader([bag]) as reader:
            return {c.topic: c.msgcount for c in reader.connections}

    assert counts(tmp_path / "stalled" / "bag") == counts(tmp_path / "plain" / "bag")


def test_view_port_in_use_is_one_line_and_exit_2(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = start_run(tmp_path / "run", "--view", str(port))
        out = proc.communicate(timeout=300)[0]
    assert proc.returncode == 2, out
    assert f"--view {port}: cannot listen" in out and "Traceback" not in out
