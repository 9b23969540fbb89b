"""``diff_drive_controller``: Kitchen-R's path follower at 10 Hz, /plan in, /cmd_vel out.

Subscribes /plan (``nav_msgs/msg/Path``; an empty path cancels) and, by default, /odom
(``nav_msgs/msg/Odometry``); with ``use_tf`` the robot pose comes from TF
(``<plan frame> -> robot_frame``) instead. When the plan's frame differs from the odometry's, the
odometry pose is carried into the plan's frame through TF (e.g. a static map -> odom).
Each tick runs :meth:`galley_core.navigation.diff_drive.DiffDriveController.step` and publishes
``geometry_msgs/msg/Twist`` on /cmd_vel while following (one zero command when it stops), and
``galley_msgs/msg/ActionStatus`` on /navigation/status whenever the state, phase or reason changes.
Odometry older than ``odom_timeout_s`` of ROS time, or NaN, stops the robot: FAILED with the reason.

It also serves Nav2's ``follow_path`` action (``nav2_msgs/action/FollowPath``; ``controller_id``
empty or ``FollowPath``, Nav2's default name): the goal's path is followed like one on /plan, with
feedback each tick (``distance_to_goal``: the path length left, m; ``speed``: the odometry's, m/s).
A new goal, or a path on /plan, preempts the goal being followed (it aborts, as in Nav2's servers);
cancel commands zero at once and ends the goal CANCELED. Failures abort with Nav2's error codes:
TF_ERROR for a stale, missing or invalid pose, INVALID_PATH, INVALID_CONTROLLER, and
FAILED_TO_MAKE_PROGRESS when the base moves less than ``progress_distance_m`` and turns less than
``progress_rotation_rad`` in ``progress_timeout_s`` (a blocked path: the base pushes against it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from galley_core.config import param, sub_config
from galley_core.geometry import Pose2D
from galley_core.navigation.diff_drive import (
    ControllerState,
    DiffDriveConfig,
    DiffDriveController,
    FollowedPath,
    ProgressChecker,
)
from galley_core.tf_tree import TransformError
from galley_runtime import messages
from galley_runtime.action_definitions import error_codes
from galley_runtime.conversions import path_from_msg, pose2d_from_pose_msg, transform_from_msg
from galley_runtime.node import Node, Publishes, ServerGoal, Serves, Subscribes, Timer
from galley_runtime.qos import QoS


@dataclass(frozen=True)
class DiffDriveControllerConfig(DiffDriveConfig):
    use_tf: bool = param(False, "take the robot pose from TF (plan frame -> robot_frame) instead of /odom")
    robot_frame: str = param("base_link", "frame of the robot base (TF mode)")
    odom_timeout_s: float = param(0.5, "stop when the newest pose is older than this", unit="s", gt=0.0)
    progress_timeout_s: float = param(
        10.0, "follow_path goals abort when the base makes no progress for this long", unit="s", gt=0.0
    )
    progress_distance_m: float = param(0.1, "distance that counts as progress", unit="m", gt=0.0)
    progress_rotation_rad: float = param(0.2, "rotation that counts as progress", unit="rad", gt=0.0)


_ACTION = "nav2_msgs/action/FollowPath"
#: nav2_msgs FollowPath's error codes, from its .action text.
CODES = error_codes(_ACTION)
#: controller_id values this server answers to ("FollowPath" is Nav2's default controller name).
CONTROLLER_IDS = ("", "FollowPath")


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
    serves = (Serves("follow_path", _ACTION, goal="on_follow_path", cancel="on_follow_path_cancel"),)
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
        self._goal: ServerGoal | None = None  # the follow_path goal being followed
        self._pose_failed = False  # the last failure was the robot pose's (TF_ERROR)
        self._progress = ProgressChecker(
            config.progress_distance_m, config.progress_rotation_rad, config.progress_timeout_s
        )
        self._pose = Pose2D()

    def on_config_change(self, config: DiffDriveControllerConfig) -> None:
        self.config = config
        self.controller.config = sub_config(DiffDriveConfig, config)
        progress = self._progress
        progress.distance_m, progress.rotation_rad = config.progress_distance_m, config.progress_rotation_rad
        progress.timeout_s = config.progress_timeout_s

    def on_plan(self, msg: Any) -> None:
        points, goal_yaw = path_from_msg(msg)
        if self._goal is not None and self._is_current(points, goal_yaw, msg.header.frame_id):
            return  # global_planner shows the path of this goal on /plan, as Nav2's planner_server does
        self._end_goal("ABORTED", "UNKNOWN", "preempted by a path on /plan")
        stamp = messages.time_ns_from_msg(msg.header.stamp) * 1e-9
        if len(points) == 0:
            self._path = None  # withdraws the path: the next tick reports CANCELED
            return
        self._path = FollowedPath(points, goal_yaw)
        self._path_frame = msg.header.frame_id
        x, y = points[-1]
        self._goal_id = f"path to ({x:.2f}, {y:.2f}) stamped {stamp:.2f} s"

    # -- follow_path ---------------------------------------------------------------------------

    def on_follow_path(self, handle: ServerGoal) -> str | None:
        request = handle.request
        self._end_goal("ABORTED", "UNKNOWN", "preempted by a new follow_path goal")
        if request.controller_id not in CONTROLLER_IDS:
            known = ", ".join(repr(c) for c in CONTROLLER_IDS)
            self._abort(
                handle, "INVALID_CONTROLLER", f"controller_id {request.controller_id!r} is not one of {known}"
            )
            return None
        points, goal_yaw = path_from_msg(request.path)
        if len(points) == 0:
            self._abort(handle, "INVALID_PATH", "the goal's path has no poses; send a path from a planner")
            return None
        ctrl = self.controller
        following = self._path is ctrl.current and ctrl.state == ControllerState.ACTIVE
        if not (following and self._is_current(points, goal_yaw, request.path.header.frame_id)):
            self._path = FollowedPath(points, goal_yaw)  # else the path from /plan goes on, not restarted
        self._path_frame = request.path.header.frame_id
        self._goal_id = f"follow_path goal to ({points[-1][0]:.2f}, {points[-1][1]:.2f})"
        self._goal = handle
        self._progress.reset()
        return None

    def _is_current(self, points: Any, goal_yaw: float | None, frame: str) -> bool:
        """Whether ``points`` and ``goal_yaw`` in ``frame`` are the path being followed now."""
        path = self._path
        return (
            path is not None
            and frame == self._path_frame
            and path.goal_yaw == goal_yaw
            and bool(np.array_equal(path.waypoints, points))
        )

    def on_follow_path_cancel(self, handle: ServerGoal) -> None:
        if handle is self._goal:
            self._path = None
            self.controller.cancel("canceled by the follow_path client")
            self.publish("cmd_vel", self.msg("geometry_msgs/msg/Twist"))  # stop now, not next tick
            self._driving = False
        self._end_goal("CANCELED", "NONE", "", handle)

    def _abort(self, handle: ServerGoal, code: str, message: str) -> None:
        self.log.warning(f"follow_path: {code}: {message}")
        handle.abort(self.msg(f"{_ACTION}_Result", error_code=CODES[code], error_msg=message))

    def _end_goal(self, how: str, code: str, message: str, handle: ServerGoal | None = None) -> None:
        """End the goal being followed (or ``handle``): SUCCEEDED, ABORTED or CANCELED."""
        handle = handle or self._goal
        if handle is self._goal:
            self._goal = None
        if handle is None or not handle.active:
            return
        if how == "ABORTED":
            self._abort(handle, code, message)
            return
        result = self.msg(f"{_ACTION}_Result", error_code=CODES[code], error_msg=message)
        (handle.succeed if how == "SUCCEEDED" else handle.canceled)(result)

    def _serve_goal(self, v: float) -> None:
        """After a tick: end the goal the controller finished, or give feedback and check progress."""
        ctrl, goal = self.controller, self._goal
        if goal is None or self._path is not ctrl.current:
            return
        if ctrl.state == ControllerState.SUCCEEDED:
            self._end_goal("SUCCEEDED", "NONE", "")
        elif ctrl.state == ControllerState.FAILED:
            self._end_goal("ABORTED", "TF_ERROR" if self._pose_failed else "INVALID_PATH", ctrl.reason)
        elif ctrl.state == ControllerState.ACTIVE:
            c, pose = self.config, self._pose
            if self._progress.stalled(pose, self.now_ns()):
                reason = (
                    f"the base moved less than progress_distance_m = {c.progress_distance_m} m and turned "
                    f"less than progress_rotation_rad = {c.progress_rotation_rad} rad in "
                    f"progress_timeout_s = {c.progress_timeout_s} s: the path is blocked or the base does "
                    "not follow /cmd_vel"
                )
                ctrl.fail(reason)
                self.publish("cmd_vel", self.msg("geometry_msgs/msg/Twist"))
                self._driving = False
                self._end_goal("ABORTED", "FAILED_TO_MAKE_PROGRESS", reason)
                return
            speed = v
            if self._odom is not None:
                twist = self._odom.twist.twist.linear
                speed = math.hypot(twist.x, twist.y)
            goal.publish_feedback(
                self.msg(f"{_ACTION}_Feedback", distance_to_goal=ctrl.remaining_length(pose), speed=speed)
            )

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
            self._pose_failed = bool(problem)
            if problem:
                ctrl.fail(problem, self._path)
            else:
                self._pose = pose
                v, w, _, _ = ctrl.step(pose, self._path, dt)
        active = ctrl.state == ControllerState.ACTIVE
        if active or self._driving:  # while following, and one zero command when it stops
            self.publish("cmd_vel", self.msg("geometry_msgs/msg/Twist", linear={"x": v}, angular={"z": w}))
        self._driving = active
        self._serve_goal(v)
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
                    tf = self.lookup(self._path_frame, odom_frame)
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
