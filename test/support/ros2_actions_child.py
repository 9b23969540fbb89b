"""Actions under real rclpy and DDS: run by test_ros2_actions.py in a process of its own.

It needs nav2_msgs' classes on PYTHONPATH and their libraries on LD_LIBRARY_PATH from the start
(scripts/build_nav2_msgs.py), which is why it is a separate process. The galley navigator runs
as it ships; a scripted planner and controller serve compute_path_to_pose and follow_path through
the ROS 2 host; a client node drives them. Prints one JSON object with what each scenario saw.
"""

from __future__ import annotations

import json
import time
from typing import Any

import rclpy
from rclpy.executors import SingleThreadedExecutor

from galley_nodes.nodes.navigator import NavigatorNode
from galley_runtime.actions import ClientGoal, ServerGoal
from galley_runtime.node import Calls, Node, Serves, Timer
from galley_runtime.ros2.host import create_node

PLAN, FOLLOW, NAVIGATE = (
    f"nav2_msgs/action/{n}" for n in ("ComputePathToPose", "FollowPath", "NavigateToPose")
)
NO_VALID_PATH = 208


class ScriptedPlanner(Node):
    """Answers in its goal method: a two-pose path, or NO_VALID_PATH for goals at negative x."""

    name = "scripted_planner"
    serves = (Serves("compute_path_to_pose", PLAN, goal="on_goal"),)

    def on_goal(self, handle: ServerGoal) -> str | None:
        x = handle.request.goal.pose.position.x
        if x < 0:
            handle.abort(self.msg(f"{PLAN}_Result", error_code=NO_VALID_PATH, error_msg="walled in"))
        else:
            poses = [{"pose": {"position": {"x": px}}} for px in (0.0, x)]
            handle.succeed(self.msg(f"{PLAN}_Result", path={"header": {"frame_id": "map"}, "poses": poses}))
        return None


class ScriptedController(Node):
    """Follows for 10 ticks of 50 ms with feedback; rejects controller_id "reject_me"; cancels at once."""

    name = "scripted_controller"
    serves = (Serves("follow_path", FOLLOW, goal="on_goal", cancel="on_cancel"),)
    timers = (Timer("on_tick", 0.05),)

    def __init__(self, host: Any, config: Any) -> None:
        super().__init__(host, config)
        self.goal: ServerGoal | None = None
        self.ticks = 0

    def on_goal(self, handle: ServerGoal) -> str | None:
        if handle.request.controller_id == "reject_me":
            return "controller_id reject_me is not served here"
        if self.goal is not None and self.goal.active:
            self.goal.abort(self.msg(f"{FOLLOW}_Result", error_msg="preempted by a new follow_path goal"))
        self.goal, self.ticks = handle, 0
        return None

    def on_cancel(self, handle: ServerGoal) -> None:
        handle.canceled(self.msg(f"{FOLLOW}_Result"))

    def on_tick(self) -> None:
        if self.goal is None or not self.goal.active:
            return
        self.ticks += 1
        if self.ticks >= 10:
            self.goal.succeed(self.msg(f"{FOLLOW}_Result"))
            return
        self.goal.publish_feedback(
            self.msg(f"{FOLLOW}_Feedback", distance_to_goal=1.0 - 0.1 * self.ticks, speed=0.2)
        )


class Client(Node):
    name = "nav2_test_client"
    calls = (Calls("follow_path", FOLLOW), Calls("navigate_to_pose", NAVIGATE))


def main() -> None:
    rclpy.init()
    made = [create_node(cls) for cls in (ScriptedPlanner, ScriptedController, NavigatorNode, Client)]
    executor = SingleThreadedExecutor()
    for ros_node, _ in made:
        executor.add_node(ros_node)
    client: Client = made[-1][1]  # type: ignore[assignment]
    feedback: list[tuple[ClientGoal, Any]] = []

    def send(action: str, type_name: str, **fields: Any) -> ClientGoal:
        goal = client.msg(f"{type_name}_Goal", **fields)
        return client.send_goal(action, goal, feedback=lambda g, f: feedback.append((g, f)))

    def spin_until(predicate: Any, timeout_s: float = 10.0) -> bool:
        end = time.monotonic() + timeout_s
        while not predicate() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.02)
        return bool(predicate())

    spin_until(lambda: False, 1.0)  # discovery
    out: dict[str, Any] = {}

    def summary(goal: ClientGoal) -> dict[str, Any]:
        result = goal.result
        return {
            "accepted": goal.accepted,
            "status": goal.status,
            "error_code": int(getattr(result, "error_code", -1)) if result is not None else None,
            "error_msg": getattr(result, "error_msg", "") if result is not None else "",
            "feedback": [
                float(getattr(f, "distance_remaining", getattr(f, "distance_to_goal", -1.0)))
                for g, f in feedback
                if g is goal
            ],
        }

    nav = send(
        "navigate_to_pose", NAVIGATE, pose={"header": {"frame_id": "map"}, "pose": {"position": {"x": 2.0}}}
    )
    spin_until(lambda: nav.done)
    out["navigate"] = summary(nav)
    walled = send("navigate_to_pose", NAVIGATE, pose={"pose": {"position": {"x": -1.0}}})
    spin_until(lambda: walled.done)
    out["navigate_unreachable"] = summary(walled)
    tree = send("navigate_to_pose", NAVIGATE, behavior_tree="custom.xml")
    spin_until(lambda: tree.done)
    out["navigate_behavior_tree"] = summary(tree)

    canceled = send("follow_path", FOLLOW)
    spin_until(lambda: len([g for g, _ in feedback if g is canceled]) >= 2)
    canceled.cancel()
    spin_until(lambda: canceled.done)
    out["follow_cancel"] = summary(canceled)

    first = send("follow_path", FOLLOW)
    spin_until(lambda: first.accepted is not None)
    second = send("follow_path", FOLLOW)
    spin_until(lambda: first.done and second.done)
    out["follow_preempted"], out["follow_preempting"] = summary(first), summary(second)

    rejected = send("follow_path", FOLLOW, controller_id="reject_me")
    spin_until(lambda: rejected.done)
    out["follow_rejected"] = summary(rejected)

    nav_cancel = send("navigate_to_pose", NAVIGATE, pose={"pose": {"position": {"x": 2.0}}})
    spin_until(lambda: len([g for g, _ in feedback if g is nav_cancel]) >= 2)
    nav_cancel.cancel()
    spin_until(lambda: nav_cancel.done)
    out["navigate_cancel"] = summary(nav_cancel)

    print(json.dumps(out))
    executor.shutdown()
    for ros_node, _ in made:
        ros_node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
