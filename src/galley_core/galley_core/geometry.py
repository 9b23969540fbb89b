"""Rigid transforms and planar poses (REP-103: metres, radians; quaternions in ROS order x, y, z, w).

Rotations are delegated to :class:`scipy.spatial.transform.Rotation`, which uses the same
scalar-last quaternion order as ROS messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.transform import Rotation, Slerp

__all__ = ["Pose2D", "Transform", "normalize_angle", "quaternion_from_yaw", "yaw_from_quaternion"]


def normalize_angle(angle: float) -> float:
    """Wrap an angle to [-pi, pi) as atan2(sin, cos) does (radians)."""
    return math.atan2(math.sin(angle), math.cos(angle))


def quaternion_from_yaw(yaw: float) -> NDArray[np.float64]:
    """Quaternion (x, y, z, w) of a rotation by ``yaw`` radians about +z."""
    return np.array([0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)])


def yaw_from_quaternion(q: ArrayLike) -> float:
    """Rotation about +z (radians) of a quaternion (x, y, z, w), as the yaw of ZYX Euler angles."""
    x, y, z, w = np.asarray(q, dtype=float)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


@dataclass(frozen=True)
class Pose2D:
    """A planar pose: position in metres and heading in radians."""

    x: float = 0.0
    y: float = 0.0
    theta: float = 0.0

    def to_transform(self) -> Transform:
        """The 3D transform of this pose (z = 0)."""
        return Transform(np.array([self.x, self.y, 0.0]), quaternion_from_yaw(self.theta))


@dataclass(frozen=True)
class Transform:
    """A rigid transform ``T_parent_child``: maps points in the child frame into the parent frame.

    Attributes:
        translation: (3,) position of the child origin in the parent frame, metres.
        rotation: (4,) unit quaternion (x, y, z, w) of the child axes in the parent frame.
    """

    translation: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    rotation: NDArray[np.float64] = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))

    def __post_init__(self) -> None:
        t = np.asarray(self.translation, dtype=float).reshape(3)
        q = np.asarray(self.rotation, dtype=float).reshape(4)
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
            raise ValueError(f"transform has a non-finite value: translation {t}, rotation {q}")
        norm = float(np.linalg.norm(q))
        if norm < 1e-9:
            raise ValueError(f"transform rotation {q} is not a quaternion (zero norm)")
        object.__setattr__(self, "translation", t)
        object.__setattr__(self, "rotation", q / norm)

    @staticmethod
    def identity() -> Transform:
        return Transform()

    def _rot(self) -> Rotation:
        return Rotation.from_quat(self.rotation)

    def __mul__(self, other: Transform) -> Transform:
        """Compose: ``T_a_b * T_b_c = T_a_c``."""
        r = self._rot()
        return Transform(self.translation + r.apply(other.translation), (r * other._rot()).as_quat())

    def inverse(self) -> Transform:
        """``T_b_a`` for ``self = T_a_b``."""
        r_inv = self._rot().inv()
        return Transform(-r_inv.apply(self.translation), r_inv.as_quat())

    def apply(self, points: ArrayLike) -> NDArray[np.float64]:
        """Map (3,) or (N, 3) points from the child frame into the parent frame."""
        mapped: NDArray[np.float64] = self._rot().apply(np.asarray(points, dtype=float)) + self.translation
        return mapped

    def interpolate(self, other: Transform, fraction: float) -> Transform:
        """Linear in translation, spherical-linear in rotation; ``fraction`` 0 gives ``self``."""
        t = (1.0 - fraction) * self.translation + fraction * other.translation
        slerp = Slerp([0.0, 1.0], Rotation.from_quat(np.stack([self.rotation, other.rotation])))
        return Transform(t, slerp([fraction]).as_quat()[0])

    def yaw(self) -> float:
        """Heading about +z, radians."""
        return yaw_from_quaternion(self.rotation)

    def to_pose2d(self) -> Pose2D:
        """Project onto the plane: (x, y, yaw)."""
        return Pose2D(float(self.translation[0]), float(self.translation[1]), self.yaw())
