"""/task/execute over DDS: the task executor in the ROS 2 host, a client node sending goals.

PyPI's ROS 2 wheels have no galley_msgs; ``scripts/build_nav2_msgs.py --package galley_msgs``
builds its classes with the wheels' rosidl generators (kept in build/galley_msgs until a .msg or
.action file changes). The checks run in a child process (test/support/ros2_task_action_child.py),
because the type support libraries must be on LD_LIBRARY_PATH when the process starts. Skipped
without rclpy, the rosidl headers or a C/C++ compiler.
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
BUILT = REPO / "build" / "galley_msgs"
SOURCES = REPO / "src" / "galley_msgs"
STATUS_CANCELED, STATUS_ABORTED = 5, 6
RUNNING = 0

pytest.importorskip("rclpy", reason="rclpy is not installed (requirements-dev.txt's ROS 2 wheels)")
pytestmark = pytest.mark.ros2


def _galley_msgs() -> Path:
    """build/galley_msgs, built now if missing or older than a .msg or .action file."""
    if not (Path(sys.prefix) / "include" / "rosidl_runtime_c").is_dir():
        pytest.skip("the rosidl headers are not installed (PyPI's ROS 2 wheels bring them)")
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        pytest.skip("gcc and g++ are needed to build galley_msgs' classes")
    marker = BUILT / "py" / "galley_msgs" / "galley_msgs_s__rosidl_typesupport_c.so"
    newest = max(p.stat().st_mtime for p in [*SOURCES.glob("msg/*.msg"), *SOURCES.glob("action/*.action")])
    if not marker.exists() or marker.stat().st_mtime < newest:
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "build_nav2_msgs.py"), "--package", "galley_msgs",
             "--out", str(BUILT)],
            check=True,
            capture_output=True,
            timeout=900,
        )  # fmt: skip
    return BUILT


@pytest.fixture(scope="module")
def seen() -> dict:
    built = _galley_msgs()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(built / "py"), *sys.path])
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(built / "lib"), env.get("LD_LIBRARY_PATH")]))
    done = subprocess.run(
        [sys.executable, str(REPO / "test" / "support" / "ros2_task_action_child.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_feedback_per_step_and_cancel_cross_dds(seen):
    canceled = seen["canceled"]
    assert canceled["accepted"] and canceled["status"] == STATUS_CANCELED
    assert canceled["reason"] == "canceled by the client" and canceled["success"] is False
    assert [0, "move to the purple zone", RUNNING] in canceled["feedback"]
    assert canceled["feedback"][0] == [-1, "", RUNNING]  # the plan (the goal method's "planning" is
    # published before rclpy has the goal's handle, and rclpy drops it)


def test_a_failing_instruction_and_a_rejected_goal_cross_dds(seen):
    rejected = seen["rejected_plan"]
    assert rejected["status"] == STATUS_ABORTED and rejected["success"] is False
    assert "rejected, nothing executed" in rejected["reason"]
    assert seen["empty"]["accepted"] is False
