"""The compiled MuJoCo model of a scene with galley's mobile manipulator, and an episode put into it.

:class:`SceneModel` compiles the scene's MJCF (:func:`galley_sim.mjcf.scene_xml`) once, looks up
the addresses the simulator reads and writes (joints, actuators, object bodies, the robot's bodies,
the static geoms) and, per episode, places the robot and the objects, applies the colours and runs
the preflight checks. :class:`galley_sim.simulator.KitchenSim` steps it and reads its state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np
from numpy.typing import NDArray

from galley_core.episode import Episode
from galley_core.geometry import Transform
from galley_core.scene import Scene, SceneError
from galley_sim.mjcf import object_body_name, scene_xml

__all__ = [
    "ARM_JOINTS",
    "FINGER_JOINTS",
    "FINGER_MAX_M",
    "ROBOT_FRAMES",
    "STATIC_FRAMES",
    "TUCKED",
    "PreflightError",
    "SceneModel",
    "SimOptions",
    "mujoco_transform",
]

ARM_JOINTS = ("waist", "shoulder", "elbow", "forearm_roll", "wrist_angle", "wrist_rotate")
FINGER_JOINTS = ("left_finger", "right_finger")
FINGER_MAX_M = 0.04
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


def mujoco_transform(pos: NDArray[np.float64], quat_wxyz: NDArray[np.float64]) -> Transform:
    """A Transform from MuJoCo's position and (w, x, y, z) quaternion, which are always valid."""
    w, x, y, z = quat_wxyz
    return Transform.trusted(np.array(pos, dtype=float), np.array([x, y, z, w]))


class SceneModel:
    """A scene compiled with the robot: ``model``, ``data`` and the addresses of what is driven and read.

    Attributes (addresses into ``data.qpos``, ``data.qvel``, ``data.ctrl`` and the model's bodies):
        base_qpos, base_dof, base_act: of the base's planar joints ``base_x``, ``base_y``, ``base_yaw``.
        joint_names: the arm's and the fingers' joints; joint_qpos, joint_dof, joint_act and
            joint_range (rad, or m for fingers) in that order.
        object_bodies, object_qpos, object_dof: by object name.
        robot_bodies: ids of the bodies of the robot (those whose root is ``base_link``).
        static_geoms: ids of the geoms of walls, furniture and background objects.
    """

    def __init__(self, scene: Scene, options: SimOptions) -> None:
        self.scene = scene
        o = options
        self.model = mujoco.MjModel.from_xml_string(
            scene_xml(scene, image_width=o.image_width, image_height=o.image_height, timestep_s=o.timestep_s)
        )
        self.data = mujoco.MjData(self.model)
        m = self.model
        self.base_qpos = [m.joint(n).qposadr[0] for n in ("base_x", "base_y", "base_yaw")]
        self.base_dof = [m.joint(n).dofadr[0] for n in ("base_x", "base_y", "base_yaw")]
        self.base_act = [m.actuator(n).id for n in ("base_x", "base_y", "base_yaw")]
        self.joint_names = ARM_JOINTS + FINGER_JOINTS
        self.joint_qpos = np.array([m.joint(n).qposadr[0] for n in self.joint_names])
        self.joint_dof = np.array([m.joint(n).dofadr[0] for n in self.joint_names])
        self.joint_act = np.array([m.actuator(n).id for n in self.joint_names])
        self.joint_range = np.array([m.joint(n).range for n in self.joint_names])
        self.object_bodies = {o.name: m.body(object_body_name(o.name)).id for o in scene.objects}
        self.object_qpos = {o.name: m.joint(object_body_name(o.name)).qposadr[0] for o in scene.objects}
        self.object_dof = {o.name: m.joint(object_body_name(o.name)).dofadr[0] for o in scene.objects}
        self.robot_bodies = {i for i in range(m.nbody) if self._is_robot_body(i)}
        self.static_geoms = {
            i
            for i in range(m.ngeom)
            if m.geom_bodyid[i] == 0 or m.body(m.geom_bodyid[i]).name.startswith("background/")
        }

    def _is_robot_body(self, body_id: int) -> bool:
        m = self.model
        root = m.body_rootid[body_id]
        return bool(m.body(root).name == "base_link")

    def place(self, episode: Episode) -> None:
        """Reset the data, then put the robot (tucked, gripper open) and the objects where ``episode`` says.

        The objects the episode does not use wait off the map, apart. Colours are applied by
        :meth:`apply_colors`; nothing is computed from the new state (call ``mj_forward``).
        """
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        start = episode.robot_start
        d.qpos[self.base_qpos] = [start.x, start.y, start.theta]
        # Tucked: upper arm up, forearm and gripper folded down in front of the pedestal, gripper open.
        ready = dict(zip(ARM_JOINTS, TUCKED, strict=True)) | {
            "left_finger": FINGER_MAX_M,
            "right_finger": FINGER_MAX_M,
        }
        for i, name in enumerate(self.joint_names):
            d.qpos[self.joint_qpos[i]] = ready[name]
            d.ctrl[self.joint_act[i]] = ready[name]
        placed = set()
        for placement in episode.objects:
            spec = self.scene.object(placement.name)
            zone = self.scene.zone(placement.zone)
            adr = self.object_qpos[spec.name]
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
            adr = self.object_qpos[spec.name]  # unused objects wait off the map, apart
            d.qpos[adr : adr + 7] = [
                self.scene.bounds[0] - 2.0 - i,
                self.scene.bounds[1] - 2.0,
                0.0,
                1,
                0,
                0,
                0,
            ]

    def apply_colors(self, episode: Episode) -> None:
        """Set the episode's colours of the floor, the walls and the background objects on the model."""
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
        """Check the scene and the current state can be simulated.

        Raises:
            PreflightError: an object without collision geometry or mass, objects or robot
                interpenetrating; the message names them.
        """
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
            if b1 in self.robot_bodies or b2 in self.robot_bodies:
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
