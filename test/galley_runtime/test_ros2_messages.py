"""rclpy's messages, logging and clock as galley's ROS 2 host meets them, against real rclpy and DDS.

Skipped where rclpy is not importable (test_ros2_host.py says which ROS 2 runs which tests). The
fixtures ``ros`` and ``spin_for`` are in this folder's conftest.py.
"""

from __future__ import annotations

import array
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not importable: ROS 2 is not installed or not sourced")

from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from galley_core.config import Config, param  # noqa: E402
from galley_runtime import messages, rosbags_messages  # noqa: E402
from galley_runtime.conversions import diagnostic_array_msg  # noqa: E402
from galley_runtime.node import Node, Publishes, Subscribes, Timer  # noqa: E402
from galley_runtime.ros2.host import RclpyNodeHost  # noqa: E402
from galley_runtime.ros2.messages import RclpyMessages  # noqa: E402

pytestmark = pytest.mark.ros2


def test_rclpy_messages_accept_numpy_values(ros):
    backend = RclpyMessages()
    scan = backend.new(
        "sensor_msgs/msg/LaserScan",
        header={"frame_id": "laser"},
        angle_min=np.float32(-1.5),
        ranges=np.linspace(0.5, 2.0, 4, dtype=np.float64),
    )
    assert isinstance(scan.ranges, array.array) and scan.ranges.typecode == "f"
    assert list(scan.ranges) == pytest.approx([0.5, 1.0, 1.5, 2.0])
    assert scan.angle_min == pytest.approx(-1.5) and scan.header.frame_id == "laser"
    info = backend.new("sensor_msgs/msg/CameraInfo", k=[1.0] * 9)
    assert isinstance(info.k, np.ndarray) and info.k.dtype == np.float64
    path = backend.new("nav_msgs/msg/Path", poses=[{"header": {"frame_id": "map"}}])
    assert path.poses[0].header.frame_id == "map"


def test_galley_msgs_built_by_rosidl_match_the_embedded_definitions(ros):
    pytest.importorskip("galley_msgs.msg", reason="galley_msgs is not built (colcon build this workspace)")
    backend = RclpyMessages()
    for type_name in rosbags_messages.iter_galley_types():
        ros_fields = list(backend.get_class(type_name).get_fields_and_field_types())
        embedded_fields = [name for name, _ in rosbags_messages.typestore().fielddefs[type_name][1]]
        assert ros_fields == embedded_fields, type_name
    plan = backend.new("galley_msgs/msg/TaskPlan", steps=["pick the bowl"])
    assert list(plan.steps) == ["pick the bowl"]


# -- byte fields, logger severities, simulated time ---------------------------------------------


@dataclass(frozen=True)
class LevelConfig(Config):
    level: int = param(2, "level of the published status", ge=0, le=3)


class StatusSource(Node):
    """Publishes one diagnostic status per tick, built as the monitor builds its own."""

    name = "status_source"
    Config = LevelConfig
    publishes = (Publishes("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray"),)
    timers = (Timer("tick", period_s=0.05),)

    def tick(self) -> None:
        entry = type("Entry", (), {"level": self.config.level, "name": "x", "message": "m", "values": ()})
        self.publish("/diagnostics", diagnostic_array_msg([entry], self.now_ns(), "source"))


class StatusSink(Node):
    """Reads received levels as nodes do, through messages.byte_value."""

    name = "status_sink"
    subscribes = (Subscribes("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", "on_status"),)

    def __init__(self, host: Any, config: Any) -> None:
        super().__init__(host, config)
        self.raw: list[Any] = []
        self.levels: list[int] = []

    def on_status(self, msg: Any) -> None:
        self.raw.extend(s.level for s in msg.status)
        self.levels.extend(messages.byte_value(s.level) for s in msg.status)


def test_byte_fields_cross_dds_as_bytes_and_read_as_ints(ros, spin_for):
    context, make = ros
    source_ros, _ = make(StatusSource)
    sink_ros, sink = make(StatusSink)
    spin_for(context, [source_ros, sink_ros], 0.8)
    assert sink.levels and set(sink.levels) == {2}
    assert set(sink.raw) == {b"\x02"}  # rclpy's form: int(b"\x02") raises, as the monitor did


def test_the_hosts_logger_takes_one_call_site_at_two_severities(ros):
    context, _ = ros
    ros_node = rclpy.node.Node("logging_probe", context=context)

    def log_outcome(log: Any, ok: bool) -> None:
        (log.info if ok else log.warning)("step done")  # one call site, two severities

    raw = ros_node.get_logger()
    log_outcome(raw, True)
    with pytest.raises(ValueError, match="severity cannot be changed"):
        log_outcome(raw, False)  # rclpy's rule, which killed the task executor
    host = RclpyNodeHost(ros_node, uses_tf=False)
    for ok in (True, False, True):
        log_outcome(host.logger, ok)
    ros_node.destroy_node()


def test_use_sim_time_gives_a_node_the_clock_topics_time(ros):
    context, make = ros
    source_ros, source = make(StatusSource, parameter_overrides=[Parameter("use_sim_time", value=True)])
    clock_node = rclpy.node.Node("clock_source", context=context)
    clock = clock_node.create_publisher(messages.backend().get_class("rosgraph_msgs/msg/Clock"), "/clock", 10)
    stamp = messages.new("rosgraph_msgs/msg/Clock", clock={"sec": 1234, "nanosec": 5})
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(source_ros)
    end = time.monotonic() + 1.0
    while time.monotonic() < end and source.now_ns() != 1234 * 1_000_000_000 + 5:
        clock.publish(stamp)
        executor.spin_once(timeout_sec=0.02)
    executor.shutdown()
    clock_node.destroy_node()
    assert source.now_ns() == 1234 * 1_000_000_000 + 5
