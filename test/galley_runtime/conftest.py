"""Fixtures of the ROS 2 host tests (``test_ros2_*.py``): an rclpy context per test, and spinning.

DDS discovery stays on this machine (Jazzy: the range; Humble: localhost only), and concurrent
runs do not hear each other's nodes: set here, before any test module imports rclpy. rclpy itself
is imported inside the fixtures, so that the embedded host's tests in this folder run without it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
if os.environ.get("ROS_DISTRO") == "humble":
    os.environ.setdefault("ROS_LOCALHOST_ONLY", "1")
os.environ.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))


@pytest.fixture
def ros() -> Iterator[tuple[Any, Callable[..., tuple[Any, Any]]]]:
    """(context, make): an rclpy context for one test, and ``make(node_cls, **kwargs)`` creating
    a galley node in it; the nodes are destroyed and the embedded message backend restored after."""
    rclpy = pytest.importorskip("rclpy", reason="rclpy is not importable: ROS 2 is not installed or sourced")
    from galley_runtime import messages
    from galley_runtime.ros2.host import create_node

    context = rclpy.Context()
    rclpy.init(context=context)
    previous = messages.use_backend(None)
    created = []

    def make(node_cls: type, **kwargs: Any) -> tuple[Any, Any]:
        ros_node, node = create_node(node_cls, context=context, **kwargs)
        created.append(ros_node)
        return ros_node, node

    yield context, make
    for ros_node in created:
        ros_node.destroy_node()
    rclpy.try_shutdown(context=context)
    messages.use_backend(previous)


@pytest.fixture
def spin_for() -> Callable[[Any, list[Any], float], None]:
    """``spin_for(context, ros_nodes, seconds)``: spin the nodes in one executor for that long."""
    from rclpy.executors import SingleThreadedExecutor

    def spin(context: Any, nodes: list[Any], seconds: float) -> None:
        executor = SingleThreadedExecutor(context=context)
        for n in nodes:
            executor.add_node(n)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.02)
        executor.shutdown()

    return spin
