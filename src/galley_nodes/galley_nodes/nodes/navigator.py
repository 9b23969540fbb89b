"""``navigator``: Nav2's ``navigate_to_pose`` action, served by composing galley's planner and controller.

Serves ``navigate_to_pose`` (``nav2_msgs/action/NavigateToPose``), what rviz2's "Nav2 Goal" tool
and Nav2's ``BasicNavigator.goToPose`` send. For each goal it calls ``compute_path_to_pose``
(from the robot's pose, TF ``map_frame -> robot_frame``) and then ``follow_path`` with the path,
like Nav2's default behaviour tree without its replanning and recoveries. Either server may be
galley's (global_planner, diff_drive_controller) or Nav2's (planner_server, controller_server).

Feedback comes with each of follow_path's: ``current_pose`` (from TF; empty until there is one),
``navigation_time``, ``distance_remaining`` (the controller's distance to goal) and
``estimated_time_remaining`` (distance over speed; zero while the base does not move). The result's
``error_code`` and ``error_msg`` are the failing server's (Nav2's ComputePathToPose codes 200-299 or
FollowPath codes 100-199, as Nav2's navigator reports them). A goal naming a ``behavior_tree`` is
rejected (galley runs none); a new goal preempts the one being navigated (which aborts); cancel
cancels the planner's or controller's goal and ends CANCELED once it has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from galley_core.config import Config, param
from galley_core.tf_tree import TransformError
from galley_runtime import messages
from galley_runtime.action_definitions import error_codes
from galley_runtime.actions import STATUS_CANCELED, STATUS_SUCCEEDED, ClientGoal, status_name
from galley_runtime.node import Calls, Node, ServerGoal, Serves

_NAVIGATE = "nav2_msgs/action/NavigateToPose"
_PLAN = "nav2_msgs/action/ComputePathToPose"
_FOLLOW = "nav2_msgs/action/FollowPath"
#: NavigateToPose's own codes (Jazzy has NONE only; failures carry the planner's or controller's).
CODES = error_codes(_NAVIGATE)
_UNKNOWN = error_codes(_PLAN)["UNKNOWN"]


@dataclass(frozen=True)
class NavigatorConfig(Config):
    map_frame: str = param("map", "frame of the goals and of current_pose in the feedback")
    robot_frame: str = param("base_link", "frame of the robot base")


class NavigatorNode(Node):
    name = "navigator"
    Config = NavigatorConfig
    serves = (Serves("navigate_to_pose", _NAVIGATE, goal="on_navigate", cancel="on_navigate_cancel"),)
    calls = (Calls("compute_path_to_pose", _PLAN), Calls("follow_path", _FOLLOW))
    uses_tf = True

    def __init__(self, host: Any, config: NavigatorConfig) -> None:
        super().__init__(host, config)
        self._goal: ServerGoal | None = None
        self._child: ClientGoal | None = None  # the planner's or controller's goal in flight

    def on_navigate(self, handle: ServerGoal) -> str | None:
        if handle.request.behavior_tree:
            return (
                f"behavior_tree {handle.request.behavior_tree!r}: galley's navigator runs no behaviour "
                "trees; leave it empty"
            )
        if self._goal is not None:
            previous = self._goal
            self._release()
            self._abort(previous, _UNKNOWN, "preempted by a new navigate_to_pose goal")
        self._goal = handle
        goal = self.msg(f"{_PLAN}_Goal", goal=handle.request.pose, use_start=False)
        self._child = self.send_goal("compute_path_to_pose", goal, done=self._planned)
        return None

    def on_navigate_cancel(self, handle: ServerGoal) -> None:
        if handle is not self._goal or self._child is None:
            self._finish(handle, "canceled")
            return
        self._child.cancel()  # ends CANCELED when the child does (_planned / _followed)

    # -- children ------------------------------------------------------------------------------

    def _planned(self, child: ClientGoal) -> None:
        goal = self._goal
        if child is not self._child or goal is None:
            return  # a preempted goal's planner answer
        if child.status != STATUS_SUCCEEDED or goal.cancel_requested:
            self._child_failed(goal, child, "compute_path_to_pose")
            return
        follow = self.msg(f"{_FOLLOW}_Goal", path=child.result.path)
        self._child = self.send_goal("follow_path", follow, feedback=self._following, done=self._followed)

    def _following(self, child: ClientGoal, feedback: Any) -> None:
        goal = self._goal
        if child is not self._child or goal is None:
            return
        now = self.now_ns()
        distance, speed = float(feedback.distance_to_goal), float(feedback.speed)
        remaining = distance / speed if speed > 0.01 else 0.0
        fields: dict[str, Any] = {
            "navigation_time": messages.duration_msg(max(0, now - goal.accepted_ns)),
            "estimated_time_remaining": messages.duration_msg(round(remaining * 1e9)),
            "distance_remaining": distance,
        }
        try:
            tf = self.lookup_transform(self.config.map_frame, self.config.robot_frame)
        except TransformError:
            pass
        else:
            t = tf.transform
            fields["current_pose"] = {
                "header": {"stamp": tf.header.stamp, "frame_id": self.config.map_frame},
                "pose": {
                    "position": {"x": t.translation.x, "y": t.translation.y, "z": t.translation.z},
                    "orientation": t.rotation,
                },
            }
        goal.publish_feedback(self.msg(f"{_NAVIGATE}_Feedback", **fields))

    def _followed(self, child: ClientGoal) -> None:
        goal = self._goal
        if child is not self._child or goal is None:
            return
        if child.status == STATUS_SUCCEEDED and not goal.cancel_requested:
            self._release()
            goal.succeed(self.msg(f"{_NAVIGATE}_Result", error_code=CODES["NONE"]))
            return
        self._child_failed(goal, child, "follow_path")

    def _child_failed(self, goal: ServerGoal, child: ClientGoal, action: str) -> None:
        self._release()
        if goal.cancel_requested:
            self._finish(goal, "canceled")
        elif child.status == STATUS_CANCELED:
            self._abort(goal, _UNKNOWN, f"{action} was canceled by another client")
        elif child.accepted is False:
            self._abort(goal, _UNKNOWN, f"{action} rejected the goal: {child.reason}")
        else:
            code = int(child.result.error_code) if child.result is not None else _UNKNOWN
            message = child.result.error_msg if child.result is not None else ""
            self._abort(goal, code, message or f"{action} ended {status_name(child.status)}")

    def _release(self) -> None:
        """Forget the goal being navigated, canceling its child if one is in flight."""
        child, self._child, self._goal = self._child, None, None
        if child is not None:
            child.cancel()

    def _abort(self, handle: ServerGoal, code: int, message: str) -> None:
        self.log.warning(f"navigate_to_pose: error {code}: {message}")
        handle.abort(self.msg(f"{_NAVIGATE}_Result", error_code=code, error_msg=message))

    def _finish(self, handle: ServerGoal, how: str) -> None:
        if handle is self._goal:
            self._release()
        if handle.active and how == "canceled":
            handle.canceled(self.msg(f"{_NAVIGATE}_Result", error_code=CODES["NONE"]))
