"""The live view's parts without a client: the bus observer, the conversions, the plan's progress."""

from __future__ import annotations

import json

import numpy as np
import pytest

from galley_runtime import messages
from galley_runtime.config_files import find_scene
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.msg_constants import ABORT, STEP_FAILED, STEP_STARTED, STEP_SUCCEEDED
from galley_runtime.qos import QoS
from galley_runtime.view import convert
from galley_runtime.view.plan_progress import PlanProgress


def test_an_observer_sees_every_message_and_counts_as_no_subscriber():
    host = EmbeddedHost()
    seen = []
    remove = host.bus.add_observer(lambda topic, type_name, msg: seen.append((topic, type_name)))
    talker = host.participant("talker")
    pub = talker.create_publisher("/chatter", "std_msgs/msg/String", QoS())
    assert pub.get_subscription_count() == 0  # a camera would not render for the view
    pub.publish(messages.new("std_msgs/msg/String", data="hi"))
    assert seen == [("/chatter", "std_msgs/msg/String")]
    remove()
    pub.publish(messages.new("std_msgs/msg/String", data="again"))
    assert len(seen) == 1


def test_the_scene_becomes_cubes_zones_and_objects_in_their_frames():
    scene = find_scene("kitchen")
    update = convert.scene_update(scene)
    json.dumps(update)  # plain JSON values only
    by_id = {e["id"]: e for e in update["entities"]}
    assert len(by_id) == len(scene.boxes) + len(scene.zones) + len(scene.objects)
    bowl = by_id["object/bowl"]
    assert bowl["frame_id"] == "object/bowl" and bowl["cylinders"]  # moved by the simulator's TF
    zone = scene.zones[0]
    cube = by_id[f"zone/{zone.name}"]["cubes"][0]
    assert cube["pose"]["position"]["x"] == pytest.approx(zone.center[0])
    assert cube["size"]["x"] == pytest.approx(zone.size[0])


def test_a_scan_without_returns_is_valid_json():
    scan = messages.new(
        "sensor_msgs/msg/LaserScan",
        angle_min=-np.pi,
        angle_increment=np.pi / 2,
        ranges=np.array([1.0, np.inf, np.nan, 2.5], dtype=np.float32),
    )
    out = json.loads(convert.laser_scan(scan))
    assert out["ranges"] == [1.0, 0.0, 0.0, 2.5]
    assert out["end_angle"] == pytest.approx(np.pi / 2)
    assert out["pose"]["orientation"]["w"] == 1 and out["intensities"] == []


def transform(child: str, x: float, yaw: float) -> object:
    return messages.new(
        "geometry_msgs/msg/TransformStamped",
        header=messages.new(
            "std_msgs/msg/Header",
            frame_id="odom",
            stamp=messages.new("builtin_interfaces/msg/Time", sec=12, nanosec=340_000_000),
        ),
        child_frame_id=child,
        transform=messages.new(
            "geometry_msgs/msg/Transform",
            translation=messages.new("geometry_msgs/msg/Vector3", x=x, y=-0.25, z=0.1),
            rotation=messages.new("geometry_msgs/msg/Quaternion", z=np.sin(yaw / 2), w=np.cos(yaw / 2)),
        ),
    )


