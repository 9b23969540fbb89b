"""Parameters of the ``sim`` node (:mod:`galley_sim.sim_node`): scene, episode, rates, cameras, frames."""

from __future__ import annotations

from dataclasses import dataclass

from galley_core.config import Config, ConfigError, param

__all__ = ["SimConfig"]


@dataclass(frozen=True)
class SimConfig(Config):
    scene: str = param("kitchen", "scene name (config/scenes/<name>.yaml) or path to a scene file")
    seed: int = param(0, "episode seed: robot start, object placement, colours", ge=0)
    episode_file: str = param("", "JSON episode to run instead of sampling one from seed; empty: sample")
    physics_rate_hz: float = param(500.0, "physics steps per second of simulated time", unit="Hz", gt=0.0)
    state_rate_hz: float = param(
        50.0, "rate of /odom, /tf, /joint_states and ground truth", unit="Hz", gt=0.0
    )
    scan_rate_hz: float = param(10.0, "LiDAR rate", unit="Hz", gt=0.0)
    imu_rate_hz: float = param(100.0, "IMU rate", unit="Hz", gt=0.0)
    camera_rate_hz: float = param(10.0, "base and wrist camera rate", unit="Hz", gt=0.0)
    cameras_enabled: bool = param(True, "render the base and wrist cameras")
    depth_enabled: bool = param(True, "render the base camera's depth image")
    image_width: int = param(320, "base and wrist image width", unit="px", ge=16, le=1920)
    image_height: int = param(240, "base and wrist image height", unit="px", ge=16, le=1080)
    hide_zones_from_robot_cameras: bool = param(True, "draw the coloured zones only in the top-down image")
    cmd_vel_timeout_s: float = param(
        0.5, "stop the base when /cmd_vel is older than this; 0: never", unit="s", ge=0.0
    )
    publish_clock: bool = param(False, "publish /clock (under ROS 2; the embedded host publishes its own)")
    real_time_factor: float = param(
        1.0, "simulated seconds per wall second under ROS 2; keep 1 embedded", gt=0.0
    )
    map_frame: str = param("map", "fixed frame of ground truth and objects")
    odom_frame: str = param("odom", "odometry frame")
    base_frame: str = param("base_link", "robot base frame")

    def __post_init__(self) -> None:
        super().__post_init__()
        tick = self.tick_rate_hz
        for name in ("state_rate_hz", "scan_rate_hz", "imu_rate_hz", "camera_rate_hz"):
            ratio = tick / getattr(self, name)
            if abs(ratio - round(ratio)) > 1e-9:
                raise ConfigError(
                    name, getattr(self, name), f"a divisor of the fastest sensor rate ({tick:g} Hz)"
                )
        substeps = self.physics_rate_hz / tick
        if abs(substeps - round(substeps)) > 1e-9:
            raise ConfigError(
                "physics_rate_hz",
                self.physics_rate_hz,
                f"a multiple of the fastest sensor rate ({tick:g} Hz)",
            )

    @property
    def tick_rate_hz(self) -> float:
        """The node's step rate: the fastest sensor."""
        rates = [self.state_rate_hz, self.scan_rate_hz, self.imu_rate_hz]
        return max([*rates, self.camera_rate_hz] if self.cameras_enabled else rates)
