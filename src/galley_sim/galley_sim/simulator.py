"""The kitchen simulator: MuJoCo physics of a scene with galley's mobile manipulator.

:class:`KitchenSim` knows nothing of ROS. It steps physics, drives the base as a unicycle and the
arm with position servos, integrates wheel odometry from the base's measured motion, and reads the
sensors (LiDAR through ``mj_multiRay``, IMU, cameras through ``mujoco.Renderer``). The ``sim`` node
(:mod:`galley_sim.sim_node`) turns this into ROS topics.

Odometry is integrated from the base's measured forward speed and yaw rate (what wheel encoders
and a gyro report), so it drifts when the base is pushed sideways; ``map -> odom`` is then the
ground-truth correction (perfect localisation), as a simulator's TF tree provides.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from galley_core.episode import Episode
from galley_core.geometry import Pose2D, Transform, normalize_angle
from galley_core.navigation.unicycle import integrate_unicycle
from galley_core.scene import Scene, SceneError
from galley_sim.mjcf import OBJECT_GROUP, STATIC_GROUP, ZONE_GROUP, object_body_name, scene_xml
from galley_sim.rendering import SideBySideRenderer, context_settings

__all__ = ["ARM_JOINTS", "FINGER_JOINTS", "KitchenSim", "PreflightError", "SimOptions"]

ARM_JOINTS = ("waist", "shoulder", "elbow", "forearm_roll", "wrist_angle", "wrist_rotate")
FINGER_JOINTS = ("left_finger", "right_finger")
FINGER_MAX_M = 0.04
#: Physics steps between updates of the base's velocity targets and of odometry (10 ms at 500 Hz).
BASE_CONTROL_STEPS = 5
_NO_SENSORS = int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
#: Arm joint positions (rad) of the tucked pose an episode starts in: clear of the base camera's view.
TUCKED = (0.0, -1.85, 2.6, 0.0, 0.82, 0.0)
#: Robot bodies that move relative to their parent (a joint between them), published on /tf.
ROBOT_FRAMES = (
    ("arm_base_link", "waist_link"),
    ("waist_link", "shoulder_link"),
    ("shoulder_link", "elbow_link"),
    ("elbow_link", "forearm_link"),
    ("forearm_link", "wrist_link"),
    ("wrist_link", "gripper_link"),
    ("gripper_link", "left_finger_link"),
    ("gripper_link", "right_finger_link"),
)
#: Robot bodies fixed to their parent (no joint), published once on /tf_static as
#: robot_state_publisher does for fixed joints.
STATIC_FRAMES = (
    ("base_link", "laser"),
    ("base_link", "base_camera_link"),
    ("base_link", "arm_base_link"),
    ("gripper_link", "wrist_camera_link"),
)


class PreflightError(SceneError):
    """The scene or episode cannot be simulated as given; the message names the object and the fix."""


@dataclass(frozen=True)
class SimOptions:
    """Options of the simulator that are fixed for a run.

    Attributes:
        timestep_s: physics step, seconds (500 Hz by default).
        image_width, image_height: base and wrist camera resolution, pixels.
        hide_zones_from_robot_cameras: Kitchen-R hides the coloured zones from the policy's cameras.
        lidar_beams: rays over 360 degrees.
        lidar_range_m: (min, max) range, metres.
    """

    timestep_s: float = 0.002
    image_width: int = 320
    image_height: int = 240
    hide_zones_from_robot_cameras: bool = True
    lidar_beams: int = 360
    lidar_range_m: tuple[float, float] = (0.05, 12.0)


def _transform(pos: NDArray[np.float64], quat_wxyz: NDArray[np.float64]) -> Transform:
    """A Transform from MuJoCo's position and (w, x, y, z) quaternion, which are always valid."""
    w, x, y, z = quat_wxyz
    return Transform.trusted(np.array(pos, dtype=float), np.array([x, y, z, w]))


