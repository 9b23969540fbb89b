"""The ROS 2 host's run_node ends cleanly on Ctrl-C, wherever in rclpy the signal lands (real rclpy).

Found by launch_kitchen_sim.py under launch_testing: the monitor, which takes camera images, exited
1 on the launch's SIGINT. rclpy converts each received message to Python by calling the message
class, so a KeyboardInterrupt can be raised inside that Python code; the conversion then fails and
rclpy's executor raises pybind11's ``RuntimeError: Unable to convert call argument '0' to Python
object`` instead. A KeyboardInterrupt in the middle of a callback cuts it short (the recorder,
closing its bag on an abort, left the last file unfinished), and ``ros2 launch`` stopped with Ctrl-C
interrupted every node a second time while it shut down. The host now leaves the stopping to
rclpy's own handler, which ends the spin between callbacks. Skipped where rclpy is not importable
(CI installs PyPI's Jazzy wheels).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not importable: ROS 2 is not installed or not sourced")

from std_msgs.msg import String  # noqa: E402

from galley_runtime import messages  # noqa: E402
from galley_runtime.node import Node, Subscribes  # noqa: E402
from galley_runtime.ros2.host import run_node  # noqa: E402

pytestmark = pytest.mark.ros2
TOPIC = "/ctrl_c_probe"
HERE = Path(__file__).resolve().parent


class Listener(Node):
    """Takes String messages; counts its shutdowns, and can be interrupted again in one."""

    name = "ctrl_c_listener"
    subscribes = (Subscribes(TOPIC, "std_msgs/msg/String", "on_message"),)
    shutdowns = 0
    interrupt_again = False  # a second SIGINT while shutting down (ros2 launch stopped by Ctrl-C)

    interrupt_in_callback = False  # SIGINT in the middle of a callback (the recorder closing its bag)
    callbacks_finished = 0

    def on_message(self, msg: Any) -> None:
        if self.interrupt_in_callback and not type(self).callbacks_finished:
            os.kill(os.getpid(), signal.SIGINT)  # Python's handler runs before the next line
        type(self).callbacks_finished += 1

    def on_shutdown(self) -> None:
        if self.interrupt_again:
            os.kill(os.getpid(), signal.SIGINT)
        type(self).shutdowns += 1


def publish_until(stop: threading.Event) -> None:
    """Publish on TOPIC from a context of its own (another thread) until stopped."""
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("ctrl_c_talker", context=context)
    publisher = node.create_publisher(String, TOPIC, 10)
    while not stop.is_set():
        publisher.publish(String(data="hello"))
        time.sleep(0.02)
    node.destroy_node()
    rclpy.try_shutdown(context=context)


def run_listener() -> int:
    """run_node(Listener) with a talker publishing to it; returns its exit status."""
    stop = threading.Event()
    talker = threading.Thread(target=publish_until, args=(stop,))
    talker.start()
    try:
        return run_node(Listener, args=["ctrl_c_listener"])
    finally:
        stop.set()
        talker.join(timeout=10)


def scenario(where: str) -> None:
    """Run the listener, interrupted ``where`` ("conversion" or "callback"); print what came of it.

    Each scenario runs in an interpreter of its own, as each node does: rclpy's signal handling
    is set up once per process.
    """
    if where == "conversion":
        original_init = String.__init__

        def interrupted_init(self: Any, *args: Any, **kwargs: Any) -> None:
            if threading.current_thread() is threading.main_thread():  # rclpy taking a message
                os.kill(os.getpid(), signal.SIGINT)  # Python's handler runs before the next line
            original_init(self, *args, **kwargs)

        String.__init__ = interrupted_init  # type: ignore[method-assign]
        Listener.interrupt_again = True
    else:
        Listener.interrupt_in_callback = True
    handler = signal.getsignal(signal.SIGINT)
    status = run_listener()
    restored = signal.getsignal(signal.SIGINT) is handler
    print(json.dumps([status, Listener.callbacks_finished, Listener.shutdowns, restored]))


def run_scenario(where: str) -> list[Any]:
    code = f"import test_ros2_host_shutdown as t; t.scenario({where!r})"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_ctrl_c_while_rclpy_converts_a_message_ends_the_node_cleanly():
    status, _, shutdowns, restored = run_scenario("conversion")  # before the fix: RuntimeError
    assert status == 0
    assert shutdowns == 1  # a second SIGINT did not cut the shutdown short
    assert restored  # run_node leaves Python's handler as it was


def test_a_ctrl_c_in_a_callback_lets_it_finish_before_the_node_ends():
    status, finished, shutdowns, _ = run_scenario("callback")
    assert status == 0
    assert finished >= 1 and shutdowns == 1  # before the fix: KeyboardInterrupt cut it short


def test_any_other_runtime_error_still_propagates(monkeypatch):
    def failing_spin(node: Any, executor: Any = None) -> None:
        raise RuntimeError("a real failure")

    monkeypatch.setattr(rclpy, "spin", failing_spin)
    previous_backend = messages.use_backend(None)
    try:
        with pytest.raises(RuntimeError, match="a real failure"):
            run_node(Listener, args=["ctrl_c_listener"])
    finally:
        messages.use_backend(previous_backend)
