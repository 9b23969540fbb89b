"""``unicycle_base``: a kinematic differential-drive base that turns /cmd_vel into /odom and TF.

A stand-in for a simulator's base when only the base matters (tests of navigation, demos): it
integrates the commanded (v, w) exactly (:func:`galley_core.navigation.unicycle.integrate_unicycle`),
publishes ``nav_msgs/msg/Odometry`` on /odom and the ``odom -> base_link`` transform, and stops the
base when commands stop arriving.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from galley_core.config import Config, param
from galley_core.geometry import Pose2D
from galley_core.navigation.unicycle import integrate_unicycle
from galley_runtime.conversions import odometry_msg, transform_stamped_msg
from galley_runtime.node import Node, Publishes, Subscribes, Timer


@dataclass(frozen=True)
class UnicycleBaseConfig(Config):
    rate_hz: float = param(50.0, "integration and odometry publishing rate", unit="Hz", gt=0.0)
    odom_frame: str = param("odom", "frame the odometry is expressed in")
    base_frame: str = param("base_link", "frame of the robot base")
    initial_x_m: float = param(0.0, "start position x in the odometry frame", unit="m")
    initial_y_m: float = param(0.0, "start position y in the odometry frame", unit="m")
    initial_yaw_rad: float = param(0.0, "start heading in the odometry frame", unit="rad")
    max_linear_speed_mps: float = param(0.5, "commands are clipped to this forward speed", unit="m/s", gt=0.0)
    max_angular_speed_rps: float = param(1.5, "commands are clipped to this yaw rate", unit="rad/s", gt=0.0)
    cmd_timeout_s: float = param(0.5, "stop when no command arrived for this long", unit="s", gt=0.0)


class UnicycleBaseNode(Node):
    name = "unicycle_base"
    Config = UnicycleBaseConfig
    subscribes = (Subscribes("cmd_vel", "geometry_msgs/msg/Twist", "on_cmd_vel"),)
    publishes = (Publishes("odom", "nav_msgs/msg/Odometry"),)
    timers = (Timer("on_tick", period_s=lambda c: 1.0 / c.rate_hz),)

    def __init__(self, host: Any, config: UnicycleBaseConfig) -> None:
        super().__init__(host, config)
        self.pose = Pose2D(config.initial_x_m, config.initial_y_m, config.initial_yaw_rad)
        self._cmd = (0.0, 0.0)
        self._cmd_time_ns: int | None = None
        self._last_ns = self.now_ns()

    def on_cmd_vel(self, msg: Any) -> None:
        c = self.config
        v = min(max(msg.linear.x, -c.max_linear_speed_mps), c.max_linear_speed_mps)
        w = min(max(msg.angular.z, -c.max_angular_speed_rps), c.max_angular_speed_rps)
        self._cmd = (v, w)
        self._cmd_time_ns = self.now_ns()

    def on_tick(self) -> None:
        now = self.now_ns()
        stale = self._cmd_time_ns is None or now - self._cmd_time_ns > self.config.cmd_timeout_s * 1e9
        v, w = (0.0, 0.0) if stale else self._cmd
        self.pose = integrate_unicycle(self.pose, v, w, (now - self._last_ns) * 1e-9)
        self._last_ns = now
        c = self.config
        header = self.msg("std_msgs/msg/Header", stamp=self.stamp(), frame_id=c.odom_frame)
        self.publish("odom", odometry_msg(header, c.base_frame, self.pose, v, w))
        self.send_transforms(
            [transform_stamped_msg(self.pose.to_transform(), c.odom_frame, c.base_frame, now)]
        )
