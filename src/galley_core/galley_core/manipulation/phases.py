"""The phases of Kitchen-R's pick-and-place (Sec. V-C): targets, tolerances and timing.

A pick-and-place cycle has ten phases, six for PICK and four for PLACE:

=========  ===============  ====================================================================
goal       phase            tcp target (top-down: gripper x axis down, fingers closing along y)
=========  ===============  ====================================================================
PICK       ``approach``     ``approach_height_m`` above the object's grasp point, gripper open
PICK       ``pre_grasp``    ``pre_grasp_height_m`` above it (precise: 5 mm, 0.05 rad)
PICK       ``descend``      at the grasp point (precise, or stalled within ``descend_tolerance_m``),
                            and at rest: fingers that close on a tcp still moving down close
                            above a thin object (a spoon's 11 mm handle) and slide over it
PICK       ``grasp``        hold; close the gripper for ``grasp_close_s``, then check the grasp
PICK       ``lift``         ``lift_height_m`` above the grasp point
PICK       ``retreat``      ``retreat_distance_m`` further towards the arm's base (at most to
                            ``retreat_min_radius_m`` from the shoulder), raised so the
                            object's bottom is at least ``carry_height_m`` above the root frame
                            (or stalled within ``retreat_tolerance_m``: the object is up already)
PLACE      ``transport``    ``approach_height_m`` above where the tcp must be for the object to
                            stand at the target, moving across at the higher of the two heights
PLACE      ``descend``      ``release_height_m`` above that (the object's bottom just clear)
PLACE      ``release``      hold; open the gripper for ``release_open_s``
PLACE      ``retreat``      the empty gripper leaves as a pick's retreat does: up first (at least
                            ``place_retreat_height_m``, and to where the released object's bottom
                            would be at ``carry_height_m``), then towards the arm's base as far as
                            a pick's retreat (or stalled within ``retreat_tolerance_m``), so that
                            the fingers clear the counters the base drives past next
=========  ===============  ====================================================================

Every target is a tcp pose in the local frame of the relevant thing, made upright (its yaw
only): the object's frame for PICK (origin at its bottom centre, grasp offset and grasp yaw from
the scene file), the object's frame at the moment of the grasp for ``lift`` and ``retreat``, and the
place target's frame for PLACE (with the tcp's offset from the object as held). :func:`pick_phases`
and :func:`place_phases` lay the phases out; :class:`~galley_core.manipulation.pick_place.PickPlace`
runs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from galley_core.config import Config, param
from galley_core.geometry import normalize_angle
from galley_core.manipulation.kinematics import ArmKinematics
from galley_core.manipulation.poses import rotz
from galley_core.scene import ObjectSpec

__all__ = [
    "PICK_PHASES",
    "PLACE_PHASES",
    "GraspSpec",
    "Phase",
    "PickPlaceConfig",
    "grasp_spec",
    "pick_grasp",
    "pick_phases",
    "place_phases",
    "place_tcp",
    "shoulder_point",
    "turn_towards",
]

F64 = NDArray[np.float64]

PICK_PHASES = ("approach", "pre_grasp", "descend", "grasp", "lift", "retreat")
PLACE_PHASES = ("transport", "descend", "release", "retreat")


@dataclass(frozen=True)
class PickPlaceConfig(Config):
    """Geometry, timing and checks of the pick-and-place phases."""

    approach_height_m: float = param(
        0.12, "approach / transport height above the grasp point", unit="m", gt=0.0
    )
    pre_grasp_height_m: float = param(0.04, "pre-grasp height above the grasp point", unit="m", gt=0.0)
    lift_height_m: float = param(0.12, "lift height above the grasp point", unit="m", gt=0.0)
    retreat_distance_m: float = param(
        0.08, "after the lift, distance moved horizontally towards the arm's base", unit="m", ge=0.0
    )
    retreat_min_radius_m: float = param(
        0.22,
        "the retreat stops short of this horizontal distance from the shoulder: an arm folded closer "
        "meets its elbow limit and stalls (an object picked near the base retreats less)",
        unit="m",
        ge=0.0,
    )
    carry_height_m: float = param(
        0.0,
        "the retreat raises the held object's bottom at least this high in the arm's root frame, so "
        "that it clears every surface the base drives past (0: lift_height_m only); a place's "
        "retreat raises the empty gripper as high (0: place_retreat_height_m only)",
        unit="m",
        ge=0.0,
    )
    release_height_m: float = param(
        0.008, "height of the object's bottom above the place target at release", unit="m", ge=0.0
    )
    place_retreat_height_m: float = param(
        0.1, "least rise after releasing (then to carry height)", unit="m", gt=0.0
    )
    cartesian_speed_mps: float = param(0.25, "blend speed of the tcp target", unit="m/s", gt=0.0)
    angular_speed_rps: float = param(1.2, "blend speed of the tcp orientation target", unit="rad/s", gt=0.0)
    min_blend_s: float = param(0.4, "shortest blend between two phase targets", unit="s", gt=0.0)
    settle_limit_s: float = param(
        3.0,
        "time after the blend within which the target must be reached (else unreachable)",
        unit="s",
        gt=0.0,
    )
    track_limit_s: float = param(
        3.0,
        "further time when the arm's own plan has reached the target but the measured arm lags it "
        "(pushed off by a perturbation, a slow controller): then it fails as not following",
        unit="s",
        ge=0.0,
    )
    position_tolerance_m: float = param(0.005, "tcp position tolerance of precise phases", unit="m", gt=0.0)
    orientation_tolerance_rad: float = param(
        0.05, "tcp orientation tolerance of precise phases", unit="rad", gt=0.0
    )
    descend_tolerance_m: float = param(
        0.01,
        "a descent also ends this close once the tcp has stalled (fingertips touching the surface)",
        unit="m",
        gt=0.0,
    )
    place_descend_tolerance_m: float = param(
        0.05,
        "a place's descent also ends this close once the tcp has stalled (the held object touches down)",
        unit="m",
        gt=0.0,
    )
    retreat_tolerance_m: float = param(
        0.06,
        "a pick's retreat also ends this close once the tcp has stalled (a joint at its limit); the "
        "object is lifted already and transport starts from wherever the retreat stopped",
        unit="m",
        gt=0.0,
    )
    stall_speed_mps: float = param(
        0.005,
        "tcp speed below which a descent counts as stalled, and a pick's descent as at rest (the "
        "fingers close only then)",
        unit="m/s",
        gt=0.0,
    )
    speed_window_s: float = param(
        0.1,
        "the tcp's speed is measured over this long: more than one joint-state period, so that a "
        "controller step that sees no new measurement does not read as a stop",
        unit="s",
        gt=0.0,
    )
    coarse_position_tolerance_m: float = param(
        0.02, "tcp position tolerance of the free-space phases", unit="m", gt=0.0
    )
    coarse_orientation_tolerance_rad: float = param(
        0.1, "tcp orientation tolerance of the free-space phases", unit="rad", gt=0.0
    )
    grasp_close_s: float = param(0.8, "time the gripper closes before the grasp is checked", unit="s", gt=0.0)
    release_open_s: float = param(0.5, "time the gripper opens before retreating", unit="s", gt=0.0)
    finger_closed_m: float = param(
        0.0012, "both fingers below this opening after closing: nothing was grasped", unit="m", ge=0.0
    )
    grasp_check_distance_m: float = param(
        0.025, "largest distance from the tcp to the object's grasp point after closing", unit="m", gt=0.0
    )
    slip_distance_m: float = param(
        0.03,
        "the held object slipped once its grasp point is this far from where it was held",
        unit="m",
        gt=0.0,
    )
    place_tolerance_m: float = param(
        0.05, "largest distance of the placed object from its target (Kitchen-R: 5 cm)", unit="m", gt=0.0
    )
    reach_margin_m: float = param(
        0.0, "targets farther than the arm's length minus this from the shoulder are unreachable", unit="m"
    )
    max_step_s: float = param(0.05, "longest time integrated in one step (after a pause)", unit="s", gt=0.0)


@dataclass(frozen=True)
class GraspSpec:
    """Where the tcp grasps an object (scene file ``grasp_offset``, ``grasp_yaw``).

    Attributes:
        offset: (x, y, z) of the tcp in the object frame (origin at its bottom centre), metres.
        yaw: direction in the object frame along which the fingers close, radians.
        symmetric: the object is the same turned about its vertical axis (a bowl, a plate), so
            the grasp may turn about it too: a pick takes the rim point nearest the shoulder, and
            a place without a required yaw sets the object down turned so that the tcp is too.
    """

    offset: tuple[float, float, float]
    yaw: float = 0.0
    symmetric: bool = False


def grasp_spec(obj: ObjectSpec) -> GraspSpec:
    """An object's grasp as the scene file gives it (grasp_offset, grasp_yaw; round or not)."""
    return GraspSpec(obj.grasp_offset, obj.grasp_yaw, symmetric=obj.symmetric_about_z)


