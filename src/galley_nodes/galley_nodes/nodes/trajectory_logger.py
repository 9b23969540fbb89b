"""``trajectory_logger``: follows a robot frame through TF and publishes the path it has driven.

Looks up ``fixed_frame -> robot_frame`` at a fixed rate, publishes the accumulated
``nav_msgs/msg/Path`` on /trajectory (transient-local, so rviz or a late tool gets it at once),
and on shutdown writes the trajectory as CSV when ``output_csv`` is set.
"""

from __future__ import annotations

import csv
import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from galley_core.config import Config, param
from galley_core.geometry import Pose2D
from galley_core.tf_tree import TransformError
from galley_runtime import messages
from galley_runtime.conversions import pose_msg, transform_from_msg
from galley_runtime.node import Node, Publishes, Timer
from galley_runtime.qos import QoS


@dataclass(frozen=True)
class TrajectoryLoggerConfig(Config):
    rate_hz: float = param(5.0, "sampling rate of the robot pose", unit="Hz", gt=0.0)
    fixed_frame: str = param("odom", "frame the trajectory is expressed in")
    robot_frame: str = param("base_link", "frame whose origin is followed")
    output_csv: str = param("", "file written on shutdown with t, x, y, yaw rows; empty: none")


class TrajectoryLoggerNode(Node):
    name = "trajectory_logger"
    Config = TrajectoryLoggerConfig
    publishes = (Publishes("trajectory", "nav_msgs/msg/Path", QoS.latched()),)
    timers = (Timer("on_tick", period_s=lambda c: 1.0 / c.rate_hz),)
    uses_tf = True

    def __init__(self, host: Any, config: TrajectoryLoggerConfig) -> None:
        super().__init__(host, config)
        self.samples: list[tuple[float, Pose2D]] = []
        self._poses: list[Any] = []
        self._warned = False

    @property
    def distance_m(self) -> float:
        """Length of the sampled path, metres."""
        pts = [p for _, p in self.samples]
        return sum(math.hypot(b.x - a.x, b.y - a.y) for a, b in itertools.pairwise(pts))

    def on_tick(self) -> None:
        c = self.config
        try:
            tf = self.lookup_transform(c.fixed_frame, c.robot_frame)
        except TransformError as err:
            if not self._warned:
                self.log.warning(f"waiting for {c.fixed_frame} -> {c.robot_frame}: {err}")
                self._warned = True
            return
        stamp_ns = messages.time_ns_from_msg(tf.header.stamp)
        if self.samples and stamp_ns <= round(self.samples[-1][0] * 1e9):
            return  # no newer transform since the last sample
        pose = transform_from_msg(tf).to_pose2d()
        self.samples.append((stamp_ns * 1e-9, pose))
        header = {"stamp": tf.header.stamp, "frame_id": c.fixed_frame}
        self._poses.append(self.msg("geometry_msgs/msg/PoseStamped", header=header, pose=pose_msg(pose)))
        self.publish("trajectory", self.msg("nav_msgs/msg/Path", header=header, poses=self._poses))

    def on_shutdown(self) -> None:
        if not self.config.output_csv:
            return
        path = Path(self.config.output_csv)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["t_s", "x_m", "y_m", "yaw_rad"])
            writer.writerows(
                [f"{t:.9f}", f"{p.x:.6f}", f"{p.y:.6f}", f"{p.theta:.6f}"] for t, p in self.samples
            )
        self.log.info(f"wrote {len(self.samples)} poses ({self.distance_m:.2f} m) to {path}")
