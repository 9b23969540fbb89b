"""The galley command: doctor, demo, nodes; user mistakes end without a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from galley_cli.doctor import run_checks
from galley_cli.main import main


def galley(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "galley_cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_doctor_reports_every_piece_with_a_fix_for_what_is_missing():
    checks = {c.name: c for c in run_checks(render=False)}
    assert checks["python"].ok and checks["galley-nodes"].ok and checks["galley_msgs"].ok
    assert checks["rosbags"].ok and checks["numpy"].ok
    for name in ("ros2 (rclpy)", "mujoco", "gpu"):
        assert name in checks
        assert checks[name].ok or checks[name].fix, f"{name} is missing without a fix"
    if not checks["ros2 (rclpy)"].ok:
        assert "source /opt/ros/" in checks["ros2 (rclpy)"].fix


def test_doctor_command_exit_status_and_json():
    proc = galley("doctor", "--json", "--no-render")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True
    assert {c["name"] for c in report["checks"]} >= {"python", "rosbags", "ros2 (rclpy)", "gpu"}


def test_demo_tours_zones_on_the_simulator_and_reports_with_a_picture(tmp_path, repo):
    out = tmp_path / "demo"
    # The user's map (the same grid from another file) wins over the scene's, with a note.
    layout = yaml.safe_load((repo / "maps" / "kitchen.yaml").read_text())
    layout["image"] = str(repo / "maps" / layout["image"])
    (tmp_path / "my_map.yaml").write_text(yaml.safe_dump(layout))
    params = tmp_path / "mine.yaml"
    params.write_text(f"map_server:\n  ros__parameters:\n    yaml_filename: {tmp_path / 'my_map.yaml'}\n")
    proc = galley("demo", "--zones", "blue,yellow", "--seed", "3", "--out", str(out), "--params", str(params))
    assert proc.returncode == 0, proc.stderr
    # (after the scene check's line, where the check is not cached yet)
    note = next(line for line in proc.stdout.splitlines() if line.startswith("note: "))
    assert note.startswith(
        f"note: map_server.yaml_filename = '{tmp_path / 'my_map.yaml'}' from {params} is used instead of "
        "the scene's map "
    ) and note.endswith("maps/kitchen.yaml")
    assert f"[/map_server]: published {tmp_path / 'my_map.yaml'}:" in proc.stderr
    assert "[2/2] yellow  zone: succeeded" in proc.stdout  # progress per goal
    summary = json.loads((out / "summary.json").read_text())
    assert summary["succeeded"] == 2 and summary["contacts"] == []
    for goal in summary["goals"]:
        assert goal["final_distance_m"] <= 0.09 and goal["final_heading_error_rad"] < 0.1
    assert (out / "tour.png").stat().st_size > 20_000


def test_user_mistakes_are_one_clear_line_not_a_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("sim:\n  ros__parameters:\n    scan_rate_hz: 0\n")
    proc = galley("demo", "--params", str(bad), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "node '/sim': parameter 'scan_rate_hz' = 0 is not allowed: > 0" in proc.stderr
    assert str(bad) in proc.stderr
    zone = galley("demo", "--zones", "orange", "--out", str(tmp_path / "out"))
    assert zone.returncode == 2 and "no zone 'orange'; zones: red, green, blue, yellow, purple" in zone.stderr
    assert "Traceback" not in zone.stderr
    missing = galley("demo", "--params", str(tmp_path / "nope.yaml"))
    assert (
        missing.returncode == 2 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    )


def test_nodes_lists_topics_and_parameters(capsys):
    assert main(["nodes", "square_driver"]) == 0
    out = capsys.readouterr().out
    assert "publishes  cmd_vel  [geometry_msgs/msg/Twist]" in out
    assert "speed_mps = 0.2  forward speed on the edges; allowed: > 0 (m/s)" in out
    assert main(["nodes", "no_such_node"]) == 2
    assert "known nodes" in capsys.readouterr().err


@pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("rclpy") is not None, reason="rclpy is importable here"
)
def test_node_executables_without_ros2_explain_the_fix(capsys):
    from galley_runtime.ros2 import executables

    assert executables.unicycle_base() == 2
    err = capsys.readouterr().err
    assert "rclpy is not importable" in err and "source" in err and "galley demo" in err
    with pytest.raises(AttributeError):
        _ = executables.no_such_node


@pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("mujoco") is None, reason="mujoco is not installed here"
)
def test_doctor_finds_a_headless_render_backend_or_says_how_to_get_one():
    checks = [c for c in run_checks(render=True) if c.name.startswith("mujoco render")]
    assert checks and checks[0].name == "mujoco render (egl)"
    assert checks[-1].ok or all(c.fix.startswith("apt-get install") for c in checks)


@pytest.mark.parametrize("fill", [True, False])
def test_episode_workers_that_fill_the_cpus_get_one_rasteriser_thread_each(monkeypatch, fill):
    from galley_episodes.pool import _quiet_worker

    monkeypatch.delenv("LP_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # a user's setting stays
    _quiet_worker(fill)
    assert os.environ.get("LP_NUM_THREADS") == ("1" if fill else None)
    assert os.environ["OMP_NUM_THREADS"] == "3"
    monkeypatch.setenv("LP_NUM_THREADS", "4")
    _quiet_worker(fill)
    assert os.environ["LP_NUM_THREADS"] == "4"