def shoulder_point(arm: ArmKinematics) -> F64:
    """The arm's shoulder in its root frame: the first joint point off the waist axis (at zero joints)."""
    _, _, _, points = arm.link_frames(np.zeros(arm.dof))
    return np.asarray(points[1] if arm.dof > 1 else points[0], dtype=float)


def turn_towards(shoulder: F64, position: F64, yaw: float, offset: F64) -> float:
    """The turn about the vertical that points ``offset`` (object frame, at ``yaw``) at the shoulder.

    Zero when the offset has no horizontal part (a grasp above the centre).
    """
    if math.hypot(offset[0], offset[1]) < 1e-6:
        return 0.0
    to_shoulder = math.atan2(shoulder[1] - position[1], shoulder[0] - position[0])
    return normalize_angle(to_shoulder - yaw - math.atan2(offset[1], offset[0]))


def place_tcp(
    held_offset: F64, position: F64, yaw: float, shoulder: F64, *, free_yaw: bool = False
) -> tuple[F64, float]:
    """Where a place's tcp must be for the held object to stand at ``position``, ``yaw`` (root frame).

    ``held_offset``: the tcp in the held object's upright frame. With ``free_yaw`` (a round object
    whose final yaw nobody asked for) the object is set down turned so that the tcp is on the
    shoulder's side. Returns the tcp point and the object's final yaw.
    """
    if free_yaw:
        yaw += turn_towards(shoulder, position, yaw, held_offset)
    return np.asarray(position + rotz(yaw) @ held_offset, dtype=float), yaw


