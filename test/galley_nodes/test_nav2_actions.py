"""Nav2's actions in the embedded host: compute_path_to_pose, follow_path and navigate_to_pose driven as
a client would drive them, with the unicycle base standing in for the robot."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from galley_core.geometry import Pose2D, Transform, quaternion_from_yaw
from galley_core.navigation.grid import OccupancyGrid, save_map_yaml
from galley_nodes.nodes.diff_drive_controller import DiffDriveControllerNode
from galley_nodes.nodes.global_planner import GlobalPlannerNode
from galley_nodes.nodes.map_server import MapServerNode
from galley_nodes.nodes.navigator import NavigatorNode
from galley_nodes.nodes.unicycle_base import UnicycleBaseNode
from galley_runtime import messages
from galley_runtime.action_definitions import error_codes
from galley_runtime.actions import STATUS_ABORTED, STATUS_CANCELED, STATUS_SUCCEEDED, ClientGoal
from galley_runtime.conversions import transform_stamped_msg
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.node import Calls, Node
from galley_runtime.qos import QoS

PLAN, FOLLOW, NAVIGATE = (
    f"nav2_msgs/action/{n}" for n in ("ComputePathToPose", "FollowPath", "NavigateToPose")
)
PLAN_CODES, FOLLOW_CODES = error_codes(PLAN), error_codes(FOLLOW)
START = Pose2D(1.2, 1.2, 0.0)


def grid() -> OccupancyGrid:
    """A 6 x 5 m room with a counter, an island and a walled-in box whose inside no path reaches."""
    data = np.zeros((100, 120), dtype=np.int8)
    data[:2, :] = data[-2:, :] = data[:, :2] = data[:, -2:] = 100
    data[2:14, 2:80] = 100  # counter
    data[40:56, 50:80] = 100  # island
    data[16:44, 84:114] = 100  # the box: walls two cells thick around a free inside
    data[18:42, 86:112] = 0
    return OccupancyGrid(data, 0.05)


BOX_INSIDE = (4.95, 1.5)  # free, but walled in
ISLAND = (3.2, 2.4)


class Client(Node):
    """A test node that calls the three actions."""

    name = "nav2_client"
    calls = (
        Calls("compute_path_to_pose", PLAN),
        Calls("follow_path", FOLLOW),
        Calls("navigate_to_pose", NAVIGATE),
    )


class Graph:
    def __init__(self, tmp_path: Any, *, with_map: bool = True, base: bool = True, **controller: Any) -> None:
        self.yaml = tmp_path / "room.yaml"
        save_map_yaml(grid(), self.yaml)
        self.host = EmbeddedHost()
        self.tool = self.host.participant("test_tool")
        self.tool.send_transforms(
            [transform_stamped_msg(Transform.identity(), "map", "odom", 0)], static=True
        )
        if with_map:
            self.add_map()
        self.planner = self.host.add_node(GlobalPlannerNode, parameters={"clearance_m": 0.3})
        self.controller = self.host.add_node(DiffDriveControllerNode, parameters=controller)
        self.navigator = self.host.add_node(NavigatorNode)
        if base:
            self.base = self.host.add_node(
                UnicycleBaseNode,
                parameters={"initial_x_m": START.x, "initial_y_m": START.y, "initial_yaw_rad": START.theta},
            )
        self.client = self.host.add_node(Client)
        self.feedback: list[Any] = []
        self.host.run_for(0.1)

    def add_map(self) -> None:
        self.host.add_node(MapServerNode, parameters={"yaml_filename": str(self.yaml)})

    def send(self, action: str, **goal: Any) -> ClientGoal:
        type_name = {"compute_path_to_pose": PLAN, "follow_path": FOLLOW, "navigate_to_pose": NAVIGATE}[
            action
        ]
        msg = self.client.msg(f"{type_name}_Goal", **goal)
        return self.client.send_goal(action, msg, feedback=lambda g, f: self.feedback.append((g, f)))

    def run_until_done(self, goal: ClientGoal, timeout_s: float) -> float:
        """Run until ``goal`` is done; returns the simulated seconds it took."""
        t0 = self.host.now_s
        assert self.host.run_until(lambda: goal.done, timeout_s), f"goal not done within {timeout_s} s"
        return self.host.now_s - t0


def pose(x: float, y: float, yaw: float = 0.0) -> dict[str, Any]:
    q = quaternion_from_yaw(yaw)
    return {
        "header": {"frame_id": "map"},
        "pose": {"position": {"x": x, "y": y}, "orientation": dict(zip("xyzw", q.tolist(), strict=True))},
    }


def test_compute_path_to_pose_succeeds_with_a_path_and_answers_failures_with_nav2_codes(tmp_path):
    g = Graph(tmp_path)
    ok = g.send("compute_path_to_pose", goal=pose(4.5, 4.0))
    assert g.run_until_done(ok, 1.0) < 1.0
    assert ok.status == STATUS_SUCCEEDED and ok.result.error_code == PLAN_CODES["NONE"] == 0
    poses = ok.result.path.poses
    assert ok.result.path.header.frame_id == "map" and len(poses) >= 2
    assert math.hypot(poses[0].pose.position.x - START.x, poses[0].pose.position.y - START.y) < 0.05
    assert math.hypot(poses[-1].pose.position.x - 4.5, poses[-1].pose.position.y - 4.0) < 0.05
    cases = [
        ({"goal": pose(*BOX_INSIDE)}, "NO_VALID_PATH", "no path"),
        ({"goal": pose(*ISLAND)}, "GOAL_OCCUPIED", "obstacle"),
        ({"goal": pose(4.5, 4.0), "start": pose(*ISLAND), "use_start": True}, "START_OCCUPIED", "start"),
        ({"goal": pose(9.0, 1.0)}, "GOAL_OUTSIDE_MAP", "outside the map"),
        ({"goal": pose(4.5, 4.0), "planner_id": "SmacPlanner"}, "INVALID_PLANNER", "SmacPlanner"),
    ]
    for goal, code, words in cases:
        answer = g.send("compute_path_to_pose", **goal)
        assert g.run_until_done(answer, 1.0) < 1.0, code
        assert answer.status == STATUS_ABORTED, code
        assert answer.result.error_code == PLAN_CODES[code] and words in answer.result.error_msg, (
            code,
            answer.result.error_msg,
        )


def test_a_goal_sent_before_the_map_waits_for_it_or_times_out(tmp_path):
    g = Graph(tmp_path, with_map=False)
    waiting = g.send("compute_path_to_pose", goal=pose(4.5, 4.0))
    g.host.run_for(1.0)
    assert waiting.accepted and not waiting.done
    g.add_map()
    assert g.run_until_done(waiting, 0.5) < 0.5 and waiting.status == STATUS_SUCCEEDED

    g = Graph(tmp_path / "..", with_map=False)
    late = g.send("compute_path_to_pose", goal=pose(4.5, 4.0))
    g.run_until_done(late, 6.0)
    assert late.status == STATUS_ABORTED and late.result.error_code == PLAN_CODES["TIMEOUT"]
    assert "no map" in late.result.error_msg
    canceled = g.send("compute_path_to_pose", goal=pose(4.5, 4.0))
    g.host.run_for(0.2)
    canceled.cancel()
    assert g.run_until_done(canceled, 0.1) <= 0.1 and canceled.status == STATUS_CANCELED


def plan_to(g: Graph, x: float, y: float, yaw: float = 0.0, **start: Any) -> Any:
    answer = g.send("compute_path_to_pose", goal=pose(x, y, yaw), **start)
    g.run_until_done(answer, 1.0)
    assert answer.status == STATUS_SUCCEEDED, answer.result.error_msg
    return answer.result.path


def test_follow_path_reaches_the_goal_with_feedback(tmp_path):
    g = Graph(tmp_path)
    goal = g.send("follow_path", path=plan_to(g, 3.0, 1.2, math.pi / 2))
    g.run_until_done(goal, 60.0)
    assert goal.status == STATUS_SUCCEEDED and goal.result.error_code == 0
    assert math.hypot(g.base.pose.x - 3.0, g.base.pose.y - 1.2) <= 0.09
    distances = [f.distance_to_goal for _, f in g.feedback]
    assert len(distances) > 50 and distances[0] > 1.6 and distances[-1] < 0.2
    assert max(f.speed for _, f in g.feedback) > 0.15  # the base's odometry at cruising speed
    g.host.run_for(0.5)
    assert g.base._cmd == (0.0, 0.0)


def test_cancel_stops_the_base_within_one_control_period(tmp_path):
    g = Graph(tmp_path)
    goal = g.send("follow_path", path=plan_to(g, 4.5, 4.0))
    g.host.run_for(8.0)
    assert g.base._cmd[0] > 0.1
    goal.cancel()
    assert g.run_until_done(goal, 0.1) <= 0.1
    assert goal.status == STATUS_CANCELED and g.base._cmd == (0.0, 0.0)
    x, y = g.base.pose.x, g.base.pose.y
    g.host.run_for(1.0)
    assert math.hypot(g.base.pose.x - x, g.base.pose.y - y) < 1e-6


def test_a_new_path_preempts_the_one_being_followed(tmp_path):
    g = Graph(tmp_path)
    first = g.send("follow_path", path=plan_to(g, 4.5, 4.0))
    g.host.run_for(3.0)
    second = g.send("follow_path", path=plan_to(g, 3.0, 1.2))
    g.run_until_done(first, 0.1)
    assert first.status == STATUS_ABORTED and "preempted" in first.result.error_msg
    g.run_until_done(second, 60.0)
    assert second.status == STATUS_SUCCEEDED
    assert math.hypot(g.base.pose.x - 3.0, g.base.pose.y - 1.2) <= 0.09


def test_a_stale_pose_and_a_blocked_path_abort_with_nav2_codes(tmp_path):
    g = Graph(tmp_path, base=False, use_tf=False, progress_timeout_s=2.0)
    odom = g.tool.create_publisher("/odom", "nav_msgs/msg/Odometry", g.controller.subscribes[1].qos)

    def publish_odom() -> None:
        odom.publish(
            messages.new(
                "nav_msgs/msg/Odometry",
                header={"stamp": messages.time_msg(g.host.time_ns), "frame_id": "odom"},
                pose={"pose": {"position": {"x": START.x, "y": START.y}}},
            )
        )

    publish_odom()  # once: the pose goes stale after odom_timeout_s
    path = plan_to(g, 3.0, 1.2, start=pose(START.x, START.y), use_start=True)  # no TF without a base
    stale = g.send("follow_path", path=path)
    g.run_until_done(stale, 1.0)
    assert stale.status == STATUS_ABORTED and stale.result.error_code == FOLLOW_CODES["TF_ERROR"]
    assert "old" in stale.result.error_msg

    g.tool.create_timer(0.05, publish_odom)  # fresh, but the robot never moves: something blocks it
    blocked = g.send("follow_path", path=path)
    took = g.run_until_done(blocked, 5.0)
    assert blocked.status == STATUS_ABORTED, blocked.result.error_msg
    assert blocked.result.error_code == FOLLOW_CODES["FAILED_TO_MAKE_PROGRESS"] and 2.0 < took < 2.5
    empty = g.send("follow_path", path={"header": {"frame_id": "map"}})
    g.run_until_done(empty, 0.1)
    assert empty.result.error_code == FOLLOW_CODES["INVALID_PATH"]


def test_navigate_to_pose_plans_follows_and_reports_progress(tmp_path):
    g = Graph(tmp_path)
    shown: list[Any] = []
    g.tool.create_subscription("/plan", "nav_msgs/msg/Path", shown.append, QoS(depth=10))
    goal = g.send("navigate_to_pose", pose=pose(3.0, 1.2, math.pi / 2))
    g.run_until_done(goal, 60.0)
    assert goal.status == STATUS_SUCCEEDED and goal.result.error_code == 0
    # The computed path is shown on /plan (rviz, bags), as Nav2's planner_server does, and the
    # controller does not take its own goal's path on /plan for a preemption.
    assert len(shown) == 1 and shown[0].poses[-1].pose.position.x == pytest.approx(3.0)
    assert math.hypot(g.base.pose.x - 3.0, g.base.pose.y - 1.2) <= 0.09
    feedback = [f for h, f in g.feedback if h is goal]
    assert len(feedback) > 50
    first, last = feedback[0], feedback[-1]
    assert first.distance_remaining > 1.6 and last.distance_remaining < 0.2
    assert last.navigation_time.sec >= 10 and last.current_pose.header.frame_id == "map"
    assert abs(last.current_pose.pose.position.x - g.base.pose.x) < 0.05
    assert any(f.estimated_time_remaining.sec > 0 for f in feedback)


def test_navigate_to_pose_cancel_preemption_and_failures(tmp_path):
    g = Graph(tmp_path)
    first = g.send("navigate_to_pose", pose=pose(4.5, 4.0))
    g.host.run_for(8.0)
    second = g.send("navigate_to_pose", pose=pose(3.0, 1.2))
    g.run_until_done(first, 0.1)
    assert first.status == STATUS_ABORTED and "preempted" in first.result.error_msg
    g.host.run_for(3.0)
    assert not second.done
    second.cancel()
    assert g.run_until_done(second, 0.1) <= 0.1
    assert second.status == STATUS_CANCELED and g.base._cmd == (0.0, 0.0)

    unreachable = g.send("navigate_to_pose", pose=pose(*BOX_INSIDE))
    assert g.run_until_done(unreachable, 1.0) < 1.0
    assert unreachable.status == STATUS_ABORTED
    assert unreachable.result.error_code == PLAN_CODES["NO_VALID_PATH"]
    assert "no path" in unreachable.result.error_msg  # the planner's own message

    tree = g.send("navigate_to_pose", pose=pose(3.0, 1.2), behavior_tree="navigate_w_replanning.xml")
    g.run_until_done(tree, 0.1)
    assert tree.accepted is False and "behaviour trees" in tree.reason


def test_a_goal_for_an_action_nobody_serves_is_rejected_with_the_reason(tmp_path):
    host = EmbeddedHost()
    client = host.add_node(Client)
    goal = client.send_goal("follow_path", client.msg(f"{FOLLOW}_Goal"))
    assert goal.accepted is None  # answered from the host's loop, not inside send_goal
    host.run_for(0.01)
    assert goal.accepted is False and "no action server" in goal.reason


@pytest.mark.parametrize("action", ["compute_path_to_pose", "follow_path", "navigate_to_pose"])
def test_status_and_feedback_topics_are_those_of_a_ros2_action_server(tmp_path, action):
    g = Graph(tmp_path)
    topics = dict(g.host.bus.topic_names_and_types())
    assert topics[f"/{action}/_action/status"] == ["action_msgs/msg/GoalStatusArray"]
    type_name = {"compute_path_to_pose": PLAN, "follow_path": FOLLOW, "navigate_to_pose": NAVIGATE}[action]
    assert topics[f"/{action}/_action/feedback"] == [f"{type_name}_FeedbackMessage"]
