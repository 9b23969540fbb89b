"""How the task executor drives the base to a move step's goal: Nav2's navigate_to_pose, or /goal_pose.

With ``navigate_to_pose`` (the oracle stack's default) a move step is one goal of the navigator's
action: its result ends the step (the executor then judges it on ground truth), and
:meth:`BaseMover.stop` cancels it when the step ends otherwise (its time limit, the monitor's
abort), which stops the base. With ``goal_pose`` the goal goes out on /goal_pose, as rviz2's
"2D Goal Pose" sends it, and the step ends on /navigation/status or /planner/status; a learned
policy, which follows /goal_pose itself, uses that. Where the action's package is not installed
(ROS 2 without nav2_msgs) the mover falls back to /goal_pose and says so once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from galley_runtime.actions import STATUS_CANCELED, STATUS_SUCCEEDED, ClientGoal
from galley_runtime.node import Calls, Node

__all__ = ["NAVIGATE", "NAVIGATE_CALL", "BaseMover"]

NAVIGATE = "nav2_msgs/action/NavigateToPose"
NAVIGATE_CALL = Calls("navigate_to_pose", NAVIGATE)
#: Nav2 gives each server a range of error codes: ComputePathToPose's are 200 to 299.
_PLANNER_CODES = range(200, 300)


class BaseMover:
    """Sends a move step's goal and reports its end as ``on_end(success, reason)``.

    Args:
        node: the executor; it declares :data:`NAVIGATE_CALL` and publishes ``goal_pose``.
        use_action: drive through navigate_to_pose (else /goal_pose).
        on_end: called once per goal sent through the action, when it ends; never for /goal_pose
            (the executor follows the status topics then).
    """

    def __init__(self, node: Node, *, use_action: bool, on_end: Callable[[bool, str], None]) -> None:
        self._node = node
        self._on_end = on_end
        self.use_action = use_action and node.can_send_goal(NAVIGATE_CALL.action)
        if use_action and not self.use_action:
            node.log.warning("navigate_to_pose is not available here: move steps go out on /goal_pose")
        self._goal: ClientGoal | None = None

    def start(self, pose: Any) -> None:
        """Drive to ``pose`` (``geometry_msgs/msg/PoseStamped``), ending any goal still in flight."""
        self.stop()
        if not self.use_action:
            self._node.publish("goal_pose", pose)
            return
        goal = self._node.msg(f"{NAVIGATE}_Goal", pose=pose)
        self._goal = self._node.send_goal(NAVIGATE_CALL.action, goal, done=self._done)

    def stop(self) -> None:
        """Cancel the goal in flight, if any (its end is not reported)."""
        goal, self._goal = self._goal, None
        if goal is not None:
            goal.cancel()

    def _done(self, goal: ClientGoal) -> None:
        if goal is not self._goal:
            return  # stopped: the step has ended already
        self._goal = None
        if goal.status == STATUS_SUCCEEDED:
            self._on_end(True, "")
        elif goal.accepted is False:
            self._on_end(False, f"navigate_to_pose rejected the goal: {goal.reason}")
        elif goal.status == STATUS_CANCELED:
            self._on_end(False, "navigate_to_pose was canceled by another client")
        else:
            code, message = int(goal.result.error_code), str(goal.result.error_msg)
            self._on_end(False, f"no path: {message}" if code in _PLANNER_CODES else message)