def pick_grasp(grasp: GraspSpec, position: F64, yaw: float, shoulder: F64) -> tuple[F64, F64, float]:
    """Where a pick's tcp grasps an object standing at ``position``, ``yaw`` (root frame).

    A symmetric object's grasp turns about its axis to the point nearest the shoulder.

    Returns:
        The grasp point (root frame), the grasp offset as turned (object frame), and the fingers'
        closing direction relative to the object's yaw (before the wrist picks it or its opposite).
    """
    offset, closing = np.asarray(grasp.offset, dtype=float), grasp.yaw
    if grasp.symmetric:
        turn = turn_towards(shoulder, position, yaw, offset)
        offset, closing = rotz(turn) @ offset, closing + turn
    return np.asarray(position + rotz(yaw) @ offset, dtype=float), offset, closing


@dataclass(frozen=True)
class Phase:
    """One phase: its tcp target in the frame of an anchor, the gripper, and how it ends."""

    name: str
    position: F64  # tcp target in the anchor frame
    closing_yaw: float  # closing direction relative to the anchor's yaw
    anchor: str  # "object" (now), "grasp" (object at grasp time), "target"
    gripper: float
    precise: bool = False
    descent: bool = False  # touches down: position tolerance descend_tolerance_m
    stall_ends: bool = False  # a stall within retreat_tolerance_m also ends it
    settle: bool = False  # ends only with the tcp at rest (slower than stall_speed_mps)
    # cross at the higher of the two heights: up, then across (or across, then down), each in half
    # the blend (open fingers clear the object; a held object clears what stands on the way)
    rise_first: bool = False
    hold_s: float = 0.0  # gripper phases: hold the pose this long
    tools: bool = True
    check_slip: bool = False


def pick_phases(config: PickPlaceConfig, offset: F64, closing: float, retreat: F64) -> list[Phase]:
    """The six PICK phases, every target in the object's frame (``lift`` and ``retreat``: at grasp time).

    Args:
        config: heights, timing.
        offset: the grasp point in the object frame, metres.
        closing: the fingers' closing direction relative to the object's yaw, radians.
        retreat: the retreat's move from the grasp point (up to carry height, back towards the
            arm's base), in the object's frame at grasp time, metres.
    """
    c = config
    up = np.array([0.0, 0.0, 1.0])
    return [
        Phase("approach", offset + c.approach_height_m * up, closing, "object", 1.0),
        Phase("pre_grasp", offset + c.pre_grasp_height_m * up, closing, "object", 1.0, precise=True),
        Phase(
            "descend", offset, closing, "object", 1.0, precise=True, descent=True, tools=False, settle=True
        ),
        Phase("grasp", offset, closing, "object", 0.0, hold_s=c.grasp_close_s, tools=False),
        Phase("lift", offset + c.lift_height_m * up, closing, "grasp", 0.0, tools=False, check_slip=True),
        Phase(
            "retreat",
            offset + retreat,
            closing,
            "grasp",
            0.0,
            check_slip=True,
            stall_ends=True,
        ),
    ]


def place_phases(config: PickPlaceConfig, held_offset: F64, held_yaw: float, retreat: F64) -> list[Phase]:
    """The four PLACE phases, every target in the place target's frame.

    Args:
        config: heights, timing.
        held_offset: the tcp in the held object's upright frame, metres.
        held_yaw: the fingers' closing direction relative to the object's yaw, radians.
        retreat: the retreat's move from the release point (up to carry height, back towards the
            arm's base), in the place target's frame, metres.
    """
    c = config
    up = np.array([0.0, 0.0, 1.0])
    release = held_offset + c.release_height_m * up
    return [
        # Carried on a slant from the carry pose, a plate 7 cm above the counter swept a 9.5 cm mug
        # along under its target and landed on it: the held object crosses at the higher height.
        Phase(
            "transport",
            release + c.approach_height_m * up,
            held_yaw,
            "target",
            0.0,
            check_slip=True,
            rise_first=True,
        ),
        # A held object that hangs tilted (a plate by its rim) touches down before the tcp
        # reaches the release height: a stalled descent counts, as for a pick.
        Phase(
            "descend",
            release,
            held_yaw,
            "target",
            0.0,
            precise=True,
            descent=True,
            tools=False,
            check_slip=True,
        ),
        Phase("release", release, held_yaw, "target", 1.0, hold_s=c.release_open_s, tools=False),
        Phase(
            "retreat",
            release + retreat,
            held_yaw,
            "target",
            1.0,
            tools=False,
            stall_ends=True,
            rise_first=True,
        ),
    ]
