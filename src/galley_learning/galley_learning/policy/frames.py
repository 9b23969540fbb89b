"""One recorded episode as policy frames: observations and Kitchen-R's action points, at a fixed rate.

Reads a bag through the recorder's dataset reader (:mod:`galley_runtime.recording.dataset`) and
derives, per tick of ``rate_hz``:

* ``action`` (T, 10): Kitchen-R's action point (Sec. IV) ``(v, ω, x, y, z, qw, qx, qy, qz, g)``:
  the commanded base velocities (/cmd_vel), the commanded end-effector pose in ``base_link``
  (forward kinematics of the /arm/joint_command positions; the measured pose while the arm has no
  command) and the commanded gripper opening (0 closed, 1 open).
* ``state`` (T, 20): Kitchen-R's robot state, ten values relative to the previous state's frame
  (end-effector translation 3, rotation 6 as the first two columns of the rotation matrix, gripper
  gap 1; the end-effector pose in ``odom``, so base motion shows), followed by the same ten values
  absolute in ``base_link``. galley adds the absolute half: relative motion alone does not tell the
  policy where the end-effector is, and its actions are absolute targets.
* ``images`` per camera (T, H, W, 3) uint8, resized to ``image_size``; ``step`` (T,) the plan
  step running (the decomposed task text; "" between steps).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from galley_core.manipulation.kinematics import ArmKinematics, load_arm
from galley_sim.mjcf import ROBOT_XML

__all__ = [
    "ACTION_NAMES",
    "CAMERAS",
    "FINGER_OPEN_M",
    "STATE_NAMES",
    "EpisodeFrames",
    "ee_pose",
    "episode_frames",
    "load_robot_arm",
    "resize_images",
    "robot_state",
]

F64 = NDArray[np.float64]

#: Camera name -> image topic of the built-in simulator (and of the Isaac Sim graphs).
CAMERAS: Mapping[str, str] = {"base": "/camera/base/image_raw", "wrist": "/camera/wrist/image_raw"}
ACTION_NAMES = ("v", "w", "x", "y", "z", "qw", "qx", "qy", "qz", "gripper")
_TEN = ("dx", "dy", "dz", "r11", "r21", "r31", "r12", "r22", "r32", "gripper")
STATE_NAMES = tuple(f"rel_{n}" for n in _TEN) + tuple(f"abs_{n}" for n in _TEN)
FINGER_OPEN_M = 0.04  # galley_mm's finger travel: 0 (closed) to 0.04 m each


@dataclass
class EpisodeFrames:
    """One episode's frames; every array has the time axis first (T)."""

    t_s: F64
    images: dict[str, NDArray[np.uint8]]
    state: F64
    action: F64
    step: NDArray[np.str_]
    ee_pose: F64  # (T, 7) measured end-effector x y z qw qx qy qz in base_link
    odom: F64  # (T, 5) x, y, yaw, v, ω

    def __len__(self) -> int:
        return len(self.t_s)


def load_robot_arm() -> ArmKinematics:
    """The arm of galley_sim's robot description, rooted at ``base_link``, to its ``tcp`` site."""
    return load_arm(ROBOT_XML, root_body="base_link", tcp_site="tcp")


def ee_pose(arm: ArmKinematics, q: F64) -> tuple[F64, F64]:
    """Positions (T, 3) and w-first quaternions (T, 4, w >= 0) of the tcp for joint rows q (T, dof)."""
    positions = np.empty((len(q), 3))
    matrices = np.empty((len(q), 3, 3))
    for i, row in enumerate(q):
        positions[i], matrices[i] = arm.tcp_pose(row)
    xyzw = Rotation.from_matrix(matrices).as_quat()
    wxyz = np.concatenate([xyzw[:, 3:], xyzw[:, :3]], axis=1)
    wxyz *= np.where(wxyz[:, :1] < 0, -1.0, 1.0)  # one sign per orientation
    return positions, wxyz


def _ten(rotation: Rotation, translation: F64, gripper: F64) -> F64:
    """Translation 3, rotation 6 (first two matrix columns), gripper 1 per row."""
    m = rotation.as_matrix()
    return np.concatenate([translation, m[:, :, 0], m[:, :, 1], gripper[:, None]], axis=1)


