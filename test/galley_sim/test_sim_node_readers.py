"""The sim node builds a message, or renders an image, only for a reader: a rate watch gets the stamp."""

from __future__ import annotations

from typing import Any

import numpy as np

from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.embedded import host as embedded_host
from galley_runtime.qos import QoS
from galley_runtime.rosbags_messages import serialize
from galley_sim.sim_node import SimNode


def test_imu_scan_and_tf_that_nobody_reads_are_not_built_and_change_no_motion(monkeypatch):
    """Stamp subscriptions (the monitor's rate watch) get every stamp at the topics' rates; the
    messages, and the IMU's sensor stage, are made only for a reader, and change nothing."""
    built: dict[str, int] = {}

    def counted(name: str, build: Any) -> Any:
        def wrapper(*args: Any) -> Any:
            built[name] = built.get(name, 0) + 1
            return build(*args)

        return wrapper

    monkeypatch.setattr(SimNode, "_imu_msg", counted("imu", SimNode._imu_msg))
    monkeypatch.setattr(SimNode, "_scan_msg", counted("scan", SimNode._scan_msg))
    monkeypatch.setattr(
        embedded_host,
        "transform_stamped_msgs_from_values",
        counted("tf", embedded_host.transform_stamped_msgs_from_values),
    )
    types = {
        "/imu/data": "sensor_msgs/msg/Imu",
        "/scan": "sensor_msgs/msg/LaserScan",
        "/tf": "tf2_msgs/msg/TFMessage",
    }

    def run(read: bool) -> tuple[dict[str, list[int]], list[bytes], Any]:
        built.clear()
        host = EmbeddedHost()
        probe = host.participant("probe")
        stamps: dict[str, list[int]] = {topic: [] for topic in types}
        for topic, type_name in types.items():
            probe.create_stamp_subscription(topic, type_name, stamps[topic].append, QoS(depth=1000))
            if read:
                probe.create_subscription(topic, type_name, lambda m: None, QoS(depth=1000))
        joints: list[bytes] = []
        probe.create_subscription(
            "/joint_states",
            "sensor_msgs/msg/JointState",
            lambda m: joints.append(serialize(m)),
            QoS(depth=1000),
        )
        host.add_node(SimNode, parameters={"seed": 5, "cameras_enabled": False})
        drive = probe.create_publisher("/cmd_vel", "geometry_msgs/msg/Twist", QoS())
        for _ in range(5):  # (0.2 m/s, 0.5 rad/s) at 10 Hz for 0.5 s
            drive.publish(messages.new("geometry_msgs/msg/Twist", linear={"x": 0.2}, angular={"z": 0.5}))
            host.run_for(0.1)
        return stamps, joints, host.tf.lookup_values("map", "gripper_link", None)[0]

    unread = run(False)
    assert built == {}
    read = run(True)
    assert built["imu"] == 50 and built["scan"] == 5 and built["tf"] == 26
    ms = 1_000_000
    assert unread[0]["/imu/data"] == [k * 10 * ms for k in range(1, 51)]
    assert unread[0]["/scan"] == [k * 100 * ms for k in range(1, 6)]
    assert unread[0]["/tf"] == [k * 20 * ms for k in range(26)]  # the first at the start
    assert unread[0] == read[0]
    assert len(unread[1]) == 26 and unread[1] == read[1]
    np.testing.assert_array_equal(unread[2], read[2])


def test_an_image_only_watched_for_its_rate_is_counted_not_rendered():
    host, stamps = EmbeddedHost(), []
    watch = host.participant("rate_watch")
    watch.create_stamp_subscription(
        "/camera/wrist/image_raw", "sensor_msgs/msg/Image", stamps.append, QoS(depth=10)
    )
    sim = host.add_node(SimNode, parameters={"seed": 2, "cameras_enabled": True})
    rendered: list[Any] = []
    render_cameras = sim.sim.render_cameras
    sim.sim.render_cameras = lambda cameras: rendered.append(cameras) or render_cameras(cameras)
    host.run_for(0.2)
    assert stamps == [100_000_000, 200_000_000] and rendered == []
    assert host.bus.statistics()["/camera/wrist/image_raw"]["published"] == 2
    wrist: list[Any] = []
    host.participant("reader").create_subscription(
        "/camera/wrist/image_raw", "sensor_msgs/msg/Image", wrist.append, QoS(depth=10)
    )
    host.run_for(0.1)
    assert rendered == [["wrist_camera"]] and len(wrist) == 1 and stamps[-1] == 300_000_000