def test_the_fast_streams_are_foxglove_json_to_their_precision():
    """/tf, /odom and the trajectory are written as JSON text: the fields Foxglove's schemas name,
    positions to 0.1 mm and quaternions to 1e-6, names escaped."""
    tf = messages.new(
        "tf2_msgs/msg/TFMessage",
        transforms=[transform("base_link", 1.23456789, 0.3), transform('odd "name"', -7.0, -2.0)],
    )
    out = json.loads(convert.frame_transforms(tf))
    first, second = out["transforms"]
    assert first["timestamp"] == {"sec": 12, "nsec": 340_000_000}
    assert (first["parent_frame_id"], first["child_frame_id"]) == ("odom", "base_link")
    assert first["translation"] == {"x": pytest.approx(1.23456789, abs=5e-5), "y": -0.25, "z": 0.1}
    assert first["rotation"]["z"] == pytest.approx(np.sin(0.15), abs=5e-7)
    assert second["child_frame_id"] == 'odd "name"' and second["rotation"]["w"] == pytest.approx(np.cos(-1.0))
    odom = messages.new("nav_msgs/msg/Odometry", child_frame_id="base_link")
    odom.header.frame_id = "odom"
    odom.pose.pose.position.x = 2.5
    pose = json.loads(convert.pose_in_frame(odom))
    assert pose["frame_id"] == "odom" and pose["pose"]["position"]["x"] == 2.5
    assert pose["pose"]["orientation"]["w"] == 1.0
    path = json.loads(
        convert.xy_poses("map", 1_500_000_000, [convert.xy_pose(0.0, 1.0), convert.xy_pose(2.0, 3.0)])
    )
    assert path["timestamp"] == {"sec": 1, "nsec": 500_000_000} and path["frame_id"] == "map"
    assert [(p["position"]["x"], p["position"]["y"]) for p in path["poses"]] == [(0.0, 1.0), (2.0, 3.0)]


def event(kind: int, index: int, step: str = "", rule: str = "", reason: str = "") -> object:
    return messages.new(
        "galley_msgs/msg/EpisodeEvent", kind=kind, step_index=index, step=step, rule=rule, reason=reason
    )


def test_plan_progress_follows_the_executor_and_the_monitor():
    progress = PlanProgress()
    plan = messages.new(
        "galley_msgs/msg/TaskPlan", instruction="Move the bowl", steps=["move to x", "pick y"]
    )
    assert progress.update("/task/plan", plan)
    progress.update("/episode/events", event(STEP_STARTED, 0))
    assert progress.current == 0 and progress.steps[0]["state"] == "running"
    progress.update("/episode/events", event(STEP_SUCCEEDED, 0))
    progress.update("/monitor/events", event(STEP_SUCCEEDED, 0, rule="move_goal", reason="0.05 m"))
    progress.update("/episode/events", event(STEP_FAILED, 1, reason="unreachable"))
    progress.update("/monitor/events", event(STEP_FAILED, 1, rule="pick", reason="not lifted"))
    progress.update("/episode/events", event(ABORT, 1, reason="step 1 failed"))
    out = progress.as_dict(2_500_000_000)
    assert out["timestamp"] == {"sec": 2, "nsec": 500_000_000}
    assert [(s["state"], s["verdict"]) for s in out["steps"]] == [("succeeded", "pass"), ("failed", "FAIL")]
    assert out["steps"][1]["reason"] == "not lifted" and out["aborted"] == "step 1 failed"
    assert not progress.update("/episode/events", event(STEP_STARTED, 7))  # no such step


def test_without_a_subscriber_the_view_sends_no_stream_only_what_it_latches():
    """Nothing is converted for a channel nobody subscribes to; the latched and the plan's inputs
    are sent (kept for the next client) as they are published; a topic the view does not show is
    not looked at."""
    pytest.importorskip("foxglove", reason="the live view needs foxglove-sdk (requirements.txt)")
    from galley_runtime.view.live import LiveView

    view = LiveView()
    try:
        host = EmbeddedHost()
        view.attach(host)
        node = host.participant("talker")
        for topic, type_name in (
            ("/scan", "sensor_msgs/msg/LaserScan"),
            ("/odom", "nav_msgs/msg/Odometry"),
            ("/imu/data", "sensor_msgs/msg/Imu"),
            ("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray"),
        ):
            node.create_publisher(topic, type_name, QoS()).publish(messages.new(type_name))
        assert view.stats.sent == {} and view.stats.queued == 0
        plan = messages.new("galley_msgs/msg/TaskPlan", instruction="x", steps=["move to x"])
        node.create_publisher("/task/plan", "galley_msgs/msg/TaskPlan", QoS()).publish(plan)
        assert view.stats.sent == {"/task/plan": 1, "/view/plan": 1}  # on the publisher's call
        assert view._channels["/view/plan"].last["steps"][0]["step"] == "move to x"
    finally:
        view.close()