class KitchenSim:
    """MuJoCo simulation of one scene; call :meth:`reset` with an episode before stepping."""

    def __init__(self, scene: Scene, options: SimOptions | None = None) -> None:
        self.scene = scene
        self.options = options or SimOptions()
        o = self.options
        self.model = mujoco.MjModel.from_xml_string(
            scene_xml(scene, image_width=o.image_width, image_height=o.image_height, timestep_s=o.timestep_s)
        )
        self.data = mujoco.MjData(self.model)
        m = self.model
        self._base_qpos = [m.joint(n).qposadr[0] for n in ("base_x", "base_y", "base_yaw")]
        self._base_dof = [m.joint(n).dofadr[0] for n in ("base_x", "base_y", "base_yaw")]
        self._base_act = [m.actuator(n).id for n in ("base_x", "base_y", "base_yaw")]
        # Views into the model and data (their memory lives as long as they do), so that step(),
        # run 100 times per simulated second, does not build new ones on every access.
        self._opt, self._qpos, self._ctrl = m.opt, self.data.qpos, self.data.ctrl
        self.joint_names = ARM_JOINTS + FINGER_JOINTS
        self._joint_qpos = np.array([m.joint(n).qposadr[0] for n in self.joint_names])
        self._joint_dof = np.array([m.joint(n).dofadr[0] for n in self.joint_names])
        self._joint_act = np.array([m.actuator(n).id for n in self.joint_names])
        self._joint_range = np.array([m.joint(n).range for n in self.joint_names])
        self._object_bodies = {o.name: m.body(object_body_name(o.name)).id for o in scene.objects}
        self._object_qpos = {o.name: m.joint(object_body_name(o.name)).qposadr[0] for o in scene.objects}
        self._object_dof = {o.name: m.joint(object_body_name(o.name)).dofadr[0] for o in scene.objects}
        self._robot_bodies = {i for i in range(m.nbody) if self._is_robot_body(i)}
        self._laser_site = m.site("laser").id
        self._imu_slices = [
            slice(int(s.adr[0]), int(s.adr[0] + s.dim[0]))
            for s in (m.sensor(n) for n in ("imu_accelerometer", "imu_gyro", "imu_orientation"))
        ]
        beams = o.lidar_beams
        self.lidar_angles = -math.pi + 2.0 * math.pi * np.arange(beams) / beams
        self._ray_dirs_local = np.stack(
            [np.cos(self.lidar_angles), np.sin(self.lidar_angles), np.zeros(beams)], 1
        )
        self._ray_geomid = np.zeros(beams, dtype=np.int32)
        self._ray_dist = np.zeros(beams, dtype=np.float64)
        self._ray_groups = np.zeros(6, dtype=np.uint8)
        self._ray_groups[[STATIC_GROUP, OBJECT_GROUP]] = 1
        self._renderers: dict[tuple[int, int], Any] = {}
        self._side_by_side: dict[tuple[int, int, int], SideBySideRenderer] = {}
        self._pair_ids: dict[tuple[tuple[str, str], ...], tuple[NDArray[Any], NDArray[Any]]] = {}
        self._static_geoms = {
            i
            for i in range(m.ngeom)
            if m.geom_bodyid[i] == 0 or m.body(m.geom_bodyid[i]).name.startswith("background/")
        }
        self.command = (0.0, 0.0)
        self.odom = Pose2D()
        self.odom_twist = (0.0, 0.0)
        self.episode: Episode | None = None

    def _is_robot_body(self, body_id: int) -> bool:
        m = self.model
        root = m.body_rootid[body_id]
        return bool(m.body(root).name == "base_link")

    # -- episodes ------------------------------------------------------------------------------

    def reset(self, episode: Episode) -> None:
        """Put the robot and the objects where the episode says, apply its colours, run preflight.

        Raises:
            PreflightError: an object without collision geometry or mass, objects or robot
                interpenetrating at spawn; the message names them.
        """
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        start = episode.robot_start
        d.qpos[self._base_qpos] = [start.x, start.y, start.theta]
        # Tucked: upper arm up, forearm and gripper folded down in front of the pedestal, gripper open.
        ready = dict(zip(ARM_JOINTS, TUCKED, strict=True)) | {
            "left_finger": FINGER_MAX_M,
            "right_finger": FINGER_MAX_M,
        }
        for i, name in enumerate(self.joint_names):
            d.qpos[self._joint_qpos[i]] = ready[name]
            d.ctrl[self._joint_act[i]] = ready[name]
        placed = set()
        for placement in episode.objects:
            spec = self.scene.object(placement.name)
            zone = self.scene.zone(placement.zone)
            adr = self._object_qpos[spec.name]
            half = placement.yaw / 2.0
            d.qpos[adr : adr + 7] = [
                placement.x,
                placement.y,
                zone.z + 0.0005,
                math.cos(half),
                0,
                0,
                math.sin(half),
            ]
            placed.add(spec.name)
        for i, spec in enumerate(o for o in self.scene.objects if o.name not in placed):
            adr = self._object_qpos[spec.name]  # unused objects wait off the map, apart
            d.qpos[adr : adr + 7] = [
                self.scene.bounds[0] - 2.0 - i,
                self.scene.bounds[1] - 2.0,
                0.0,
                1,
                0,
                0,
                0,
            ]
        self._apply_colors(episode)
        self.command = (0.0, 0.0)
        self.odom = Pose2D()
        self.odom_twist = (0.0, 0.0)
        self._odom_origin = start
        self.episode = episode
        mujoco.mj_forward(m, d)
        self.preflight()

    def _apply_colors(self, episode: Episode) -> None:
        m = self.model
        for key, rgba in episode.colors.items():
            if key == "floor":
                m.geom("floor").rgba = rgba
            elif key == "walls":
                for box in self.scene.boxes:
                    if not box.surface and box.name.startswith("wall"):
                        m.geom(box.name).rgba = rgba
            else:
                body = m.body(f"background/{key}")
                for g in range(body.geomadr[0], body.geomadr[0] + body.geomnum[0]):
                    m.geom_rgba[g] = rgba

    def preflight(self) -> None:
        """Check the scene and the current state can be simulated; see :meth:`reset`."""
        m, d = self.model, self.data
        problems = []
        for spec in self.scene.objects:
            body = m.body(object_body_name(spec.name))
            geoms = range(body.geomadr[0], body.geomadr[0] + body.geomnum[0])
            if not any(m.geom_contype[g] or m.geom_conaffinity[g] for g in geoms):
                problems.append(f"object {spec.name!r} has no collision geometry")
            if body.mass[0] <= 0:
                problems.append(f"object {spec.name!r} has no mass")
        for i in range(d.ncon):
            c = d.contact[i]
            if c.dist > -1e-3:
                continue
            b1, b2 = m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2]
            who = sorted({m.body(b1).name, m.body(b2).name})
            depth = -c.dist * 1000
            if b1 in self._robot_bodies or b2 in self._robot_bodies:
                problems.append(
                    f"the robot starts in collision ({' and '.join(who)} overlap by {depth:.0f} mm)"
                )
            else:
                problems.append(f"{' and '.join(who)} interpenetrate at spawn by {depth:.0f} mm")
        if problems:
            raise PreflightError(
                "preflight failed: "
                + "; ".join(sorted(set(problems)))
                + " (fix the scene file or the episode)"
            )

    # -- commands ------------------------------------------------------------------------------

    def set_base_command(self, v_mps: float, w_rps: float) -> None:
        """Forward speed (m/s) and yaw rate (rad/s) of the base, held until the next command."""
        if not (math.isfinite(v_mps) and math.isfinite(w_rps)):
            raise ValueError(f"base command ({v_mps}, {w_rps}) is not finite")
        self.command = (v_mps, w_rps)

    def set_joint_targets(self, targets: Mapping[str, float]) -> None:
        """Position targets (rad, or m for fingers) by joint name, clipped to the joint limits.

        ``gripper`` sets both fingers from an opening fraction: 0 closed, 1 fully open.

        Raises:
            KeyError: an unknown joint name; the message lists the valid ones.
            ValueError: a non-finite target.
        """
        for name, value in targets.items():
            if not math.isfinite(value):
                raise ValueError(f"joint target {name} = {value} is not finite")
            if name == "gripper":
                opening = min(max(value, 0.0), 1.0) * FINGER_MAX_M
                for finger in FINGER_JOINTS:
                    self.data.ctrl[self.model.actuator(finger).id] = opening
                continue
            if name not in self.joint_names:
                raise KeyError(f"no joint {name!r}; joints: {', '.join(self.joint_names)}, gripper")
            i = self.joint_names.index(name)
            lo, hi = self._joint_range[i]
            self.data.ctrl[self._joint_act[i]] = min(max(value, lo), hi)

    def joint_targets(self) -> dict[str, float]:
        """The current position targets by joint name."""
        return {n: float(self.data.ctrl[a]) for n, a in zip(self.joint_names, self._joint_act, strict=True)}

    # -- time ----------------------------------------------------------------------------------

    @property
    def time_s(self) -> float:
        return float(self.data.time)

    def step(self, count: int = 1) -> None:
        """Advance physics by ``count`` steps, driving the base as a unicycle and integrating odometry.

        The base's world-frame velocity targets are set every :data:`BASE_CONTROL_STEPS` steps
        from the heading predicted for the middle of that interval, and odometry integrates the
        measured forward motion (what wheel encoders see: sideways pushes are not counted) and
        yaw change over it, exactly as an arc.

        MuJoCo's sensors (the IMU) are evaluated in the last of the ``count`` steps only: their
        values are outputs that no dynamics reads, so :meth:`imu` after this call is what it would
        be had every step computed them (the accelerometer alone runs an extra RNE pass per step).
        """
        m, d, qpos, ctrl = self.model, self.data, self._qpos, self._ctrl
        v, w = self.command
        bx, by, byaw = self._base_qpos
        ax, ay, ayaw = self._base_act
        timestep = self._opt.timestep
        done = 0
        while done < count:
            n = min(BASE_CONTROL_STEPS, count - done)
            dt = n * timestep
            x0, y0, yaw0 = qpos.item(bx), qpos.item(by), qpos.item(byaw)
            heading = yaw0 + 0.5 * w * dt
            ctrl[ax] = v * math.cos(heading)
            ctrl[ay] = v * math.sin(heading)
            ctrl[ayaw] = w
            sensed = int(done + n == count)  # the call's last physics step evaluates the sensors
            if n > sensed:
                self._step_without_sensors(n - sensed)
            if sensed:
                mujoco.mj_step(m, d)
            dyaw = qpos.item(byaw) - yaw0
            mid = yaw0 + 0.5 * dyaw
            forward = ((qpos.item(bx) - x0) * math.cos(mid) + (qpos.item(by) - y0) * math.sin(mid)) / dt
            self.odom = integrate_unicycle(self.odom, forward, dyaw / dt, dt)
            self.odom_twist = (forward, dyaw / dt)
            done += n

    def _step_without_sensors(self, n: int) -> None:
        opt = self._opt
        flags = opt.disableflags
        opt.disableflags = flags | _NO_SENSORS
        try:
            mujoco.mj_step(self.model, self.data, nstep=n)
        finally:
            opt.disableflags = flags

    def teleport_base(self, pose: Pose2D) -> None:
        """Put the base at a map pose, at rest (odometry goes on; ``map -> odom`` absorbs the jump)."""
        if not all(math.isfinite(v) for v in (pose.x, pose.y, pose.theta)):
            raise ValueError(f"teleport pose {pose} is not finite")
        self.data.qpos[self._base_qpos] = [pose.x, pose.y, pose.theta]
        self.data.qvel[self._base_dof] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def teleport_object(self, name: str, pose: Pose2D, z: float) -> None:
        """Put an object (its bottom centre) at (x, y, z) with yaw, at rest.

        Raises:
            KeyError: no such object; the message lists them.
        """
        if name not in self._object_qpos:
            raise KeyError(f"no object {name!r}; objects: {', '.join(self._object_qpos)}")
        if not all(math.isfinite(v) for v in (pose.x, pose.y, pose.theta, z)):
            raise ValueError(f"teleport pose of {name} is not finite")
        adr, dof = self._object_qpos[name], self._object_dof[name]
        half = pose.theta / 2.0
        self.data.qpos[adr : adr + 7] = [pose.x, pose.y, z, math.cos(half), 0.0, 0.0, math.sin(half)]
        self.data.qvel[dof : dof + 6] = 0.0
        mujoco.mj_forward(self.model, self.data)

    # -- state ---------------------------------------------------------------------------------

    def base_pose(self) -> Pose2D:
        """Ground-truth base pose in the map frame."""
        x, y, yaw = self.data.qpos[self._base_qpos].tolist()
        return Pose2D(x, y, normalize_angle(yaw))

    def map_to_odom(self) -> Pose2D:
        """``T_map_odom`` that makes ``map -> odom -> base_link`` equal the ground truth (planar)."""
        base, odom = self.base_pose(), self.odom
        yaw = normalize_angle(base.theta - odom.theta)
        c, s = math.cos(yaw), math.sin(yaw)
        return Pose2D(base.x - (c * odom.x - s * odom.y), base.y - (s * odom.x + c * odom.y), yaw)

    def joint_state(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Positions, velocities and actuator forces of :attr:`joint_names`."""
        d = self.data
        return (
            d.qpos[self._joint_qpos].copy(),
            d.qvel[self._joint_dof].copy(),
            d.actuator_force[self._joint_act].copy(),
        )

    def body_transform(self, name: str) -> Transform:
        """``T_map_body`` of any body."""
        b = self.data.body(name)
        return _transform(b.xpos, b.xquat)

    def object_poses(self) -> dict[str, Transform]:
        """``T_map_object`` of every manipulable object (origin at its bottom centre)."""
        d = self.data
        return {n: _transform(d.xpos[b], d.xquat[b]) for n, b in self._object_bodies.items()}

    def object_velocity(self, name: str) -> NDArray[np.float64]:
        """Linear velocity of an object, m/s."""
        adr = self._object_dof[name]
        return self.data.qvel[adr : adr + 3].copy()

    def relative_transforms(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str, Transform]]:
        """``T_parent_child`` for (parent, child) body pairs (computed by MuJoCo's pose functions)."""
        return [
            (parent, child, Transform.trusted(np.array(t), np.array(q)))
            for parent, child, t, q in self.relative_pose_values(pairs)
        ]

    def relative_pose_values(
        self, pairs: Iterable[tuple[str, str]]
    ) -> list[tuple[str, str, list[float], list[float]]]:
        """:meth:`relative_transforms` as Python floats: (parent, child, [x, y, z], [qx, qy, qz, qw]).

        What the sim node puts in TF messages 50 times per simulated second, without building a
        :class:`Transform` for each: translations ``R_parentᵀ (p_child - p_parent)`` for all pairs
        in one numpy product, rotations ``conj(q_parent) q_child`` in float arithmetic (for ten
        quaternions cheaper than numpy's).
        """
        pairs = tuple(pairs)
        ids = self._pair_ids.get(pairs)
        if ids is None:
            ids = self._pair_ids[pairs] = (
                np.array([self.model.body(p).id for p, _ in pairs], dtype=int),
                np.array([self.model.body(c).id for _, c in pairs], dtype=int),
            )
        parents, children = ids
        xpos, xquat = self.data.xpos, self.data.xquat
        rotations = self.data.xmat[parents].reshape(-1, 3, 3)
        positions = np.einsum("nji,nj->ni", rotations, xpos[children] - xpos[parents]).tolist()
        out = []
        for (parent, child), t, (aw, ax, ay, az), (bw, bx, by, bz) in zip(
            pairs, positions, xquat[parents].tolist(), xquat[children].tolist(), strict=True
        ):
            q = [
                aw * bx - ax * bw - ay * bz + az * by,
                aw * by + ax * bz - ay * bw - az * bx,
                aw * bz - ax * by + ay * bx - az * bw,
                aw * bw + ax * bx + ay * by + az * bz,
            ]
            out.append((parent, child, t, q))
        return out

    def object_pose_values(self) -> list[tuple[str, list[float], list[float]]]:
        """:meth:`object_poses` as Python floats: (name, [x, y, z], [qx, qy, qz, qw])."""
        xpos, xquat = self.data.xpos, self.data.xquat
        out = []
        for name, b in self._object_bodies.items():
            w, x, y, z = xquat[b].tolist()
            out.append((name, xpos[b].tolist(), [x, y, z, w]))
        return out

    def site_transform(self, name: str) -> Transform:
        """``T_map_site`` of a site, e.g. ``tcp`` (the tool centre point between the fingertips)."""
        s = self.data.site(name)
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, s.xmat)
        return _transform(s.xpos, quat)

    # -- sensors -------------------------------------------------------------------------------

    def scan(self) -> NDArray[np.float32]:
        """LiDAR ranges (m) at :attr:`lidar_angles` in the laser frame; inf where nothing is hit."""
        m, d = self.model, self.data
        site = d.site(self._laser_site)
        rot = site.xmat.reshape(3, 3)
        dirs = (self._ray_dirs_local @ rot.T).ravel()
        lo, hi = self.options.lidar_range_m
        mujoco.mj_multiRay(
            m,
            d,
            site.xpos.copy(),
            dirs,
            self._ray_groups,
            1,
            -1,
            self._ray_geomid,
            self._ray_dist,
            None,
            len(self.lidar_angles),
            hi,
        )
        ranges = self._ray_dist.astype(np.float32)
        ranges[(self._ray_geomid < 0) | (ranges > hi)] = np.inf
        ranges[ranges < lo] = np.nan
        return ranges

    def imu(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(orientation quaternion x y z w in map, angular velocity rad/s, linear acceleration m/s²)."""
        acc, gyro, quat = (self.data.sensordata[s] for s in self._imu_slices)
        return quat[[1, 2, 3, 0]], gyro.copy(), acc.copy()

    def _renderer(self, width: int, height: int) -> Any:
        key = (width, height)
        if key not in self._renderers:
            # Each renderer's offscreen buffer only as large as its images: the model's is sized
            # for the largest (the top-down view), and clearing and resolving a 640x480 4x-MSAA
            # buffer for a 320x240 image cost software GL about 15 % of each render. The pixels
            # are the same. The renderer keeps this model, so episode colours still apply.
            # Small images get the robot cameras' coarser round geoms (rendering.py), so that a
            # depth image's edges fall where its RGB image's do.
            with context_settings(self.model, (width, height), height):
                self._renderers[key] = mujoco.Renderer(self.model, height, width)
        return self._renderers[key]

    def render(
        self, camera: str, *, depth: bool = False, width: int | None = None, height: int | None = None
    ) -> NDArray[Any]:
        """An RGB image (H, W, 3) uint8, or with ``depth`` a depth image (H, W) float32 in metres.

        Drawn by ``mujoco.Renderer`` with the model's multisampling: the top-down view and the
        depth image; the robot cameras' RGB images come from :meth:`render_cameras`. Robot cameras
        do not see the zones when ``hide_zones_from_robot_cameras`` is set; the top-down camera
        always does.
        """
        o = self.options
        renderer = self._renderer(width or o.image_width, height or o.image_height)
        option = mujoco.MjvOption()  # draws groups 0-2 (static, robot, objects) by default
        option.geomgroup[ZONE_GROUP] = int(camera == "top_down" or not o.hide_zones_from_robot_cameras)
        if depth:
            renderer.enable_depth_rendering()
        else:
            renderer.disable_depth_rendering()
        renderer.update_scene(self.data, camera=camera, scene_option=option)
        return np.asarray(renderer.render())

    def render_cameras(self, cameras: Sequence[str]) -> list[NDArray[np.uint8]]:
        """RGB images (H, W, 3) uint8 of the robot cameras, drawn together and supersampled.

        What the ``sim`` node publishes (:class:`galley_sim.rendering.SideBySideRenderer`): cheaper
        with software OpenGL than one :meth:`render` per camera, and as accurate. Each
        image is the same whichever cameras it is drawn with.
        """
        o = self.options
        key = (o.image_width, o.image_height, len(cameras))
        renderer = self._side_by_side.get(key)
        if renderer is None:
            renderer = self._side_by_side[key] = SideBySideRenderer(self.model, *key)
        option = mujoco.MjvOption()
        option.geomgroup[ZONE_GROUP] = int(not o.hide_zones_from_robot_cameras)
        return renderer.render(self.data, cameras, option)

    def camera_intrinsics(self, camera: str, width: int, height: int) -> tuple[float, float, float, float]:
        """(fx, fy, cx, cy) in pixels of a perspective camera (square pixels, principal point centred)."""
        fovy = math.radians(float(self.model.cam(camera).fovy[0]))
        f = 0.5 * height / math.tan(fovy / 2.0)
        return f, f, (width - 1) / 2.0, (height - 1) / 2.0

    def camera_transform(self, camera: str) -> Transform:
        """``T_map_camera`` of a camera in MuJoCo's convention (x right, y up, looking along -z)."""
        c = self.data.cam(camera)
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, c.xmat)
        return _transform(c.xpos, quat)

    def static_contacts(self) -> list[tuple[str, str]]:
        """(robot geom, obstacle geom) pairs in contact now: walls, furniture, background objects."""
        m, d = self.model, self.data
        pairs = []
        for g1, g2 in d.contact.geom.tolist():
            if m.geom_bodyid[g1] in self._robot_bodies and g2 in self._static_geoms:
                pairs.append((m.geom(g1).name, m.geom(g2).name))
            elif m.geom_bodyid[g2] in self._robot_bodies and g1 in self._static_geoms:
                pairs.append((m.geom(g2).name, m.geom(g1).name))
        return sorted(set(pairs))

    def close(self) -> None:
        for renderer in [*self._renderers.values(), *self._side_by_side.values()]:
            renderer.close()
        self._renderers.clear()
        self._side_by_side.clear()
