"""``sim``: the built-in MuJoCo simulator as a node, with the topics of galley's Isaac Sim graphs.

Subscribes ``/cmd_vel`` (geometry_msgs/Twist: linear.x, angular.z) and ``/arm/joint_command``
(sensor_msgs/JointState: positions, or velocities without positions, by joint name; ``gripper``
takes an opening fraction 0..1). Publishes ``/odom``, ``/tf`` (map -> odom -> base_link, the
arm's jointed links, ``object/<name>`` in map), ``/tf_static`` (the links without a joint to their
parent: laser, arm base, cameras, IMU), ``/joint_states``, ``/scan``, ``/imu/data``, the base
RGB-D and wrist RGB cameras with camera_info, the top-down
image (latched, once per episode and again on ``/sim/render_top_down``, std_msgs/Empty: a replan
plans on the world as it is), and ground truth for evaluation: ``/sim/ground_truth/base_pose``
and ``/sim/contacts`` (robot against walls and furniture).

Time: physics runs in ticks of the fastest sensor rate; every message is stamped with physics
time. In the embedded host the host's clock and physics time coincide. Under ROS 2 the node
runs on the wall clock (``use_sim_time: false``) at ``real_time_factor`` and publishes /clock
(``publish_clock: true``) for the other nodes, which use sim time.
"""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from galley_core.config import ConfigError
from galley_core.episode import Episode, sample_episode
from galley_core.geometry import Transform
from galley_runtime import messages
from galley_runtime.config_files import find_scene
from galley_runtime.conversions import (
    odometry_msg,
    pose2d_from_pose_msg,
    pose_msg,
    transform_stamped_msg,
)
from galley_runtime.node import Node, Publishes, Subscribes, Timer
from galley_runtime.qos import QoS
from galley_sim.scene_model import ROBOT_FRAMES, STATIC_FRAMES, SimOptions
from galley_sim.sim_config import SimConfig
from galley_sim.simulator import KitchenSim

_LATCHED = QoS.latched()
#: Rotation from a MuJoCo camera frame (x right, y up, z backward) to a ROS optical frame
#: (x right, y down, z forward): 180 degrees about x.
_OPTICAL = Transform(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))
CAMERAS = {"base": "base_camera", "wrist": "wrist_camera"}


