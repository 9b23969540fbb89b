"""``global_planner``: Theta* from the robot's pose to each /goal_pose over /map, published on /plan.

Subscribes /map (transient-local) and /goal_pose (``geometry_msgs/msg/PoseStamped``); the start is
the robot's pose from TF (``map_frame -> robot_frame``). Publishes the plan as ``nav_msgs/msg/Path``
on /plan (at most ``max_waypoints`` poses, the last one with the goal's heading), its progress on
/planner/status (``galley_msgs/msg/ActionStatus``: ACTIVE, then SUCCEEDED or FAILED with the
reason) and the map as the planner sees it on /planner/inflated_map: a ``nav_msgs/msg/OccupancyGrid``
(100 obstacle, 99 within the clearance, 0 free), which rviz2 shows as a map layer, chosen over a
Marker because it needs no custom display settings. Planning runs in the goal callback, bounded by
``max_planning_time_s``.

It also serves Nav2's ``compute_path_to_pose`` action (``nav2_msgs/action/ComputePathToPose``, so
that Nav2's navigators can use galley's Theta* and galley's navigator Nav2's planner_server): the
start is the goal's ``start`` with ``use_start``, else the robot's pose from TF; ``planner_id`` is
empty, ``GridBased`` (Nav2's default name) or ``ThetaStar``. Failures abort with Nav2's error codes
(START_OCCUPIED, GOAL_OCCUPIED, START/GOAL_OUTSIDE_MAP, NO_VALID_PATH, TIMEOUT, TF_ERROR,
INVALID_PLANNER) and a message saying what to change. A goal sent before the map arrives waits
for it up to ``map_wait_timeout_s`` of ROS time, then aborts with TIMEOUT; a waiting goal can be
canceled (planning itself takes one callback, so there is nothing else to cancel).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from galley_core.config import param, sub_config
from galley_core.geometry import Pose2D
from galley_core.navigation.theta_star import ThetaStar, ThetaStarConfig
from galley_core.tf_tree import TransformError
from galley_runtime import messages
from galley_runtime.action_definitions import error_codes
from galley_runtime.conversions import (
    occupancy_grid_from_msg,
    occupancy_grid_msg,
    path_msg,
    pose2d_from_pose_msg,
)
from galley_runtime.msg_constants import ACTION_ACTIVE, ACTION_FAILED, ACTION_SUCCEEDED
from galley_runtime.node import Node, Publishes, ServerGoal, Serves, Subscribes
from galley_runtime.qos import QoS


@dataclass(frozen=True)
class GlobalPlannerConfig(ThetaStarConfig):
    map_frame: str = param("map", "frame of the map, the goals and the plan")
    robot_frame: str = param("base_link", "frame whose origin is the start of every plan")
    map_wait_timeout_s: float = param(
        5.0, "how long a compute_path_to_pose goal sent before the map waits for it", unit="s", gt=0.0
    )


_ACTION = "nav2_msgs/action/ComputePathToPose"
#: nav2_msgs ComputePathToPose's error codes, from its .action text.
CODES = error_codes(_ACTION)
#: Theta*'s failure codes (galley_core.navigation.theta_star) as Nav2's.
_NAV2_CODE = {
    "start_outside_map": "START_OUTSIDE_MAP",
    "goal_outside_map": "GOAL_OUTSIDE_MAP",
    "start_blocked": "START_OCCUPIED",
    "goal_blocked": "GOAL_OCCUPIED",
    "no_path": "NO_VALID_PATH",
    "too_many_waypoints": "NO_VALID_PATH",
    "timeout": "TIMEOUT",
}
#: planner_id values this server answers to ("GridBased" is Nav2's default planner name).
PLANNER_IDS = ("", "GridBased", "ThetaStar")


class GlobalPlannerNode(Node):
    name = "global_planner"
    Config = GlobalPlannerConfig
    subscribes = (
        Subscribes("map", "nav_msgs/msg/OccupancyGrid", "on_map", QoS.latched()),
        Subscribes("goal_pose", "geometry_msgs/msg/PoseStamped", "on_goal"),
    )
    publishes = (
        Publishes("plan", "nav_msgs/msg/Path"),
        Publishes("planner/status", "galley_msgs/msg/ActionStatus", QoS.latched()),
        Publishes("planner/inflated_map", "nav_msgs/msg/OccupancyGrid", QoS.latched()),
    )
    serves = (
        Serves("compute_path_to_pose", _ACTION, goal="on_compute_path", cancel="on_compute_path_cancel"),
    )
    uses_tf = True

    def __init__(self, host: Any, config: GlobalPlannerConfig) -> None:
        super().__init__(host, config)
        self.planner: ThetaStar | None = None
        self._map_msg: Any = None
        self._waiting: dict[ServerGoal, Any] = {}  # goals sent before the map -> their timeout timers

    def on_config_change(self, config: GlobalPlannerConfig) -> None:
        self.config = config
        if self._map_msg is not None:
            self.on_map(self._map_msg)

    def on_map(self, msg: Any) -> None:
        self._map_msg = msg
        try:
            grid = occupancy_grid_from_msg(msg)
        except ValueError as err:
            self.planner = None
            self.log.error(f"ignored the map on /map: {err}; check the map publisher")
            return
        self.planner = ThetaStar(grid=grid, config=sub_config(ThetaStarConfig, self.config))
        self.publish(
            "planner/inflated_map",
            occupancy_grid_msg(grid, self.config.map_frame, self.now_ns(), self.planner.inflated_map()),
        )
        for handle, timer in list(self._waiting.items()):
            timer.cancel()
            del self._waiting[handle]
            self._serve(handle)

    # -- compute_path_to_pose --------------------------------------------------------------------

    def on_compute_path(self, handle: ServerGoal) -> str | None:
        request = handle.request
        if request.planner_id not in PLANNER_IDS:
            known = ", ".join(repr(p) for p in PLANNER_IDS)
            self._end(handle, "INVALID_PLANNER", f"planner_id {request.planner_id!r} is not one of {known}")
        elif self.planner is None:
            timeout = self.config.map_wait_timeout_s
            self._waiting[handle] = self.host.create_timer(timeout, lambda: self._map_timeout(handle))
        else:
            self._serve(handle)
        return None

    def on_compute_path_cancel(self, handle: ServerGoal) -> None:
        timer = self._waiting.pop(handle, None)
        if timer is not None:
            timer.cancel()
        handle.canceled(self.msg(f"{_ACTION}_Result"))

    def _map_timeout(self, handle: ServerGoal) -> None:
        self._waiting.pop(handle).cancel()
        self._end(
            handle,
            "TIMEOUT",
            f"no map received on /map within map_wait_timeout_s = {self.config.map_wait_timeout_s} s; "
            "start map_server with yaml_filename",
        )

    def _serve(self, handle: ServerGoal) -> None:
        request, c = handle.request, self.config
        try:
            start = self._pose_in_map(request.start) if request.use_start else self._robot_pose()
            goal = self._pose_in_map(request.goal)
        except _GoalError as err:
            self._end(handle, err.code, str(err))
            return
        assert self.planner is not None
        result = self.planner.plan(start, goal)
        if not result.ok:
            self._end(handle, _NAV2_CODE.get(result.code, "UNKNOWN"), result.reason)
            return
        path = path_msg(result.waypoints, c.map_frame, self.now_ns(), goal.theta)
        self.publish("plan", path)  # for rviz and the bags, as Nav2's planner_server publishes its paths
        handle.succeed(
            self._result(path=path, planning_time=messages.duration_msg(round(result.planning_time_s * 1e9)))
        )

    def _result(self, **fields: Any) -> Any:
        return self.msg(f"{_ACTION}_Result", **fields)

    def _end(self, handle: ServerGoal, code: str, message: str) -> None:
        self.log.warning(f"compute_path_to_pose: {code}: {message}")
        handle.abort(self._result(error_code=CODES[code], error_msg=message))

    def on_goal(self, msg: Any) -> None:
        c = self.config
        frame = msg.header.frame_id or c.map_frame
        p = msg.pose.position
        goal_id = f"goal ({p.x:.2f}, {p.y:.2f}) in {frame}"
        self._status(ACTION_ACTIVE, goal_id)
        try:
            goal = self._pose_in_map(msg)
            start = self._robot_pose()
        except _GoalError as err:
            self._status(ACTION_FAILED, goal_id, str(err))
            return
        if self.planner is None:
            self._status(
                ACTION_FAILED, goal_id, "no map received on /map yet; start map_server with yaml_filename"
            )
            return
        result = self.planner.plan(start, goal)
        if not result.ok:
            self._status(ACTION_FAILED, goal_id, result.reason)
            return
        self.publish("plan", path_msg(result.waypoints, c.map_frame, self.now_ns(), goal.theta))
        self._status(ACTION_SUCCEEDED, goal_id)
        self.log.info(
            f"{goal_id}: {result.length_m:.2f} m, {len(result.waypoints)} waypoints, "
            f"{result.planning_time_s * 1e3:.1f} ms"
        )

    def _robot_pose(self) -> Pose2D:
        c = self.config
        try:
            return self.lookup(c.map_frame, c.robot_frame).to_pose2d()
        except TransformError as err:
            raise _GoalError(
                f"no robot pose: {err}; publish {c.map_frame} -> {c.robot_frame} on TF "
                "(e.g. a static identity map -> odom plus the base's odom -> base_link)",
                "TF_ERROR",
            ) from None

    def _pose_in_map(self, msg: Any) -> Pose2D:
        """A ``geometry_msgs/msg/PoseStamped`` as a pose in the map frame."""
        frame = msg.header.frame_id or self.config.map_frame
        values = [msg.pose.position.x, msg.pose.position.y, msg.pose.position.z]
        q = msg.pose.orientation
        values += [q.x, q.y, q.z, q.w]
        if not all(math.isfinite(v) for v in values):
            raise _GoalError("goal pose has a NaN or infinite value; send a finite position and orientation")
        try:
            goal = pose2d_from_pose_msg(msg.pose)
        except ValueError as err:
            raise _GoalError(f"goal orientation: {err}; send a unit quaternion (w = 1 for yaw 0)") from None
        if frame == self.config.map_frame:
            return goal
        try:
            tf = self.lookup(self.config.map_frame, frame)
        except TransformError as err:
            raise _GoalError(
                f"goal is in frame {frame!r}, which has no transform to {self.config.map_frame!r}: {err}; "
                f"send the goal in {self.config.map_frame!r}",
                "TF_ERROR",
            ) from None
        return (tf * goal.to_transform()).to_pose2d()

    def _status(self, state: int, goal_id: str, reason: str = "") -> None:
        if reason:
            self.log.warning(f"{goal_id}: {reason}")
        self.publish(
            "planner/status",
            self.msg(
                "galley_msgs/msg/ActionStatus",
                header={"stamp": self.stamp(), "frame_id": self.config.map_frame},
                state=state,
                goal_id=goal_id,
                phase="plan",
                reason=reason,
            ),
        )


class _GoalError(ValueError):
    """A goal the planner cannot use; the message says why and what to send instead.

    ``code`` names the Nav2 error code (ComputePathToPose) that reports it.
    """

    def __init__(self, message: str, code: str = "UNKNOWN") -> None:
        super().__init__(message)
        self.code = code
