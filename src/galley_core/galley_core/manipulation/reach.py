"""Where the arm can reach and how its wrist turns: the geometry a pick or a place is laid out in.

:class:`ArmReach` holds what the arm's kinematics fix once: the shoulder, the waist axis and the
arm's length from the shoulder (at zero joints). From them it answers the questions
:class:`~galley_core.manipulation.pick_place.PickPlace` asks before it lays out a goal's phases:
is a point within reach (:meth:`ArmReach.unreachable`), where a retreat goes
(:meth:`ArmReach.retreat`), which of a closing direction and its opposite the wrist should take
(:meth:`ArmReach.closing_within_wrist`). :func:`held_offset` and :func:`in_gripper` say how an
object sits in the gripper. Everything is in the arm's root frame (base_link), in metres and radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from galley_core.geometry import normalize_angle
from galley_core.manipulation.kinematics import ArmKinematics
from galley_core.manipulation.phases import GraspSpec, PickPlaceConfig, shoulder_point
from galley_core.manipulation.poses import rotz

__all__ = ["WRIST_MARGIN_RAD", "ArmReach", "held_offset", "in_gripper"]

F64 = NDArray[np.float64]

#: A pick's wrist turn stops this far inside the last joint's limits, radians.
WRIST_MARGIN_RAD = 0.2


@dataclass(frozen=True)
class ArmReach:
    """The arm's shoulder (m), waist axis point (m) and length from the shoulder (m), root frame."""

    arm: ArmKinematics
    shoulder: F64
    waist_axis: F64
    reach_m: float

    @classmethod
    def of(cls, arm: ArmKinematics) -> ArmReach:
        """The reach of ``arm``: the shoulder (:func:`shoulder_point`) to the tcp at zero joints."""
        shoulder = shoulder_point(arm)
        _, _, _, points = arm.link_frames(np.zeros(arm.dof))
        tcp, _ = arm.tcp_pose(np.zeros(arm.dof))
        return cls(arm, shoulder, points[0], float(np.linalg.norm(tcp - shoulder)))

    def unreachable(self, point: F64, what: str, margin_m: float) -> str:
        """Why ``point`` (called ``what``) is beyond the arm less ``margin_m``, or "" within reach."""
        distance = float(np.linalg.norm(point - self.shoulder))
        limit = self.reach_m - margin_m
        if distance > limit:
            return (
                f"unreachable: {what} is {distance:.2f} m from the shoulder, beyond the arm's "
                f"{limit:.2f} m; park the base closer"
            )
        return ""

    def retreat(self, config: PickPlaceConfig, tcp: F64, bottom_z: float, rise_m: float, yaw: float) -> F64:
        """A retreat's move from ``tcp``, in the frame of its anchor at ``yaw`` (rad).

        Up by at least ``rise_m``, and so that the (held or just released) object's bottom, now at
        ``bottom_z``, would ride at ``carry_height_m``; and ``retreat_distance_m`` horizontally towards
        the shoulder, no nearer it than ``retreat_min_radius_m`` (folded tighter, the elbow stalls at
        its limit).
        """
        c = config
        toward_base = np.array([self.shoulder[0] - tcp[0], self.shoulder[1] - tcp[1], 0.0])
        norm = float(np.linalg.norm(toward_base))
        back_m = min(c.retreat_distance_m, max(0.0, norm - c.retreat_min_radius_m))
        back = toward_base / norm * back_m if norm > 1e-6 else np.zeros(3)
        rise = max(rise_m, c.carry_height_m - bottom_z)
        return np.asarray(rotz(-yaw) @ back + np.array([0.0, 0.0, rise]), dtype=float)

    def closing_yaw(self, q: F64) -> float:
        """The direction the fingers close along at joints ``q`` (rad), about the vertical."""
        _, rot = self.arm.tcp_pose(q)
        return math.atan2(rot[1, 1], rot[0, 1])

    def closing_within_wrist(self, q: F64, point: F64, closing: float) -> float:
        """Of ``closing`` and its opposite (the fingers grip alike), the one nearer the gripper's heading.

        Unless the wrist would turn past its limit for it: the wrist's turn from joints ``q`` is the
        heading change less the waist's turn towards ``point``, and a heading that would take the
        last joint within :data:`WRIST_MARGIN_RAD` of its limit loses to the opposite one (an apple
        whose nearer heading lay past the limit stalled 0.13 rad short in pre_grasp).
        """
        tcp, _ = self.arm.tcp_pose(q)
        axis = self.waist_axis
        waist_turn = math.atan2(point[1] - axis[1], point[0] - axis[0]) - math.atan2(
            tcp[1] - axis[1], tcp[0] - axis[0]
        )
        turned = q.copy()
        turned[-1] += 1e-3
        heading = self.closing_yaw(q)
        per_rad = normalize_angle(self.closing_yaw(turned) - heading) / 1e-3  # about -1 or +1
        options = sorted(
            ((normalize_angle(c - heading - waist_turn), c) for c in (closing, closing + math.pi)),
            key=lambda option: abs(normalize_angle(option[1] - heading)),
        )
        lower, upper = self.arm.lower[-1] + WRIST_MARGIN_RAD, self.arm.upper[-1] - WRIST_MARGIN_RAD
        for turn, c in options:
            if lower <= q[-1] + turn / per_rad <= upper:
                return c
        return options[0][1]


def held_offset(tcp: F64, tcp_r: F64, position: F64, yaw: float) -> tuple[F64, float]:
    """How an object at ``position``, ``yaw`` sits in the gripper at ``tcp``, ``tcp_r`` (rotation).

    Returns the tcp in the object's upright frame (m) and the closing yaw relative to the object's (rad).
    """
    offset = rotz(-yaw) @ (tcp - position)
    return offset, normalize_angle(math.atan2(tcp_r[1, 1], tcp_r[0, 1]) - yaw)


def in_gripper(grasp: GraspSpec, tcp: F64, position: F64, yaw: float, within_m: float) -> bool:
    """Whether an object at ``position``, ``yaw`` has its grasp point within ``within_m`` of ``tcp``.

    A symmetric object is held anywhere on the circle its grasp offset sweeps about the vertical.
    """
    local, offset = rotz(-yaw) @ (tcp - position), np.asarray(grasp.offset, dtype=float)
    if grasp.symmetric:
        local, offset = (
            np.array([np.hypot(*local[:2]), local[2]]),
            np.array([np.hypot(*offset[:2]), offset[2]]),
        )
    return not float(np.linalg.norm(local - offset)) > within_m
