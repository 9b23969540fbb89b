"""Actions in the ROS 2 host, against real rclpy and DDS with nav2_msgs built from the wheels.

PyPI's ROS 2 wheels have no nav2_msgs; scripts/build_nav2_msgs.py builds its Python classes with
the wheels' rosidl generators (about 25 s, kept in build/nav2_msgs until an .action file changes).
The checks run in a child process (test/support/ros2_actions_child.py), because the type support
libraries must be on LD_LIBRARY_PATH when the process starts. Skipped without rclpy, the rosidl
headers or a C/C++ compiler.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILT = REPO / "build" / "nav2_msgs"
ACTIONS = REPO / "src" / "galley_runtime" / "galley_runtime" / "interfaces" / "nav2_msgs" / "action"
STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED = 4, 5, 6

pytest.importorskip("rclpy", reason="rclpy is not installed (requirements-dev.txt's ROS 2 wheels)")
pytestmark = pytest.mark.ros2


def _nav2_msgs() -> Path:
    """build/nav2_msgs, built now if missing or older than an .action file."""
    if not (Path(sys.prefix) / "include" / "rosidl_runtime_c").is_dir():
        pytest.skip("the rosidl headers are not installed (PyPI's ROS 2 wheels bring them)")
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        pytest.skip("gcc and g++ are needed to build nav2_msgs' classes")
    marker = BUILT / "py" / "nav2_msgs" / "nav2_msgs_s__rosidl_typesupport_c.so"
    newest = max(p.stat().st_mtime for p in ACTIONS.glob("*.action"))
    if not marker.exists() or marker.stat().st_mtime < newest:
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "build_nav2_msgs.py"), "--out", str(BUILT)],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return BUILT


@pytest.fixture(scope="module")
def seen() -> dict:
    built = _nav2_msgs()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(built / "py"), *sys.path])
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(built / "lib"), env.get("LD_LIBRARY_PATH")]))
    done = subprocess.run(
        [sys.executable, str(REPO / "test" / "support" / "ros2_actions_child.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_navigate_to_pose_composes_the_two_servers_over_dds_with_feedback(seen):
    nav = seen["navigate"]
    assert nav["accepted"] and nav["status"] == STATUS_SUCCEEDED and nav["error_code"] == 0
    assert len(nav["feedback"]) >= 5 and nav["feedback"] == sorted(nav["feedback"], reverse=True)


def test_a_planner_failure_reaches_the_navigate_client_with_its_nav2_code(seen):
    walled = seen["navigate_unreachable"]
    assert walled["status"] == STATUS_ABORTED and walled["error_code"] == 208  # NO_VALID_PATH
    assert "walled in" in walled["error_msg"]


def test_rejections_cancel_and_preemption_cross_dds(seen):
    assert seen["navigate_behavior_tree"]["accepted"] is False
    assert seen["follow_rejected"]["accepted"] is False
    assert seen["follow_cancel"]["status"] == STATUS_CANCELED and len(seen["follow_cancel"]["feedback"]) >= 2
    assert seen["navigate_cancel"]["status"] == STATUS_CANCELED
    assert seen["follow_preempted"]["status"] == STATUS_ABORTED
    assert "preempted" in seen["follow_preempted"]["error_msg"]
    assert seen["follow_preempting"]["status"] == STATUS_SUCCEEDED
