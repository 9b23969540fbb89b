"""The ROS 2 host's run_node ends cleanly on Ctrl-C, wherever in rclpy the signal lands (real rclpy).

Found by launch_kitchen_sim.py under launch_testing: the monitor, which takes camera images, exited
1 on the launch's SIGINT. rclpy converts each received message to Python by calling the message
class, so a KeyboardInterrupt can be raised inside that Python code; the conversion then fails and
rclpy's executor raises pybind11's ``RuntimeError: Unable to convert call argument '0' to Python
object`` instead. And ``ros2 launch`` stopped with Ctrl-C interrupted every node a second time
while it shut down. Skipped where rclpy is not importable (CI installs PyPI's Jazzy wheels).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")  # as test_ros2_host.py
os.environ.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))
rclpy = pytest.importorskip("rclpy", reason="rclpy is not importable: ROS 2 is not installed or not sourced")

from std_msgs.msg import String  # noqa: E402

from galley_runtime import messages  # noqa: E402
from galley_runtime.node import Node, Subscribes  # noqa: E402
from galley_runtime.ros2.host import run_node  # noqa: E402

pytestmark = pytest.mark.ros2
TOPIC = "/ctrl_c_probe"


class Listener(Node):
    """Takes String messages; counts its shutdowns, and can be interrupted again in one."""

    name = "ctrl_c_listener"
    subscribes = (Subscribes(TOPIC, "std_msgs/msg/String", "on_message"),)
    shutdowns = 0
    interrupt_again = False  # a second SIGINT while shutting down (ros2 launch stopped by Ctrl-C)

    def on_message(self, msg: Any) -> None:
        pass

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


def test_a_ctrl_c_while_rclpy_converts_a_message_ends_the_node_cleanly(monkeypatch):
    original_init = String.__init__
    main = threading.main_thread()

    def interrupted_init(self: Any, *args: Any, **kwargs: Any) -> None:
        if threading.current_thread() is main:  # rclpy converting a taken message in run_node
            os.kill(os.getpid(), signal.SIGINT)  # Python's handler runs before the next line
        original_init(self, *args, **kwargs)

    monkeypatch.setattr(String, "__init__", interrupted_init)
    monkeypatch.setattr(Listener, "shutdowns", 0)
    monkeypatch.setattr(Listener, "interrupt_again", True)
    stop = threading.Event()
    talker = threading.Thread(target=publish_until, args=(stop,))
    talker.start()
    previous_backend = messages.use_backend(None)
    handler = signal.getsignal(signal.SIGINT)
    try:
        status = run_node(Listener, args=["ctrl_c_listener"])  # before the fix: RuntimeError
    finally:
        stop.set()
        talker.join(timeout=10)
        messages.use_backend(previous_backend)
    assert status == 0
    assert Listener.shutdowns == 1  # the second SIGINT did not cut the shutdown short
    assert signal.getsignal(signal.SIGINT) is handler  # run_node leaves Python's handler as it was


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
