"""Rigid transforms and planar poses (REP-103: metres, radians; quaternions in ROS order x, y, z, w).

Quaternion products and rotations are written out in numpy here rather than going through
:class:`scipy.spatial.transform.Rotation`: a Rotation object costs tens of microseconds to build,
and transforms are composed for every TF frame of every published state (thousands per simulated
second). scipy remains the reference the tests compare against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Pose2D",
    "Transform",
    "normalize_angle",
    "quaternion_from_yaw",
    "quaternion_multiply",
    "quaternion_rotate",
    "quaternion_slerp",
    "yaw_from_quaternion",
]


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


def quaternion_multiply(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Hamilton product ``a * b`` of quaternions (x, y, z, w)."""
    # Python floats: the same IEEE arithmetic as numpy scalars, several times faster.
    ax, ay, az, aw = np.asarray(a, dtype=float).tolist()
    bx, by, bz, bw = np.asarray(b, dtype=float).tolist()
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def quaternion_rotate(q: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rotate (3,) or (N, 3) vectors by the unit quaternion ``q`` (x, y, z, w)."""
    x, y, z, w = np.asarray(q, dtype=float).tolist()
    matrix = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
    rotated: NDArray[np.float64] = v @ matrix.T
    return rotated


def quaternion_slerp(a: NDArray[np.float64], b: NDArray[np.float64], fraction: float) -> NDArray[np.float64]:
    """Spherical linear interpolation between unit quaternions along the shorter arc."""
    dot = float(np.dot(a, b))
    if dot < 0.0:
        b, dot = -b, -dot
    if dot > 0.9995:  # nearly parallel: linear interpolation is exact enough and stable
        q = a + fraction * (b - a)
        out: NDArray[np.float64] = q / np.linalg.norm(q)
        return out
    theta = math.acos(dot)
    s = math.sin(theta)
    return (math.sin((1.0 - fraction) * theta) / s) * a + (math.sin(fraction * theta) / s) * b


@dataclass(frozen=True)
class Pose2D:
    """A planar pose: position in metres and heading in radians."""

    x: float = 0.0
    y: float = 0.0
    theta: float = 0.0

    def to_transform(self) -> Transform:
        """The 3D transform of this pose (z = 0)."""
        return Transform._of_arrays(np.array([self.x, self.y, 0.0]), quaternion_from_yaw(self.theta))

    def quaternion(self) -> tuple[float, float, float, float]:
        """The heading as a unit quaternion (x, y, z, w) of Python floats, without a Transform."""
        half = 0.5 * self.theta
        return (0.0, 0.0, math.sin(half), math.cos(half))


_CONJUGATE = np.array([-1.0, -1.0, -1.0, 1.0])


def _unit_rotation(t: NDArray[np.float64], q: NDArray[np.float64]) -> NDArray[np.float64]:
    """``q`` normalised, after checking that ``t`` and ``q`` are finite and ``q`` is not zero."""
    tx, ty, tz = t.tolist()
    qx, qy, qz, qw = q.tolist()
    norm = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if not (math.isfinite(tx + ty + tz) and math.isfinite(norm)):
        raise ValueError(f"transform has a non-finite value: translation {t}, rotation {q}")
    if norm < 1e-9:
        raise ValueError(f"transform rotation {q} is not a quaternion (zero norm)")
    unit: NDArray[np.float64] = q / norm
    return unit


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
        object.__setattr__(self, "translation", t)
        object.__setattr__(self, "rotation", _unit_rotation(t, q))

    @staticmethod
    def _of_arrays(translation: NDArray[np.float64], rotation: NDArray[np.float64]) -> Transform:
        """The constructor for float arrays already of shape (3,) and (4,): same checks and values."""
        transform = object.__new__(Transform)
        object.__setattr__(transform, "translation", translation)
        object.__setattr__(transform, "rotation", _unit_rotation(translation, rotation))
        return transform

    @staticmethod
    def identity() -> Transform:
        return Transform()

    @staticmethod
    def trusted(translation: NDArray[np.float64], rotation: NDArray[np.float64]) -> Transform:
        """A transform from values known to be finite, with a unit quaternion (e.g. a physics engine's).

        Skips the checks and the normalisation of the constructor, which cost more than the
        transform itself where thousands are built per simulated second.
        """
        transform = object.__new__(Transform)
        object.__setattr__(transform, "translation", translation)
        object.__setattr__(transform, "rotation", rotation)
        return transform

    def __mul__(self, other: Transform) -> Transform:
        """Compose: ``T_a_b * T_b_c = T_a_c``."""
        return Transform._of_arrays(
            self.translation + quaternion_rotate(self.rotation, other.translation),
            quaternion_multiply(self.rotation, other.rotation),
        )

    def inverse(self) -> Transform:
        """``T_b_a`` for ``self = T_a_b``."""
        conjugate = self.rotation * _CONJUGATE
        return Transform._of_arrays(-quaternion_rotate(conjugate, self.translation), conjugate)

    def apply(self, points: ArrayLike) -> NDArray[np.float64]:
        """Map (3,) or (N, 3) points from the child frame into the parent frame."""
        mapped: NDArray[np.float64] = quaternion_rotate(self.rotation, np.asarray(points, dtype=float))
        return mapped + self.translation

    def interpolate(self, other: Transform, fraction: float) -> Transform:
        """Linear in translation, spherical-linear in rotation; ``fraction`` 0 gives ``self``."""
        t = (1.0 - fraction) * self.translation + fraction * other.translation
        return Transform(t, quaternion_slerp(self.rotation, other.rotation, fraction))

    def yaw(self) -> float:
        """Heading about +z, radians."""
        return yaw_from_quaternion(self.rotation)

    def to_pose2d(self) -> Pose2D:
        """Project onto the plane: (x, y, yaw)."""
        return Pose2D(float(self.translation[0]), float(self.translation[1]), self.yaw())
