"""Navigation closed loop in the MuJoCo kitchen: Theta* plans, Kitchen-R's controller drives the base."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from galley_core.episode import Episode
from galley_core.geometry import Pose2D, normalize_angle
from galley_core.scene import load_scene
from galley_nodes.registry import load_node_class
from galley_runtime import messages
from galley_runtime.conversions import pose_msg
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS

SUCCEEDED, FAILED = 2, 3


def test_the_base_reaches_zones_across_the_kitchen_without_touching_anything(repo, tmp_path):
    scene = load_scene(repo / "config" / "scenes" / "kitchen.yaml")
    episode = tmp_path / "episode.json"
    episode.write_text(json.dumps(Episode("kitchen", 0, Pose2D(-1.0, 0.8, 0.3), (), {}).to_dict()))
    host = EmbeddedHost([repo / "config" / "galley.yaml"])
    sim = host.add_node(
        load_node_class("sim"), parameters={"episode_file": str(episode), "cameras_enabled": False}
    )
    host.add_node(
        load_node_class("map_server"), parameters={"yaml_filename": str(repo / "maps" / "kitchen.yaml")}
    )
    host.add_node(load_node_class("global_planner"))
    host.add_node(load_node_class("diff_drive_controller"), parameters={"use_tf": True})
    status: list[Any] = []
    contacts: list[Any] = []
    probe = host.participant("tour")
    probe.create_subscription(
        "/navigation/status", "galley_msgs/msg/ActionStatus", status.append, QoS.latched(10)
    )
    probe.create_subscription("/sim/contacts", "galley_msgs/msg/Contacts", contacts.append, QoS(depth=100))
    goals = probe.create_publisher("/goal_pose", "geometry_msgs/msg/PoseStamped", QoS())
    host.run_for(1.0)
    for zone in ("blue", "red", "purple"):  # table, counter, side counter: across the room
        x, y, yaw = scene.zone(zone).approach
        status.clear()
        goals.publish(
            messages.new(
                "geometry_msgs/msg/PoseStamped",
                header={"frame_id": "map", "stamp": messages.time_msg(host.time_ns)},
                pose=pose_msg(Pose2D(x, y, yaw)),
            )
        )
        assert host.run_until(lambda: any(m.state in (SUCCEEDED, FAILED) for m in status), 120.0), zone
        assert status[-1].state == SUCCEEDED, f"{zone}: {status[-1].reason}"
        truth = sim.sim.base_pose()
        assert math.hypot(truth.x - x, truth.y - y) <= 0.09, zone
        assert abs(normalize_angle(truth.theta - yaw)) < 0.1, zone
    touched = {(r, o) for m in contacts for r, o in zip(m.robot_geoms, m.obstacle_geoms, strict=True)}
    assert not touched, f"the robot touched {sorted(touched)}"


@pytest.mark.parametrize("zone", ["red", "green", "blue", "yellow", "purple"])
def test_every_approach_pose_is_free_of_the_planning_clearance(repo, zone):
    from galley_core.navigation.grid import load_map_yaml
    from galley_core.navigation.theta_star import ThetaStar, ThetaStarConfig

    scene = load_scene(repo / "config" / "scenes" / "kitchen.yaml")
    planner = ThetaStar(
        grid=load_map_yaml(repo / "maps" / "kitchen.yaml"), config=ThetaStarConfig(clearance_m=0.4)
    )
    x, y, _ = scene.zone(zone).approach
    result = planner.plan((-1.0, 0.8), (x, y))
    assert result.ok, result.reason
