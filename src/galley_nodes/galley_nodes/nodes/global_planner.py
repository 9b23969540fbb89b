"""``global_planner``: Theta* from the robot's pose to each /goal_pose over /map, published on /plan.

Subscribes /map (transient-local) and /goal_pose (``geometry_msgs/msg/PoseStamped``); the start is
the robot's pose from TF (``map_frame -> robot_frame``). Publishes the plan as ``nav_msgs/msg/Path``
on /plan (at most ``max_waypoints`` poses, the last one with the goal's heading), its progress on
/planner/status (``galley_msgs/msg/ActionStatus``: ACTIVE, then SUCCEEDED or FAILED with the
reason) and the map as the planner sees it on /planner/inflated_map: a ``nav_msgs/msg/OccupancyGrid``
(100 obstacle, 99 within the clearance, 0 free), which rviz2 shows as a map layer, chosen over a
Marker because it needs no custom display settings. Planning runs in the goal callback, bounded by
``max_planning_time_s``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from galley_core.config import param, sub_config
from galley_core.geometry import Pose2D
from galley_core.navigation.theta_star import ThetaStar, ThetaStarConfig
from galley_core.tf_tree import TransformError
from galley_runtime.conversions import (
    occupancy_grid_from_msg,
    occupancy_grid_msg,
    path_msg,
    pose2d_from_pose_msg,
    transform_from_msg,
)
from galley_runtime.msg_constants import ACTION_ACTIVE, ACTION_FAILED, ACTION_SUCCEEDED
from galley_runtime.node import Node, Publishes, Subscribes
from galley_runtime.qos import QoS


@dataclass(frozen=True)
class GlobalPlannerConfig(ThetaStarConfig):
    map_frame: str = param("map", "frame of the map, the goals and the plan")
    robot_frame: str = param("base_link", "frame whose origin is the start of every plan")


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
    uses_tf = True

    def __init__(self, host: Any, config: GlobalPlannerConfig) -> None:
        super().__init__(host, config)
        self.planner: ThetaStar | None = None
        self._map_msg: Any = None

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

    def on_goal(self, msg: Any) -> None:
        c = self.config
        frame = msg.header.frame_id or c.map_frame
        p = msg.pose.position
        goal_id = f"goal ({p.x:.2f}, {p.y:.2f}) in {frame}"
        self._status(ACTION_ACTIVE, goal_id)
        try:
            goal = self._goal_in_map(msg, frame)
            start = transform_from_msg(self.lookup_transform(c.map_frame, c.robot_frame)).to_pose2d()
        except _GoalError as err:
            self._status(ACTION_FAILED, goal_id, str(err))
            return
        except TransformError as err:
            self._status(
                ACTION_FAILED,
                goal_id,
                f"no robot pose: {err}; publish {c.map_frame} -> {c.robot_frame} on TF "
                "(e.g. a static identity map -> odom plus the base's odom -> base_link)",
            )
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

    def _goal_in_map(self, msg: Any, frame: str) -> Pose2D:
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
            tf = transform_from_msg(self.lookup_transform(self.config.map_frame, frame))
        except TransformError as err:
            raise _GoalError(
                f"goal is in frame {frame!r}, which has no transform to {self.config.map_frame!r}: {err}; "
                f"send the goal in {self.config.map_frame!r}"
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
    """A goal the planner cannot use; the message says why and what to send instead."""