class SimNode(Node):
    name = "sim"
    Config = SimConfig
    subscribes = (
        Subscribes("cmd_vel", "geometry_msgs/msg/Twist", "on_cmd_vel"),
        Subscribes("arm/joint_command", "sensor_msgs/msg/JointState", "on_joint_command"),
        Subscribes("sim/teleport", "geometry_msgs/msg/PoseStamped", "on_teleport"),
        Subscribes("sim/render_top_down", "std_msgs/msg/Empty", "on_render_top_down"),
    )
    publishes = (
        Publishes("odom", "nav_msgs/msg/Odometry"),
        Publishes("joint_states", "sensor_msgs/msg/JointState"),
        Publishes("scan", "sensor_msgs/msg/LaserScan"),
        Publishes("imu/data", "sensor_msgs/msg/Imu"),
        Publishes("camera/base/image_raw", "sensor_msgs/msg/Image"),
        Publishes("camera/base/depth/image_raw", "sensor_msgs/msg/Image"),
        Publishes("camera/base/camera_info", "sensor_msgs/msg/CameraInfo"),
        Publishes("camera/wrist/image_raw", "sensor_msgs/msg/Image"),
        Publishes("camera/wrist/camera_info", "sensor_msgs/msg/CameraInfo"),
        Publishes("camera/top_down/image_raw", "sensor_msgs/msg/Image", _LATCHED),
        Publishes("sim/ground_truth/base_pose", "geometry_msgs/msg/PoseStamped"),
        Publishes("sim/contacts", "galley_msgs/msg/Contacts"),
        Publishes("sim/preflight", "diagnostic_msgs/msg/DiagnosticArray", _LATCHED),
        Publishes("/clock", "rosgraph_msgs/msg/Clock"),
    )
    timers = (Timer("on_tick", period_s=lambda c: 1.0 / (c.tick_rate_hz * c.real_time_factor)),)

    def __init__(self, host: Any, config: SimConfig) -> None:
        super().__init__(host, config)
        c = config
        self.scene = find_scene(c.scene)
        self.sim = KitchenSim(
            self.scene,
            SimOptions(
                timestep_s=1.0 / c.physics_rate_hz,
                image_width=c.image_width,
                image_height=c.image_height,
                hide_zones_from_robot_cameras=c.hide_zones_from_robot_cameras,
            ),
        )
        self._substeps = round(c.physics_rate_hz / c.tick_rate_hz)
        self._every = {
            name: round(c.tick_rate_hz / getattr(c, f"{name}_rate_hz"))
            for name in ("state", "scan", "imu", "camera")
        }
        self._tick = 0
        self._stamp_cache: tuple[int, Any] = (-1, None)
        self._cmd_time_s: float | None = None
        self._velocity_targets: dict[str, float] = {}
        self._warned: set[str] = set()
        self.reset(self._load_episode())

    def _load_episode(self) -> Episode:
        c = self.config
        if c.episode_file:
            try:
                return Episode.from_dict(json.loads(Path(c.episode_file).read_text()))
            except (OSError, ValueError, KeyError, TypeError) as err:
                raise ConfigError(
                    "episode_file", c.episode_file, f"a readable episode JSON file ({err})"
                ) from None
        return sample_episode(self.scene, c.seed)

    # -- episodes ------------------------------------------------------------------------------

    def reset(self, episode: Episode) -> None:
        """Start an episode: place everything, publish static TF and (once wanted) the top-down image."""
        self.sim.reset(episode)
        self._stamp_cache = (-1, None)
        c = self.config  # the 50 Hz TF message's frames: the base's two, the robot's, the objects'
        self._tf_frames = [
            (c.map_frame, c.odom_frame),
            (c.odom_frame, c.base_frame),
            *((self._frame(p), ch) for p, ch in ROBOT_FRAMES),
            *((c.map_frame, f"object/{n}") for n in self.sim.object_names),
        ]
        self._cmd_time_s = None
        self._velocity_targets.clear()
        self.episode = episode
        self.log.info(
            f"episode of {episode.scene!r}, seed {episode.seed}: robot at "
            f"({episode.robot_start.x:.2f}, {episode.robot_start.y:.2f}), objects "
            + ", ".join(f"{p.name}@{p.zone}->{p.goal_zone}" for p in episode.objects)
        )
        self._publish_preflight()
        self._publish_static_tf()
        self._top_down_due = True  # rendered at the first tick that finds a subscriber
        self._publish_top_down()
        self._publish_state()

    def _publish_preflight(self) -> None:
        """Latched OK on /sim/preflight: reached only when KitchenSim.reset's preflight passed."""
        episode = self.episode
        values = {"scene": episode.scene, "seed": str(episode.seed), "episode": json.dumps(episode.to_dict())}
        status = {
            "level": 0,
            "name": "sim: preflight",
            "message": "preflight passed: collision geometry and masses present, nothing interpenetrates",
            "hardware_id": episode.scene,
            "values": [{"key": k, "value": v} for k, v in values.items()],
        }
        self.publish(
            "sim/preflight",
            self.msg("diagnostic_msgs/msg/DiagnosticArray", header=self._header(""), status=[status]),
        )

    @property
    def _top_size(self) -> tuple[int, int]:
        top = self.scene.extras.get("top_down", {})
        return int(top.get("width_px", 640)), int(top.get("height_px", 480))

    # -- commands ------------------------------------------------------------------------------

    def on_cmd_vel(self, msg: Any) -> None:
        v, w = float(msg.linear.x), float(msg.angular.z)
        if not (math.isfinite(v) and math.isfinite(w)):
            self._warn_once("cmd_nan", f"ignored /cmd_vel with a non-finite value ({v}, {w}); the base stops")
            v, w = 0.0, 0.0
        self.sim.set_base_command(v, w)
        self._cmd_time_s = self.sim.time_s

    def on_joint_command(self, msg: Any) -> None:
        names = list(msg.name)
        positions, velocities = list(msg.position), list(msg.velocity)
        valid = (*self.sim.joint_names, "gripper")
        targets: dict[str, float] = {}
        for i, name in enumerate(names):
            if name not in valid:
                self._warn_once(
                    f"joint:{name}",
                    f"/arm/joint_command names unknown joint {name!r}; joints: {', '.join(valid)}",
                )
                continue
            if i < len(positions):
                targets[name] = float(positions[i])
                self._velocity_targets.pop(name, None)
            elif i < len(velocities):
                self._velocity_targets[name] = float(velocities[i])
        try:
            self.sim.set_joint_targets(targets)
        except ValueError as err:
            self._warn_once("joint_nan", f"ignored /arm/joint_command: {err}")

    def on_teleport(self, msg: Any) -> None:
        """Put the base (``base_link``) or an object (``object/<name>``) at a map pose, or into the gripper.

        The frame_id says which; ``gripper/<name>`` is :meth:`KitchenSim.hand_over` (the pose is
        not read). For evaluation only (Kitchen-R's "teleport to the next step's start after a failure").
        """
        frame = msg.header.frame_id
        pose = pose2d_from_pose_msg(msg.pose)
        try:
            if frame == self.config.base_frame:
                self.sim.teleport_base(pose)
            elif frame.startswith("object/"):
                self.sim.teleport_object(frame.removeprefix("object/"), pose, float(msg.pose.position.z))
            elif frame.startswith("gripper/"):
                self.sim.hand_over(frame.removeprefix("gripper/"))
                self.log.info(
                    f"handed {frame.removeprefix('gripper/')} over into the gripper, the arm tucked"
                )
                return
            else:
                choices = f"{self.config.base_frame!r}, 'object/<name>' or 'gripper/<name>'"
                raise KeyError(f"frame_id {frame!r}: teleport {choices}")
        except (KeyError, ValueError) as err:
            self.log.warning(f"ignored /sim/teleport: {err.args[0] if err.args else err}")
            return
        self.log.info(f"teleported {frame} to ({pose.x:.2f}, {pose.y:.2f}, {pose.theta:.2f})")

    def on_render_top_down(self, msg: Any) -> None:
        """Render the top-down image again at the next tick (a replan plans on the world as it is)."""
        self._top_down_due = True

    def _warn_once(self, key: str, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.log.warning(text)

    # -- stepping ------------------------------------------------------------------------------

    def on_tick(self) -> None:
        c = self.config
        dt = self._substeps / c.physics_rate_hz
        if self._velocity_targets:
            current = self.sim.joint_targets()
            self.sim.set_joint_targets(
                {n: current.get(n, 0.0) + v * dt for n, v in self._velocity_targets.items()}
            )
        if (
            c.cmd_vel_timeout_s > 0
            and self._cmd_time_s is not None
            and self.sim.time_s - self._cmd_time_s > c.cmd_vel_timeout_s
        ):
            self.sim.set_base_command(0.0, 0.0)
            self._cmd_time_s = None
        due = {name: (self._tick + 1) % every == 0 for name, every in self._every.items()}
        imu_read = due["imu"] and self.has_readers("imu/data")  # else no sensor is evaluated
        self.sim.step(self._substeps, sensors=imu_read)
        self._tick += 1
        if self._top_down_due:
            self._publish_top_down()
        if c.publish_clock:
            self.publish("/clock", self.msg("rosgraph_msgs/msg/Clock", clock=self._stamp()))
        if due["state"]:
            self._publish_state()
        if due["imu"]:
            self.publish_lazily("imu/data", self._stamp_ns(), self._imu_msg)
        if due["scan"]:
            self.publish_lazily("scan", self._stamp_ns(), self._scan_msg)
        if due["camera"] and c.cameras_enabled:
            self._publish_cameras()

    def _stamp(self) -> Any:
        """The current physics time as a Time message, built once per tick."""
        if self._stamp_cache[0] != self._tick:
            self._stamp_cache = (self._tick, messages.time_msg(self._stamp_ns()))
        return self._stamp_cache[1]

    def _stamp_ns(self) -> int:
        """:meth:`_stamp` in nanoseconds."""
        return round(self.sim.time_s * 1e9)

    def _header(self, frame: str) -> Any:
        return messages.message_class("std_msgs/msg/Header")(stamp=self._stamp(), frame_id=frame)

    # -- publishing ----------------------------------------------------------------------------

    def _publish_state(self) -> None:
        c, sim = self.config, self.sim
        stamp = self._stamp()  # one Time message shared by this state's messages
        cls = messages.message_class  # 50 Hz: messages without sequences built directly
        self.publish(
            "odom", odometry_msg(self._header(c.odom_frame), c.base_frame, sim.odom, *sim.odom_twist)
        )
        ground_truth = sim.base_pose()
        planar = [
            (c.map_frame, c.odom_frame, sim.map_to_odom(ground_truth)),
            (c.odom_frame, c.base_frame, sim.odom),
        ]
        base = np.array([[pose.x, pose.y, 0.0, *pose.quaternion()] for _, _, pose in planar])
        robot, objects = sim.relative_pose_array(ROBOT_FRAMES), sim.object_pose_array()
        self.send_transform_values(self._tf_frames, np.concatenate((base, robot, objects)), stamp)
        position, velocity, effort = sim.joint_state()
        self.publish(
            "joint_states",
            self.msg(
                "sensor_msgs/msg/JointState",
                header=self._header(""),
                name=list(sim.joint_names),
                position=position,
                velocity=velocity,
                effort=effort,
            ),
        )
        self.publish(
            "sim/ground_truth/base_pose",
            cls("geometry_msgs/msg/PoseStamped")(
                header=self._header(c.map_frame), pose=pose_msg(ground_truth)
            ),
        )
        contacts = sim.static_contacts()
        self.publish(
            "sim/contacts",
            self.msg(
                "galley_msgs/msg/Contacts",
                header=self._header(c.map_frame),
                robot_geoms=[a for a, _ in contacts],
                obstacle_geoms=[b for _, b in contacts],
            ),
        )

    def _frame(self, body: str) -> str:
        return self.config.base_frame if body == "base_link" else body

    def _publish_static_tf(self) -> None:
        sim = self.sim
        transforms = [
            transform_stamped_msg(t, self._frame(p), ch, 0)
            for p, ch, t in sim.relative_transforms(STATIC_FRAMES)
        ]
        base = sim.body_transform("base_link")
        transforms.append(
            transform_stamped_msg(
                base.inverse() * sim.site_transform("imu"), self.config.base_frame, "imu_link", 0
            )
        )
        for camera in CAMERAS.values():
            link = sim.body_transform(f"{camera}_link")
            optical = link.inverse() * sim.camera_transform(camera) * _OPTICAL
            transforms.append(transform_stamped_msg(optical, f"{camera}_link", f"{camera}_optical", 0))
        self.send_transforms(transforms, static=True)

    def _publish_top_down(self) -> None:
        """The episode's top-down image, latched, once something subscribes to it.

        Like the robot cameras it is rendered only for a receiver (the task planner, a recorder):
        a 640x480 image costs software OpenGL about 0.1 s, a few per cent of an oracle episode run
        without the planner. Published at the first tick that finds a subscriber, so a late one
        gets it then, and every later one from the latched publisher.
        """
        if not self.has_subscribers("camera/top_down/image_raw"):
            return
        self._top_down_due = False
        top = self.sim.render("top_down", width=self._top_size[0], height=self._top_size[1])
        self.publish("camera/top_down/image_raw", self._image(top, "top_down_camera", "rgb8"))

    def _imu_msg(self) -> Any:
        """The IMU's message; only after a step that evaluated the sensors (see on_tick)."""
        (qx, qy, qz, qw), (gx, gy, gz), (ax, ay, az) = (v.tolist() for v in self.sim.imu())
        cls = messages.message_class  # 100 Hz: built directly (no sequence to convert)
        vector = cls("geometry_msgs/msg/Vector3")
        return cls("sensor_msgs/msg/Imu")(
            header=self._header("imu_link"),
            orientation=cls("geometry_msgs/msg/Quaternion")(x=qx, y=qy, z=qz, w=qw),
            orientation_covariance=np.zeros(9),
            angular_velocity=vector(x=gx, y=gy, z=gz),
            angular_velocity_covariance=np.zeros(9),
            linear_acceleration=vector(x=ax, y=ay, z=az),
            linear_acceleration_covariance=np.zeros(9),
        )

    def _scan_msg(self) -> Any:
        sim = self.sim
        lo, hi = sim.options.lidar_range_m
        angles = sim.lidar_angles
        return self.msg(
            "sensor_msgs/msg/LaserScan",
            header=self._header("laser"),
            angle_min=float(angles[0]),
            angle_max=float(angles[-1]),
            angle_increment=float(angles[1] - angles[0]),
            time_increment=0.0,
            scan_time=1.0 / self.config.scan_rate_hz,
            range_min=lo,
            range_max=hi,
            ranges=sim.scan(),
        )

    def _render_image(self, camera: str, frame: str) -> Any:
        return self._image(self.sim.render(camera), frame, "rgb8")

    def _image(self, pixels: np.ndarray[Any, Any], frame: str, encoding: str) -> Any:
        height, width = pixels.shape[:2]
        channels = pixels.shape[2] if pixels.ndim == 3 else 1
        return self.msg(
            "sensor_msgs/msg/Image",
            header=self._header(frame),
            height=height,
            width=width,
            encoding=encoding,
            is_bigendian=0,
            step=width * channels * pixels.itemsize,
            data=np.ascontiguousarray(pixels).view(np.uint8).reshape(-1),
        )

    def _camera_info(self, camera: str, frame: str) -> Any:
        c = self.config
        fx, fy, cx, cy = self.sim.camera_intrinsics(camera, c.image_width, c.image_height)
        return self.msg(
            "sensor_msgs/msg/CameraInfo",
            header=self._header(frame),
            height=c.image_height,
            width=c.image_width,
            distortion_model="plumb_bob",
            d=np.zeros(5),
            k=[fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0],
            r=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            p=[fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0],
        )

    def _publish_cameras(self) -> None:
        # An image nobody reads is not rendered (rendering is most of a camera tick's cost): a
        # rate watch gets its stamp. camera_info goes out regardless, it costs next to nothing.
        # The images read are rendered together (one read-back), then published camera by camera.
        wanted = [c for short, c in CAMERAS.items() if self.has_readers(f"camera/{short}/image_raw")]
        images = dict(zip(wanted, self.sim.render_cameras(wanted) if wanted else [], strict=True))
        for short, camera in CAMERAS.items():
            frame = f"{camera}_optical"
            if camera in images:
                self.publish(f"camera/{short}/image_raw", self._image(images[camera], frame, "rgb8"))
            elif self.has_subscribers(f"camera/{short}/image_raw"):  # a rate watch: the stamp
                image = partial(self._render_image, camera, frame)  # (for a reader come since)
                self.publish_lazily(f"camera/{short}/image_raw", self._stamp_ns(), image)
            self.publish(f"camera/{short}/camera_info", self._camera_info(camera, frame))
        if self.config.depth_enabled and self.has_subscribers("camera/base/depth/image_raw"):
            depth = self.sim.render("base_camera", depth=True).astype(np.float32)
            self.publish("camera/base/depth/image_raw", self._image(depth, "base_camera_optical", "32FC1"))

    def on_shutdown(self) -> None:
        self.sim.close()