def robot_state(ee_p: F64, ee_q: F64, odom: F64, gripper: F64) -> F64:
    """The state rows (T, 20) of consecutive frames (see the module docstring).

    Args:
        ee_p, ee_q: tcp positions (T, 3) and w-first quaternions (T, 4) in base_link.
        odom: (T, >= 3) base x, y, yaw in odom.
        gripper: (T,) opening, 0 closed to 1 open.

    The first row's relative part is the identity (no earlier frame).
    """
    odom = np.asarray(odom, dtype=float)
    base_r = Rotation.from_euler("z", odom[:, 2:3])
    base_t = np.concatenate([odom[:, :2], np.zeros((len(odom), 1))], axis=1)
    ee_r = Rotation.from_quat(np.concatenate([ee_q[:, 1:], ee_q[:, :1]], axis=1))
    world_r = base_r * ee_r
    world_t = base_t + base_r.apply(ee_p)
    before = np.r_[0, : len(odom) - 1]
    prev_r, prev_t = world_r[before], world_t[before]
    rel_t = prev_r.inv().apply(world_t - prev_t)
    gripper = np.asarray(gripper, dtype=float)
    return np.concatenate([_ten(prev_r.inv() * world_r, rel_t, gripper), _ten(ee_r, ee_p, gripper)], axis=1)


def resize_images(images: NDArray[np.uint8], size: tuple[int, int] | None) -> NDArray[np.uint8]:
    if size is None or images.shape[2:0:-1] == size:
        return images
    return np.stack([cv2.resize(im, size, interpolation=cv2.INTER_AREA) for im in images])


def episode_frames(
    bag: str | Path,
    *,
    rate_hz: float = 10.0,
    image_size: tuple[int, int] | None = (96, 72),
    cameras: Mapping[str, str] = CAMERAS,
    arm: ArmKinematics | None = None,
) -> EpisodeFrames:
    """The frames of the bag at ``bag`` (see the module docstring).

    Args:
        rate_hz: frames per second (the cameras' rate, 10 Hz, by default).
        image_size: (width, height) to resize every image to; None keeps the recorded size.
        cameras: camera name -> image topic.
        arm: the arm's kinematics (default: galley_sim's robot).

    Raises:
        ValueError: the bag lacks a stream the frames need (names the topic).
        FileNotFoundError: no bag at ``bag``.
    """
    from galley_runtime.recording.dataset import DatasetStreams, load_episode  # noqa: PLC0415 (deferred: rosbags)

    streams = DatasetStreams(cameras={f"image/{n}": t for n, t in cameras.items()})
    data = load_episode(bag, rate_hz, streams)
    if not data:
        raise ValueError(f"bag {bag} has no messages")
    arm = arm or load_robot_arm()
    needed = {
        "joint_position": "/joint_states",
        "odom": "/odom",
        **{f"image/{n}": t for n, t in cameras.items()},
    }
    for key, topic in needed.items():
        if not data[f"valid/{key}"].any():
            raise ValueError(f"bag {bag} has no {topic} messages; record it (recorder topics: all)")
    # From the first tick at which every stream needed has spoken.
    start = int(max(np.argmax(data[f"valid/{k}"]) for k in needed))
    data = {k: v[start:] for k, v in data.items()}
    dof = arm.dof
    q = data["joint_position"][:, :dof]
    fingers = data["joint_position"][:, dof : dof + 2]
    gripper = np.clip(fingers.mean(axis=1) / FINGER_OPEN_M, 0.0, 1.0)
    ee_p, ee_q = ee_pose(arm, q)

    commanded = data["arm_command"][:, :dof]
    have = np.all(np.isfinite(commanded), axis=1)
    target_p, target_q = ee_p.copy(), ee_q.copy()
    if have.any():
        target_p[have], target_q[have] = ee_pose(arm, commanded[have])
    grip_cmd = data["gripper_command"]
    grip_cmd = np.where(np.isfinite(grip_cmd), grip_cmd, gripper)
    cmd = np.where(data["valid/cmd_vel"][:, None], data["cmd_vel"], 0.0)
    action = np.concatenate([cmd, target_p, target_q, grip_cmd[:, None]], axis=1)

    state = robot_state(ee_p, ee_q, data["odom"], gripper)

    size = None if image_size is None else (int(image_size[0]), int(image_size[1]))
    images = {n: resize_images(data[f"image/{n}"], size) for n in cameras}
    return EpisodeFrames(
        t_s=data["t_s"],
        images=images,
        state=state,
        action=action,
        step=data["step"].astype(str),
        ee_pose=np.concatenate([ee_p, ee_q], axis=1),
        odom=data["odom"],
    )


def describe(frames: EpisodeFrames) -> dict[str, Any]:
    """Shapes and value ranges, for reports."""
    return {
        "frames": len(frames),
        "seconds": float(frames.t_s[-1] - frames.t_s[0]) if len(frames) else 0.0,
        "images": {n: list(v.shape[1:]) for n, v in frames.images.items()},
        "steps": sorted({s for s in frames.step.tolist() if s}),
    }
