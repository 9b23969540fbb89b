"""``diff_drive_controller``: Kitchen-R's path follower at 10 Hz, /plan in, /cmd_vel out.

Subscribes /plan (``nav_msgs/msg/Path``; an empty path cancels) and, by default, /odom
(``nav_msgs/msg/Odometry``); with ``use_tf`` the robot pose comes from TF
(``<plan frame> -> robot_frame``) instead. When the plan's frame differs from the odometry's, the
odometry pose is carried into the plan's frame through TF (e.g. a static map -> odom).
Each tick runs :meth:`galley_core.navigation.diff_drive.DiffDriveController.step` and publishes
``geometry_msgs/msg/Twist`` on /cmd_vel while following (one zero command when it stops), and
``galley_msgs/msg/ActionStatus`` on /navigation/status whenever the state, phase or reason changes.
Odometry older than ``odom_timeout_s`` of ROS time, or NaN, stops the robot: FAILED with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from galley_core.config import param, sub_config
from galley_core.geometry import Pose2D
from galley_core.navigation.diff_drive import (
    ControllerState,
    DiffDriveConfig,
    DiffDriveController,
    FollowedPath,
)
from galley_core.tf_tree import TransformError
from galley_runtime import messages
from galley_runtime.conversions import path_from_msg, pose2d_from_pose_msg, transform_from_msg
from galley_runtime.node import Node, Publishes, Subscribes, Timer
from galley_runtime.qos import QoS


@dataclass(frozen=True)
class DiffDriveControllerConfig(DiffDriveConfig):
    use_tf: bool = param(False, "take the robot pose from TF (plan frame -> robot_frame) instead of /odom")
    robot_frame: str = param("base_link", "frame of the robot base (TF mode)")
    odom_timeout_s: float = param(0.5, "stop when the newest pose is older than this", unit="s", gt=0.0)


class DiffDriveControllerNode(Node):
    name = "diff_drive_controller"
    Config = DiffDriveControllerConfig
    subscribes = (
        Subscribes("plan", "nav_msgs/msg/Path", "on_plan"),
        Subscribes("odom", "nav_msgs/msg/Odometry", "on_odom", QoS(depth=5)),
    )
    publishes = (
        Publishes("cmd_vel", "geometry_msgs/msg/Twist"),
        Publishes("navigation/status", "galley_msgs/msg/ActionStatus", QoS.latched()),
    )
    timers = (Timer("on_tick", period_s=lambda c: 1.0 / c.rate_hz),)
    uses_tf = True

    def __init__(self, host: Any, config: DiffDriveControllerConfig) -> None:
        super().__init__(host, config)
        self.controller = DiffDriveController(sub_config(DiffDriveConfig, config))
        self._path: FollowedPath | None = None
        self._path_frame = ""
        self._goal_id = ""
        self._odom: Any = None
        self._last_status: tuple[int, str, str] | None = None
        self._driving = False

    def on_config_change(self, config: DiffDriveControllerConfig) -> None:
        self.config = config
        self.controller.config = sub_config(DiffDriveConfig, config)

    def on_plan(self, msg: Any) -> None:
        points, goal_yaw = path_from_msg(msg)
        stamp = messages.time_ns_from_msg(msg.header.stamp) * 1e-9
        if len(points) == 0:
            self._path = None  # withdraws the path: the next tick reports CANCELED
            return
        self._path = FollowedPath(points, goal_yaw)
        self._path_frame = msg.header.frame_id
        x, y = points[-1]
        self._goal_id = f"path to ({x:.2f}, {y:.2f}) stamped {stamp:.2f} s"

    def on_odom(self, msg: Any) -> None:
        self._odom = msg

    def on_tick(self) -> None:
        ctrl = self.controller
        dt = 1.0 / self.config.rate_hz
        v = w = 0.0
        if self._path is None:
            if ctrl.current is not None:
                ctrl.step(Pose2D(), None, dt)  # withdrawn: CANCELED if it was being followed
        elif self._path is not ctrl.current or ctrl.state == ControllerState.ACTIVE:
            pose, problem = self._robot_pose()
            if problem:
                ctrl.fail(problem, self._path)
            else:
                v, w, _, _ = ctrl.step(pose, self._path, dt)
        active = ctrl.state == ControllerState.ACTIVE
        if active or self._driving:  # while following, and one zero command when it stops
            self.publish("cmd_vel", self.msg("geometry_msgs/msg/Twist", linear={"x": v}, angular={"z": w}))
        self._driving = active
        self._report()

    def _robot_pose(self) -> tuple[Pose2D, str]:
        """The robot pose in the plan's frame, or a reason why there is none that can be trusted."""
        c = self.config
        now = self.now_ns()
        if c.use_tf:
            try:
                tf = self.lookup_transform(self._path_frame or "map", c.robot_frame)
            except TransformError as err:
                return (
                    Pose2D(),
                    f"no robot pose from TF: {err}; publish {self._path_frame} -> {c.robot_frame}",
                )
            stamp = messages.time_ns_from_msg(tf.header.stamp)
            source = f"TF {self._path_frame} -> {c.robot_frame}"
            pose = transform_from_msg(tf).to_pose2d()
        else:
            if self._odom is None:
                return (
                    Pose2D(),
                    "no odometry received on /odom; check that the base or simulator publishes it",
                )
            stamp = messages.time_ns_from_msg(self._odom.header.stamp)
            source = "odometry on /odom"
            p, q = self._odom.pose.pose.position, self._odom.pose.pose.orientation
            if not all(math.isfinite(v) for v in (p.x, p.y, q.x, q.y, q.z, q.w)):
                return Pose2D(), "odometry on /odom has a NaN or infinite pose; check the base driver"
            try:
                pose = pose2d_from_pose_msg(self._odom.pose.pose)
            except ValueError as err:
                return Pose2D(), f"odometry on /odom has an invalid orientation: {err}"
            odom_frame = self._odom.header.frame_id
            if self._path_frame and odom_frame and odom_frame != self._path_frame:
                try:
                    tf = transform_from_msg(self.lookup_transform(self._path_frame, odom_frame))
                except TransformError as err:
                    return Pose2D(), (
                        f"the plan is in {self._path_frame!r} but odometry in {odom_frame!r} and there is no "
                        f"transform between them ({err}); publish {self._path_frame} -> {odom_frame} "
                        "(e.g. a static identity) or set use_tf"
                    )
                pose = (tf * pose.to_transform()).to_pose2d()
        age = (now - stamp) * 1e-9
        if age > c.odom_timeout_s:
            return Pose2D(), (
                f"{source} is {age:.2f} s old (> odom_timeout_s = {c.odom_timeout_s} s); "
                "the robot was stopped; check that the base or simulator is running"
            )
        return pose, ""

    def _report(self) -> None:
        ctrl = self.controller
        key = (int(ctrl.state), ctrl.phase if ctrl.state == ControllerState.ACTIVE else "", ctrl.reason)
        if key == self._last_status:
            return
        self._last_status = key
        if ctrl.state == ControllerState.FAILED:
            self.log.warning(f"{self._goal_id}: {ctrl.reason}")
        self.publish(
            "navigation/status",
            self.msg(
                "galley_msgs/msg/ActionStatus",
                header={"stamp": self.stamp(), "frame_id": self._path_frame},
                state=key[0],
                goal_id=self._goal_id,
                phase=key[1],
                reason=key[2],
            ),
        )
