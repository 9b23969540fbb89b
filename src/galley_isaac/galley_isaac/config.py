"""The bridge's configuration: scene USD and scale, robot prims, objects, cameras, rates.

Read from a plain YAML file (``config/isaac/kitchen.yaml``), not a ROS 2 params file: the bridge
runs inside Isaac Sim's Python as a script, not as a ROS node. Each section is one frozen
:class:`galley_core.config.Config` dataclass, so every value is typed, documented with its unit
and validated; errors name the file, the key (``robot.wheel_radius_m``) and what is allowed.

Kitchen-R: "to use a new scene, it suffices to specify in the config the path to the scene's USD
file and set its scale" -- ``scene.usd_path`` and ``scene.scale``. Prim paths that do not start
with ``/`` are relative: robot parts to ``robot.prim_path``, objects to ``scene.prim_path``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from galley_core.config import Config, ConfigError, config_from_values, param
from galley_core.files import read_yaml

__all__ = [
    "BridgeConfig",
    "BridgeConfigError",
    "CameraConfig",
    "FrameNames",
    "Link",
    "RatesConfig",
    "RobotConfig",
    "SceneConfig",
    "load_bridge_config",
]

C = TypeVar("C", bound=Config)
#: The cameras galley's nodes use (the MuJoCo simulator's topics camera/<name>/...).
CAMERAS = ("base", "wrist", "top_down")


class BridgeConfigError(ValueError):
    """The bridge configuration is not usable; the message names the file, the key and the fix."""


@dataclass(frozen=True)
class SceneConfig(Config):
    usd_path: str = param("", "scene USD: absolute, relative to the config file, or an omniverse:// URL")
    scale: float = param(1.0, "uniform scale applied to the scene so that one stage unit is 1 m", gt=0.0)
    prim_path: str = param("/World/kitchen", "prim the scene USD is referenced under")
    map_prim_path: str = param("/World/galley_map", "an Xform the bridge creates as galley's map frame")
    physics_scene_path: str = param("/physicsScene", "the physics scene prim; created if missing")


@dataclass(frozen=True)
class RobotConfig(Config):
    usd_path: str = param("", "robot USD to reference at prim_path; empty: the scene USD contains it")
    prim_path: str = param("/World/galley_mm", "the robot's prim (its articulation root unless set below)")
    start_pose: tuple[float, ...] = param(
        (0.0, 0.8, 0.0), "x (m), y (m), yaw (rad) in map where a referenced robot is placed"
    )
    articulation_root: str = param("", "articulation root prim, relative to prim_path; empty: prim_path")
    base_link: str = param("base_link", "the chassis link prim (odometry, base_link frame)")
    lidar_prim: str = param("base_link/laser", "the RTX 2D lidar prim (publishes /scan)")
    imu_prim: str = param("base_link/imu_sensor", "the IMU sensor prim (publishes /imu/data)")
    wheel_joints: tuple[str, ...] = param(
        ("left_wheel_joint", "right_wheel_joint"), "left and right drive wheel joint names"
    )
    wheel_radius_m: float = param(0.08, "drive wheel radius", unit="m", gt=0.0)
    wheel_distance_m: float = param(0.44, "distance between the drive wheels", unit="m", gt=0.0)
    max_linear_speed_mps: float = param(1.0, "DifferentialController speed limit", unit="m/s", gt=0.0)
    max_angular_speed_rps: float = param(2.0, "DifferentialController turn-rate limit", unit="rad/s", gt=0.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.start_pose) != 3:
            raise ConfigError("start_pose", self.start_pose, "three numbers: x (m), y (m), yaw (rad)")
        if len(self.wheel_joints) != 2:
            raise ConfigError("wheel_joints", self.wheel_joints, "two joint names: left, right")


@dataclass(frozen=True)
class CameraConfig(Config):
    prim: str = param("", "the USD camera prim (relative to robot.prim_path unless absolute)")
    frame: str = param("", "frame_id of the images: the camera's ROS optical frame")
    parent_frame: str = param("", "link the optical frame hangs from on /tf_static; empty: not on TF")
    width: int = param(320, "image width", unit="px", ge=16, le=3840)
    height: int = param(240, "image height", unit="px", ge=16, le=2160)
    depth: bool = param(False, "also publish a 32FC1 depth image on camera/<name>/depth/image_raw")


@dataclass(frozen=True)
class FrameNames(Config):
    map: str = param("map", "fixed frame of objects and of the robot's start")
    odom: str = param("odom", "odometry frame")
    base_link: str = param("base_link", "robot base frame")
    laser: str = param("laser", "frame of /scan")
    imu: str = param("imu_link", "frame of /imu/data")


@dataclass(frozen=True)
class RatesConfig(Config):
    physics_hz: float = param(200.0, "physics steps per simulated second", unit="Hz", gt=0.0)
    render_hz: float = param(50.0, "rendered frames (OnPlaybackTick) per simulated second", unit="Hz", gt=0.0)
    state_hz: float = param(50.0, "rate of /odom, /tf and /joint_states", unit="Hz", gt=0.0)
    imu_hz: float = param(100.0, "rate of /imu/data (driven by physics steps)", unit="Hz", gt=0.0)
    camera_hz: float = param(10.0, "rate of the base and wrist cameras", unit="Hz", gt=0.0)
    top_down_hz: float = param(1.0, "rate of the latched top-down image", unit="Hz", gt=0.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, base in (
            ("render_hz", "physics_hz"),
            ("imu_hz", "physics_hz"),
            ("state_hz", "render_hz"),
            ("camera_hz", "render_hz"),
            ("top_down_hz", "render_hz"),
        ):
            ratio = getattr(self, base) / getattr(self, name)
            if ratio < 1.0 - 1e-9 or abs(ratio - round(ratio)) > 1e-9:
                raise ConfigError(
                    name, getattr(self, name), f"a divisor of {base} ({getattr(self, base):g} Hz)"
                )

    def every(self, name: str, base: str = "render_hz") -> int:
        """How many ``base`` ticks make one period of ``name`` (e.g. ``every("camera_hz")``)."""
        return round(float(getattr(self, base)) / float(getattr(self, name)))


@dataclass(frozen=True)
class Link:
    """A robot link on TF: its frame, its parent frame and its prim (absolute path)."""

    frame: str
    parent: str
    prim: str


@dataclass(frozen=True)
class BridgeConfig:
    """The whole bridge configuration (see the module docstring and config/isaac/kitchen.yaml).

    Attributes:
        links: moving robot links published on /tf, each relative to its parent link.
        static_links: links fixed to their parent, published on /tf_static.
        objects: object name -> prim path; published as ``object/<name>`` in the map frame.
        cameras: ``base``, ``wrist`` and ``top_down``.
        namespace: ROS namespace of every bridge node (empty: the root namespace).
        source: the file the configuration came from (for messages), or "".
    """

    scene: SceneConfig
    robot: RobotConfig
    frames: FrameNames
    rates: RatesConfig
    cameras: Mapping[str, CameraConfig]
    links: tuple[Link, ...]
    static_links: tuple[Link, ...]
    objects: Mapping[str, str]
    namespace: str = ""
    source: str = ""

    def robot_prim(self, path: str) -> str:
        """``path`` as an absolute prim path (relative paths are under ``robot.prim_path``)."""
        return _join(self.robot.prim_path, path)

    @property
    def base_link_prim(self) -> str:
        return self.robot_prim(self.robot.base_link)

    @property
    def articulation_prim(self) -> str:
        return self.robot_prim(self.robot.articulation_root)

    def frame_prims(self) -> dict[str, str]:
        """Frame name -> prim for every prim the TF graph names (the ``isaac:nameOverride`` values)."""
        prims = {self.frames.base_link: self.base_link_prim, self.frames.map: self.scene.map_prim_path}
        for link in (*self.links, *self.static_links):
            prims[link.frame] = link.prim
        for name, prim in self.objects.items():
            prims[f"object/{name}"] = prim
        return prims


_SECTIONS = ("scene", "robot", "frames", "rates", "cameras", "robot_links", "static_links", "objects", "ros")


def load_bridge_config(path: str | Path) -> BridgeConfig:
    """Read and validate a bridge configuration file.

    Raises:
        BridgeConfigError: unreadable file, unknown key, wrong type or value; the message names the
            file and the key (``robot.wheel_radius_m``) and says what is allowed.
    """
    path = Path(path)
    data = read_yaml(path, what="Isaac Sim bridge config", error=BridgeConfigError)
    config = bridge_config_from_dict(data, source=str(path))
    scene_usd = config.scene.usd_path
    if scene_usd and "://" not in scene_usd and not Path(scene_usd).is_absolute():
        resolved = str((path.parent / scene_usd).resolve())
        config = _replace_usd(config, resolved, config.robot.usd_path)
    robot_usd = config.robot.usd_path
    if robot_usd and "://" not in robot_usd and not Path(robot_usd).is_absolute():
        config = _replace_usd(config, config.scene.usd_path, str((path.parent / robot_usd).resolve()))
    return config


def bridge_config_from_dict(data: Any, *, source: str = "") -> BridgeConfig:
    """Build a :class:`BridgeConfig` from parsed YAML (see :func:`load_bridge_config`)."""
    where = source or "Isaac Sim bridge config"
    if not isinstance(data, Mapping):
        raise BridgeConfigError(f"{where}: expected a mapping with sections {', '.join(_SECTIONS)}")
    unknown = sorted(set(data) - set(_SECTIONS))
    if unknown:
        raise BridgeConfigError(f"{where}: unknown section(s) {unknown}; known: {', '.join(_SECTIONS)}")
    scene = _section(SceneConfig, data, "scene", where)
    robot = _section(RobotConfig, data, "robot", where)
    frames = _section(FrameNames, data, "frames", where)
    rates = _section(RatesConfig, data, "rates", where)
    ros = _mapping(data, "ros", where)
    namespace = ros.get("namespace", "")
    if set(ros) - {"namespace"} or not isinstance(namespace, str):
        raise BridgeConfigError(f"{where}: ros takes one key, namespace (a string, e.g. '' or 'robot1')")
    cameras_raw = _mapping(data, "cameras", where)
    if set(cameras_raw) != set(CAMERAS):
        raise BridgeConfigError(
            f"{where}: cameras must list exactly {', '.join(CAMERAS)} (the simulator's camera topics); "
            f"got {', '.join(cameras_raw) or 'none'}"
        )
    cameras = {name: _section(CameraConfig, cameras_raw, name, f"{where}: cameras") for name in CAMERAS}
    for name, camera in cameras.items():
        if not camera.prim or not camera.frame:
            raise BridgeConfigError(
                f"{where}: cameras.{name} needs prim (the USD camera) and frame (its frame_id)"
            )
    config = BridgeConfig(
        scene=scene,
        robot=robot,
        frames=frames,
        rates=rates,
        cameras=cameras,
        links=(),
        static_links=(),
        objects={},
        namespace=namespace.strip("/"),
        source=source,
    )
    links = _links(data, "robot_links", where, config)
    static_links = _links(data, "static_links", where, config)
    objects_raw = _mapping(data, "objects", where)
    objects = {}
    for name, prim in objects_raw.items():
        if not isinstance(prim, str) or not prim:
            raise BridgeConfigError(f"{where}: objects.{name} must be a prim path (the object's USD prim)")
        objects[str(name)] = _join(scene.prim_path, prim)
    frames_seen: dict[str, str] = {
        frames.map: "frames.map",
        frames.odom: "frames.odom",
        frames.base_link: "frames.base_link",
    }
    for key, link in [(f"robot_links.{k.frame}", k) for k in links] + [
        (f"static_links.{k.frame}", k) for k in static_links
    ]:
        if link.frame in frames_seen:
            raise BridgeConfigError(
                f"{where}: {key} repeats the frame of {frames_seen[link.frame]}; frames are unique"
            )
        frames_seen[link.frame] = key
    return BridgeConfig(
        scene=scene,
        robot=robot,
        frames=frames,
        rates=rates,
        cameras=cameras,
        links=links,
        static_links=static_links,
        objects=objects,
        namespace=namespace.strip("/"),
        source=source,
    )


def _mapping(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise BridgeConfigError(f"{where}: {key} must be a mapping of keys to values")
    return value


def _section(cls: type[C], data: Mapping[str, Any], key: str, where: str) -> C:
    try:
        return config_from_values(cls, _mapping(data, key, where))
    except ConfigError as err:
        raise BridgeConfigError(
            f"{where}: {key}.{err.field} = {err.value!r} is not allowed: {err.allowed}"
        ) from None


def _links(data: Mapping[str, Any], key: str, where: str, config: BridgeConfig) -> tuple[Link, ...]:
    links = []
    for frame, entry in _mapping(data, key, where).items():
        if (
            not isinstance(entry, (list, tuple))
            or len(entry) != 2
            or not all(isinstance(v, str) and v for v in entry)
        ):
            raise BridgeConfigError(
                f"{where}: {key}.{frame} = {entry!r} is not allowed: [parent frame, prim path], "
                "e.g. [base_link, base_link/arm_base_link]"
            )
        links.append(Link(str(frame), entry[0], config.robot_prim(entry[1])))
    return tuple(links)


def _join(root: str, path: str) -> str:
    if path.startswith("/"):
        return path
    return root.rstrip("/") + ("/" + path if path else "")


def _replace_usd(config: BridgeConfig, scene_usd: str, robot_usd: str) -> BridgeConfig:

    return dataclasses.replace(
        config,
        scene=dataclasses.replace(config.scene, usd_path=scene_usd),
        robot=dataclasses.replace(config.robot, usd_path=robot_usd),
    )


def yaw_quaternion_xyzw(yaw_rad: float) -> tuple[float, float, float, float]:
    """The quaternion (x, y, z, w) of a rotation by ``yaw_rad`` (rad) about z."""
    return (0.0, 0.0, math.sin(yaw_rad / 2.0), math.cos(yaw_rad / 2.0))
