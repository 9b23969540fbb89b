"""The kitchen simulator: MuJoCo physics of a scene with galley's mobile manipulator.

:class:`KitchenSim` knows nothing of ROS. It steps physics, drives the base as a unicycle and the
arm with position servos, integrates wheel odometry from the base's measured motion, and reads the
sensors (LiDAR through ``mj_multiRay``, IMU, cameras through ``mujoco.Renderer``). The ``sim`` node
(:mod:`galley_sim.sim_node`) turns this into ROS topics. The model and an episode's placement and
preflight are :mod:`galley_sim.scene_model`'s; the LiDAR and the cameras :mod:`galley_sim.sensors`'.

Odometry is integrated from the base's measured forward speed and yaw rate (what wheel encoders
and a gyro report), so it drifts when the base is pushed sideways; ``map -> odom`` is then the
ground-truth correction (perfect localisation), as a simulator's TF tree provides.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from galley_core.episode import Episode
from galley_core.geometry import Pose2D, Transform, normalize_angle
from galley_core.manipulation.poses import rotz
from galley_core.navigation.unicycle import integrate_unicycle
from galley_core.scene import Scene
from galley_sim._pose_kernels import body_rows, relative_rows
from galley_sim.scene_model import (
    ARM_JOINTS,
    FINGER_JOINTS,
    FINGER_MAX_M,
    TUCKED,
    PreflightError,
    SceneModel,
    SimOptions,
    mujoco_transform,
)
from galley_sim.sensors import Cameras, Lidar

# ARM_JOINTS, PreflightError and SimOptions are imported from here by the sim's users.
__all__ = ["ARM_JOINTS", "FINGER_JOINTS", "KitchenSim", "PreflightError", "SimOptions"]

#: Physics steps between updates of the base's velocity targets and of odometry (10 ms at 500 Hz).
BASE_CONTROL_STEPS = 5
#: Longest the fingers get to close on an object handed over (:meth:`KitchenSim.hand_over`), s.
HAND_OVER_CLOSE_S = 0.5
_NO_SENSORS = int(mujoco.mjtDisableBit.mjDSBL_SENSOR)


class KitchenSim:
    """MuJoCo simulation of one scene; call :meth:`reset` with an episode before stepping."""

    def __init__(self, scene: Scene, options: SimOptions | None = None) -> None:
        self.scene = scene
        self.options = options or SimOptions()
        built = self._scene_model = SceneModel(scene, self.options)
        self.model, self.data = m, d = built.model, built.data
        self.joint_names = built.joint_names
        # The addresses step() and the state queries (run 50 to 100 times per simulated second)
        # read, as attributes of their own; and views into the model and data (their memory
        # lives as long as they do), so that step() does not build new ones on every access.
        self._base_qpos, self._base_dof, self._base_act = built.base_qpos, built.base_dof, built.base_act
        self._joint_qpos, self._joint_dof = built.joint_qpos, built.joint_dof
        self._joint_act, self._joint_range = built.joint_act, built.joint_range
        self._object_bodies, self._object_qpos = built.object_bodies, built.object_qpos
        self._object_body_ids = np.array(list(self._object_bodies.values()), dtype=int)
        #: The scene's objects, in the order of :meth:`object_pose_array`'s rows.
        self.object_names = tuple(self._object_bodies)
        self._object_dof = built.object_dof
        self._robot_bodies, self._static_geoms = built.robot_bodies, built.static_geoms
        self._opt, self._qpos, self._ctrl = m.opt, d.qpos, d.ctrl
        self._imu_slices = [
            slice(int(s.adr[0]), int(s.adr[0] + s.dim[0]))
            for s in (m.sensor(n) for n in ("imu_accelerometer", "imu_gyro", "imu_orientation"))
        ]
        self._lidar = Lidar(m, d, self.options)
        self.lidar_angles = self._lidar.angles
        self._cameras = Cameras(m, d, self.options)
        self._pair_ids: dict[tuple[tuple[str, str], ...], tuple[NDArray[Any], NDArray[Any]]] = {}
        self.command = (0.0, 0.0)
        self.odom = Pose2D()
        self.odom_twist = (0.0, 0.0)
        self.episode: Episode | None = None

    # -- episodes ------------------------------------------------------------------------------

    def reset(self, episode: Episode) -> None:
        """Put the robot and the objects where the episode says, apply its colours, run preflight.

        Raises:
            PreflightError: an object without collision geometry or mass, objects or robot
                interpenetrating at spawn; the message names them.
        """
        self._scene_model.place(episode)
        self._scene_model.apply_colors(episode)
        self.command = (0.0, 0.0)
        self.odom = Pose2D()
        self.odom_twist = (0.0, 0.0)
        self._odom_origin = episode.robot_start
        self.episode = episode
        mujoco.mj_forward(self.model, self.data)
        self.preflight()

    def preflight(self) -> None:
        """Check the scene and the current state can be simulated; see :meth:`reset`."""
        self._scene_model.preflight()

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

    def step(self, count: int = 1, *, sensors: bool = True) -> None:
        """Advance physics by ``count`` steps, driving the base as a unicycle and integrating odometry.

        The base's world-frame velocity targets are set every :data:`BASE_CONTROL_STEPS` steps
        from the heading predicted for the middle of that interval, and odometry integrates the
        measured forward motion (what wheel encoders see: sideways pushes are not counted) and
        yaw change over it, exactly as an arc.

        MuJoCo's sensors (the IMU) are evaluated in the last of the ``count`` steps only, and in
        none with ``sensors`` false: their values are outputs that no dynamics reads, so :meth:`imu`
        after a call with sensors is what it would be had every step computed them (the
        accelerometer alone runs an extra RNE pass per step).
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
            sensed = int(sensors and done + n == count)  # the call's last step evaluates them
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
        """Put the base at a map pose, at rest (odometry goes on; ``map -> odom`` absorbs the jump).

        What the fingers hold (:meth:`held_objects`) goes along, as it sits in the gripper.
        """
        if not all(math.isfinite(v) for v in (pose.x, pose.y, pose.theta)):
            raise ValueError(f"teleport pose {pose} is not finite")
        d = self.data
        start = self.base_pose()
        held = self.held_objects()
        d.qpos[self._base_qpos] = [pose.x, pose.y, pose.theta]
        d.qvel[self._base_dof] = 0.0
        turn = pose.theta - start.theta
        for name in held:
            adr, dof = self._object_qpos[name], self._object_dof[name]
            away = d.qpos[adr : adr + 3] - np.array([start.x, start.y, 0.0])
            d.qpos[adr : adr + 3] = np.array([pose.x, pose.y, 0.0]) + rotz(turn) @ away
            quat = np.empty(4)
            mujoco.mju_mulQuat(
                quat,
                np.array([math.cos(turn / 2.0), 0.0, 0.0, math.sin(turn / 2.0)]),
                d.qpos[adr + 3 : adr + 7],
            )
            d.qpos[adr + 3 : adr + 7] = quat
            d.qvel[dof : dof + 6] = 0.0
        mujoco.mj_forward(self.model, d)

    def held_objects(self) -> list[str]:
        """The objects that both fingers touch now."""
        m, d = self.model, self.data
        fingers = {m.body(f"{f}_link").id for f in FINGER_JOINTS}
        bodies = {b: n for n, b in self._object_bodies.items()}
        touching: dict[str, set[int]] = {}
        for g1, g2 in d.contact.geom.tolist():
            b1, b2 = int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])
            for finger, other in ((b1, b2), (b2, b1)):
                if finger in fingers and other in bodies:
                    touching.setdefault(bodies[other], set()).add(finger)
        return sorted(n for n, f in touching.items() if f == fingers)

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

    def hand_over(self, name: str) -> None:
        """Put an object into the gripper, the arm tucked, as a successful pick would leave it.

        For evaluation: a failed pick's teleport (the next step starts with the object carried).
        The arm goes to the tucked pose every episode starts in (clear of the counters, the tcp
        about a metre up), the object upright with its grasp point (the scene's ``grasp_offset``
        and ``grasp_yaw``, as the pick-and-place machine grasps) at the tcp, turned of the two
        ways the fingers allow so that it hangs away from the robot, and the fingers close on it
        while the object and the base are held still. Simulated time does not advance.

        Raises:
            KeyError: no such object; the message lists them.
        """
        if name not in self._object_qpos:
            raise KeyError(f"no object {name!r}; objects: {', '.join(self._object_qpos)}")
        m, d = self.model, self.data
        spec = self.scene.object(name)
        fingers = [self.joint_names.index(f) for f in FINGER_JOINTS]
        for i, joint in enumerate(self.joint_names):
            q = FINGER_MAX_M if i in fingers else TUCKED[ARM_JOINTS.index(joint)]
            d.qpos[self._joint_qpos[i]] = q
            d.ctrl[self._joint_act[i]] = 0.0 if i in fingers else q  # the fingers: closing
        d.qvel[self._joint_dof] = 0.0
        d.qvel[self._base_dof] = 0.0
        mujoco.mj_forward(m, d)
        tcp = d.site("tcp")
        closing = tcp.xmat.reshape(3, 3)[:, 1]  # the fingers close along the tcp's y axis
        base = np.array([d.qpos[self._base_qpos[0]], d.qpos[self._base_qpos[1]]])
        offset = np.asarray(spec.grasp_offset, dtype=float)
        candidates = []
        for turn in (0.0, math.pi):
            yaw = math.atan2(closing[1], closing[0]) - spec.grasp_yaw + turn
            origin = tcp.xpos - rotz(yaw) @ offset
            candidates.append((float(np.hypot(*(origin[:2] - base))), origin.tolist(), yaw))
        _, origin, yaw = max(candidates)
        adr, dof = self._object_qpos[name], self._object_dof[name]
        pinned = [*origin, math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0)]
        base_pose, base_ctrl = d.qpos[self._base_qpos].copy(), d.ctrl[self._base_act].copy()
        time_s = d.time
        d.ctrl[self._base_act] = 0.0
        finger_dofs = [self._joint_dof[i] for i in fingers]
        for k in range(max(1, round(HAND_OVER_CLOSE_S / m.opt.timestep))):
            d.qpos[adr : adr + 7] = pinned
            d.qvel[dof : dof + 6] = 0.0
            d.qpos[self._base_qpos] = base_pose
            d.qvel[self._base_dof] = 0.0
            self._step_without_sensors(1)
            if k > 10 and float(np.max(np.abs(d.qvel[finger_dofs]))) < 1e-3:
                break  # closed on the object
        d.qvel[dof : dof + 6] = 0.0
        d.ctrl[self._base_act] = base_ctrl
        d.time = time_s
        mujoco.mj_forward(m, d)

    # -- state ---------------------------------------------------------------------------------

    def base_pose(self) -> Pose2D:
        """Ground-truth base pose in the map frame."""
        x, y, yaw = self.data.qpos[self._base_qpos].tolist()
        return Pose2D(x, y, normalize_angle(yaw))

    def map_to_odom(self, base: Pose2D | None = None) -> Pose2D:
        """``T_map_odom`` that makes ``map -> odom -> base_link`` equal the ground truth ``base`` (planar)."""
        base, odom = self.base_pose() if base is None else base, self.odom
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
        return mujoco_transform(b.xpos, b.xquat)

    def object_poses(self) -> dict[str, Transform]:
        """``T_map_object`` of every manipulable object (origin at its bottom centre)."""
        d = self.data
        return {n: mujoco_transform(d.xpos[b], d.xquat[b]) for n, b in self._object_bodies.items()}

    def object_velocity(self, name: str) -> NDArray[np.float64]:
        """Linear velocity of an object, m/s."""
        adr = self._object_dof[name]
        return self.data.qvel[adr : adr + 3].copy()

    def relative_transforms(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str, Transform]]:
        """``T_parent_child`` for (parent, child) body pairs (computed by MuJoCo's pose functions)."""
        pairs = tuple(pairs)
        return [
            (parent, child, Transform.trusted(row[:3], row[3:]))
            for (parent, child), row in zip(pairs, self.relative_pose_array(pairs), strict=True)
        ]

    def relative_pose_array(self, pairs: Iterable[tuple[str, str]]) -> np.ndarray[Any, Any]:
        """:meth:`relative_transforms` as one (N, 7) array of rows (x, y, z, qx, qy, qz, qw).

        What the sim node puts on TF 50 times per simulated second, in one compiled call
        (:func:`galley_sim._pose_kernels.relative_rows`; the TF buffer normalises the quaternions).
        """
        pairs = tuple(pairs)
        ids = self._pair_ids.get(pairs)
        if ids is None:
            ids = self._pair_ids[pairs] = (
                np.array([self.model.body(p).id for p, _ in pairs], dtype=int),
                np.array([self.model.body(c).id for _, c in pairs], dtype=int),
            )
        parents, children = ids
        out = np.empty((len(pairs), 7))
        relative_rows(self.data.xpos, self.data.xquat, self.data.xmat, parents, children, out)
        return out

    def object_pose_array(self) -> np.ndarray[Any, Any]:
        """:meth:`object_poses` as an (N, 7) array of rows (x, y, z, qx, qy, qz, qw), as ``object_names``."""
        out = np.empty((len(self._object_body_ids), 7))
        body_rows(self.data.xpos, self.data.xquat, self._object_body_ids, out)
        return out

    def site_transform(self, name: str) -> Transform:
        """``T_map_site`` of a site, e.g. ``tcp`` (the tool centre point between the fingertips)."""
        s = self.data.site(name)
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, s.xmat)
        return mujoco_transform(s.xpos, quat)

    # -- sensors -------------------------------------------------------------------------------

    def scan(self) -> NDArray[np.float32]:
        """LiDAR ranges (m) at :attr:`lidar_angles` in the laser frame; inf where nothing is hit."""
        return self._lidar.scan()

    def imu(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(orientation quaternion x y z w in map, angular velocity rad/s, linear acceleration m/s²)."""
        acc, gyro, quat = (self.data.sensordata[s] for s in self._imu_slices)
        return quat[[1, 2, 3, 0]], gyro.copy(), acc.copy()

    def render(
        self, camera: str, *, depth: bool = False, width: int | None = None, height: int | None = None
    ) -> NDArray[Any]:
        """An RGB image (H, W, 3) uint8, or with ``depth`` a depth image (H, W) float32 in metres.

        See :meth:`galley_sim.sensors.Cameras.render`; the robot cameras' RGB images come from
        :meth:`render_cameras`.
        """
        return self._cameras.render(camera, depth=depth, width=width, height=height)

    def render_cameras(self, cameras: Sequence[str]) -> list[NDArray[np.uint8]]:
        """RGB images (H, W, 3) uint8 of the robot cameras, drawn together and supersampled.

        What the ``sim`` node publishes; see :meth:`galley_sim.sensors.Cameras.render_cameras`.
        """
        return self._cameras.render_cameras(cameras)

    def camera_intrinsics(self, camera: str, width: int, height: int) -> tuple[float, float, float, float]:
        """(fx, fy, cx, cy) in pixels of a perspective camera (square pixels, principal point centred)."""
        return self._cameras.intrinsics(camera, width, height)

    def camera_transform(self, camera: str) -> Transform:
        """``T_map_camera`` of a camera in MuJoCo's convention (x right, y up, looking along -z)."""
        return self._cameras.transform(camera)

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
        self._cameras.close()
