"""Pose helpers of the pick-and-place machine: the raised-cosine blend and top-down grasp orientations."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from galley_core.geometry import Transform
from galley_core.scene import ObjectSpec

__all__ = [
    "grasp_point",
    "matrix_from_quat",
    "quat_from_matrix",
    "raised_cosine",
    "rotz",
    "top_down_quaternion",
    "upright",
]

F64 = NDArray[np.float64]


def raised_cosine(tau: float) -> float:
    """Kitchen-R's blend ``alpha(tau) = (1 - cos(pi tau)) / 2`` with ``tau`` clipped to [0, 1]."""
    return (1.0 - math.cos(math.pi * min(max(tau, 0.0), 1.0))) / 2.0


def top_down_quaternion(closing_yaw: float) -> F64:
    """Orientation (x, y, z, w) of a top-down gripper: x axis down, y (closing) at ``closing_yaw``."""
    c, s = math.cos(closing_yaw), math.sin(closing_yaw)
    rot = np.array([[0.0, c, s], [0.0, s, -c], [-1.0, 0.0, 0.0]])  # columns x, y, z = x cross y
    return quat_from_matrix(rot)


def grasp_point(spec: ObjectSpec, pose: Transform, near: F64 | None = None) -> F64:
    """Where the tcp holds object ``spec`` at ``pose``: its grasp offset in the pose's frame.

    A round object (:attr:`~galley_core.scene.ObjectSpec.symmetric_about_z`) is held anywhere on
    the circle its offset sweeps about the object's vertical axis: with ``near``, the point of that
    circle nearest ``near`` (the tcp that holds it), as the pick-and-place machine grasps it.
    """
    x, y, z = spec.grasp_offset
    radius = math.hypot(x, y)
    if spec.symmetric_about_z and near is not None and radius > 1e-9:
        local = pose.inverse().apply(np.asarray(near, dtype=float))
        heading = math.atan2(local[1], local[0])
        x, y = radius * math.cos(heading), radius * math.sin(heading)
    return pose.apply(np.array([x, y, z]))


def upright(pose: Transform) -> tuple[F64, float]:
    """Position and yaw of a pose, its tilt dropped."""
    return pose.translation.copy(), pose.yaw()


def rotz(yaw: float) -> F64:
    """Rotation matrix of ``yaw`` radians about +z."""
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def quat_from_matrix(rot: F64) -> F64:
    """Unit quaternion (x, y, z, w) of a rotation matrix."""
    w = math.sqrt(max(0.0, 1.0 + rot[0, 0] + rot[1, 1] + rot[2, 2])) / 2.0
    x = math.sqrt(max(0.0, 1.0 + rot[0, 0] - rot[1, 1] - rot[2, 2])) / 2.0
    y = math.sqrt(max(0.0, 1.0 - rot[0, 0] + rot[1, 1] - rot[2, 2])) / 2.0
    z = math.sqrt(max(0.0, 1.0 - rot[0, 0] - rot[1, 1] + rot[2, 2])) / 2.0
    x = math.copysign(x, rot[2, 1] - rot[1, 2])
    y = math.copysign(y, rot[0, 2] - rot[2, 0])
    z = math.copysign(z, rot[1, 0] - rot[0, 1])
    return np.array([x, y, z, w])


def matrix_from_quat(q: F64) -> F64:
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
