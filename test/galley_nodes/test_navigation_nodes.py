"""map_server, global_planner and diff_drive_controller in the embedded host with the unicycle base."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from galley_core.geometry import Pose2D, Transform, normalize_angle, quaternion_from_yaw
from galley_core.navigation.grid import OccupancyGrid, save_map_yaml
from galley_nodes.nodes.diff_drive_controller import DiffDriveControllerNode
from galley_nodes.nodes.global_planner import GlobalPlannerNode
from galley_nodes.nodes.map_server import MapServerNode
from galley_nodes.nodes.unicycle_base import UnicycleBaseNode
from galley_runtime import messages
from galley_runtime.conversions import path_msg, pose_msg, transform_stamped_msg
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS

STATUS = "galley_msgs/msg/ActionStatus"
SUCCEEDED, FAILED, CANCELED = 2, 3, 4


def kitchen_grid() -> OccupancyGrid:
    """A 6 x 5 m kitchen: walls, counters along two walls, an island, a table."""
    data = np.zeros((100, 120), dtype=np.int8)
    data[:2, :] = data[-2:, :] = data[:, :2] = data[:, -2:] = 100
    data[2:14, 2:80] = 100  # counter along the bottom wall
    data[40:100, 2:14] = 100  # counter along the left wall
    data[40:56, 50:80] = 100  # island
    data[70:84, 90:104] = 100  # table
    data[96:98, 60:118] = -1  # an unseen strip by the top wall
    return OccupancyGrid(data, 0.05)


@pytest.fixture
def kitchen_yaml(tmp_path):
    path = tmp_path / "maps" / "kitchen.yaml"
    path.parent.mkdir()
    save_map_yaml(kitchen_grid(), path)
    return path


class Graph:
    """The navigation graph in one embedded host, with a participant that sends goals and listens."""

    def __init__(self, yaml_path: Any, start: Pose2D, *, controller: dict | None = None) -> None:
        self.host = EmbeddedHost()
        self.tool = self.host.participant("test_tool")
        self.planner_status: list[Any] = []
        self.nav_status: list[Any] = []
        self.plans: list[Any] = []
        self.inflated: list[Any] = []
        self.tool.create_subscription(
            "/planner/status", STATUS, self.planner_status.append, QoS.latched(depth=10)
        )
        self.tool.create_subscription("/navigation/status", STATUS, self.nav_status.append, QoS.latched())
        self.tool.create_subscription("/plan", "nav_msgs/msg/Path", self.plans.append, QoS())
        self.tool.create_subscription(
            "/planner/inflated_map", "nav_msgs/msg/OccupancyGrid", self.inflated.append, QoS.latched()
        )
        self.goals = self.tool.create_publisher("/goal_pose", "geometry_msgs/msg/PoseStamped", QoS())
        self.tool.send_transforms(
            [transform_stamped_msg(Transform.identity(), "map", "odom", 0)], static=True
        )
        self.map_server = self.host.add_node(MapServerNode, parameters={"yaml_filename": str(yaml_path)})
        self.planner = self.host.add_node(GlobalPlannerNode, parameters={"clearance_m": 0.3})
        self.controller = self.host.add_node(DiffDriveControllerNode, parameters=controller or {})
        self.base = self.host.add_node(
            UnicycleBaseNode,
            parameters={"initial_x_m": start.x, "initial_y_m": start.y, "initial_yaw_rad": start.theta},
        )
        self.host.run_for(0.1)

    def send_goal(self, x: float, y: float, yaw: float, frame: str = "map") -> None:
        q = quaternion_from_yaw(yaw)
        self.goals.publish(
            messages.new(
                "geometry_msgs/msg/PoseStamped",
                header={"stamp": messages.time_msg(self.host.time_ns), "frame_id": frame},
                pose={
                    "position": {"x": x, "y": y},
                    "orientation": dict(zip("xyzw", q.tolist(), strict=True)),
                },
            )
        )

    def navigate(self, goal: tuple[float, float, float], timeout_s: float = 150.0) -> Any:
        seen = len(self.nav_status)
        self.send_goal(*goal)
        done = self.host.run_until(
            lambda: (
                any(s.state in (SUCCEEDED, FAILED, CANCELED) for s in self.nav_status[seen:])
                or (self.planner_status and self.planner_status[-1].state == FAILED)
            ),
            timeout_s,
        )
        assert done, f"no result within {timeout_s} s"
        assert self.planner_status[-1].state == SUCCEEDED, self.planner_status[-1].reason
        return self.nav_status[-1]


GOALS = [
    (4.8, 1.5, math.pi / 2),
    (1.5, 4.3, math.pi),
    (5.45, 4.4, -math.pi / 2),
    (3.2, 3.3, 0.3),
    (1.2, 1.2, -2.0),
]


@pytest.mark.parametrize("use_tf", [False, True])
def test_goals_across_the_kitchen_are_reached_within_9_cm_and_0_1_rad(kitchen_yaml, use_tf):
    graph = Graph(kitchen_yaml, Pose2D(1.2, 1.2, 0.0), controller={"use_tf": use_tf})
    assert graph.inflated and graph.inflated[-1].info.width == 120
    cells = np.asarray(graph.inflated[-1].data)
    assert (cells == 99).sum() > 0 and (cells == 100).sum() == (kitchen_grid().data != 0).sum()
    goals = GOALS if not use_tf else GOALS[:2]
    for goal in goals:
        status = graph.navigate(goal)
        assert status.state == SUCCEEDED, status.reason
        pose = graph.base.pose
        assert math.hypot(pose.x - goal[0], pose.y - goal[1]) <= 0.09, (goal, pose)
        assert abs(normalize_angle(pose.theta - goal[2])) < 0.1, (goal, pose)
        plan = graph.plans[-1]
        assert 2 <= len(plan.poses) <= 100 and plan.header.frame_id == "map"
    # The base stopped: the controller sent one zero command and nothing since.
    graph.host.run_for(1.0)
    assert graph.base._cmd == (0.0, 0.0)
    graph.host.shutdown()


def test_bad_goals_fail_with_reasons_and_the_nodes_keep_running(kitchen_yaml):
    graph = Graph(kitchen_yaml, Pose2D(1.2, 1.2, 0.0))
    cases = [
        ((math.nan, 1.0, 0.0, "map"), "NaN"),
        ((0.3, 3.0, 0.0, "map"), "goal (0.30, 3.00) is in an obstacle"),
        ((9.0, 1.0, 0.0, "map"), "outside the map"),
        ((3.0, 4.55, 0.0, "map"), "inside the clearance"),
        ((3.0, 4.86, 0.0, "map"), "an unknown cell"),
        ((1.0, 1.0, 0.0, "kitchen"), "frame 'kitchen'"),
    ]
    for (x, y, yaw, frame), words in cases:
        graph.send_goal(x, y, yaw, frame)
        graph.host.run_for(0.1)
        status = graph.planner_status[-1]
        assert status.state == FAILED and words in status.reason, status.reason
    assert graph.planner_status[-2].state == 1  # ACTIVE precedes each result
    assert not graph.plans
    assert graph.navigate((4.8, 1.5, 0.0)).state == SUCCEEDED  # still works


def test_map_server_reports_bad_files_and_loads_a_new_one(tmp_path, kitchen_yaml):
    bad = tmp_path / "bad.yaml"
    bad.write_text("image: nowhere.pgm\nresolution: 0.05\norigin: [0, 0, 0]\n")
    host = EmbeddedHost()
    maps: list[Any] = []
    host.participant("t").create_subscription(
        "/map", "nav_msgs/msg/OccupancyGrid", maps.append, QoS.latched()
    )
    server = host.add_node(MapServerNode, parameters={"yaml_filename": str(bad)})
    host.run_for(0.1)
    assert not maps and "nowhere.pgm" in server.error
    planner = host.add_node(GlobalPlannerNode)
    status: list[Any] = []
    host.participant("u").create_subscription("/planner/status", STATUS, status.append, QoS.latched())
    tool = host.participant("v")
    tool.send_transforms([transform_stamped_msg(Transform.identity(), "map", "base_link", 0)], static=True)
    goal = messages.new(
        "geometry_msgs/msg/PoseStamped", header={"frame_id": "map"}, pose=pose_msg(Pose2D(1, 1))
    )
    tool.create_publisher("/goal_pose", "geometry_msgs/msg/PoseStamped", QoS()).publish(goal)
    host.run_for(0.1)
    assert status[-1].state == FAILED and "no map received" in status[-1].reason
    host.set_parameters("map_server", {"yaml_filename": str(kitchen_yaml)})
    host.run_for(0.1)
    assert len(maps) == 1 and maps[0].info.width == 120 and server.error == ""
    assert planner.planner is not None
    empty = EmbeddedHost().add_node(MapServerNode)
    assert "yaml_filename" in empty.error


def plan_msg(host: EmbeddedHost, points: list[tuple[float, float]], frame: str = "odom") -> Any:
    return path_msg(np.array(points), frame, host.time_ns, 0.0)


def odom_msg(host: EmbeddedHost, pose: Pose2D, stamp_ns: int) -> Any:
    """Odometry at (x, y) facing +x (built field by field so that NaN can be sent)."""
    return messages.new(
        "nav_msgs/msg/Odometry",
        header={"stamp": messages.time_msg(stamp_ns), "frame_id": "odom"},
        child_frame_id="base_link",
        pose={"pose": {"position": {"x": pose.x, "y": pose.y}, "orientation": {"z": 0.0, "w": 1.0}}},
    )


@pytest.fixture
def lone_controller():
    host = EmbeddedHost()
    controller = host.add_node(DiffDriveControllerNode)
    tool = host.participant("tool")
    status: list[Any] = []
    cmds: list[Any] = []
    tool.create_subscription("/navigation/status", STATUS, status.append, QoS.latched())
    tool.create_subscription("/cmd_vel", "geometry_msgs/msg/Twist", cmds.append, QoS(depth=100))
    plans = tool.create_publisher("/plan", "nav_msgs/msg/Path", QoS())
    odom = tool.create_publisher("/odom", "nav_msgs/msg/Odometry", QoS())
    return host, controller, status, cmds, plans, odom


def test_stale_odometry_stops_the_robot_with_a_reason(lone_controller):
    host, _, status, cmds, plans, odom = lone_controller
    odom.publish(odom_msg(host, Pose2D(), 0))
    plans.publish(plan_msg(host, [(0.0, 0.0), (3.0, 0.0)]))
    host.run_for(0.45)
    assert status[-1].state == 1 and cmds[-1].linear.x > 0.0  # odometry 0.4 s old: still fresh
    host.run_for(0.2)
    assert status[-1].state == FAILED
    assert "0.60 s old (> odom_timeout_s = 0.5 s)" in status[-1].reason
    assert cmds[-1].linear.x == 0.0 and cmds[-1].angular.z == 0.0
    n = len(cmds)
    host.run_for(1.0)
    assert len(cmds) == n  # stopped, and quiet afterwards


def test_nan_or_missing_odometry_and_empty_plans(lone_controller):
    host, _, status, cmds, plans, odom = lone_controller
    plans.publish(plan_msg(host, [(0.0, 0.0), (3.0, 0.0)]))
    host.run_for(0.1)
    assert status[-1].state == FAILED and "no odometry received on /odom" in status[-1].reason
    odom.publish(odom_msg(host, Pose2D(math.nan, 0.0, 0.0), host.time_ns))
    plans.publish(plan_msg(host, [(0.0, 0.0), (3.0, 0.0)]))
    host.run_for(0.1)
    assert status[-1].state == FAILED and "NaN" in status[-1].reason
    odom.publish(odom_msg(host, Pose2D(), host.time_ns))
    plans.publish(plan_msg(host, [(0.0, 0.0), (3.0, 0.0)], frame="map"))
    host.run_for(0.1)
    assert status[-1].state == FAILED and "no transform between them" in status[-1].reason
    plans.publish(plan_msg(host, [(0.0, 0.0), (3.0, 0.0)]))
    host.run_for(0.05)
    odom.publish(odom_msg(host, Pose2D(), host.time_ns))
    host.run_for(0.1)
    assert status[-1].state == 1
    plans.publish(messages.new("nav_msgs/msg/Path", header={"frame_id": "odom"}, poses=[]))
    host.run_for(0.1)
    assert status[-1].state == CANCELED and cmds[-1].linear.x == 0.0


def test_the_navigation_params_file_configures_all_three_nodes(repo, kitchen_yaml):
    host = EmbeddedHost(params_files=[repo / "config" / "galley.yaml"])
    server = host.add_node(MapServerNode, parameters={"yaml_filename": str(kitchen_yaml)})
    planner = host.add_node(GlobalPlannerNode)
    controller = host.add_node(DiffDriveControllerNode)
    assert server.grid is not None
    assert planner.config.clearance_m == 0.4 and planner.config.max_waypoints == 100
    assert controller.config.band_speed_limits_mps == (0.12, 0.08, 0.05, 0.03)
    assert controller.config.rate_hz == 10.0 and controller.config.use_tf
