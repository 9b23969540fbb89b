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
    out = convert.laser_scan(scan)
    assert out["ranges"] == [1.0, 0.0, 0.0, 2.5]
    assert out["end_angle"] == pytest.approx(np.pi / 2)
    json.loads(json.dumps(out, allow_nan=False))


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
