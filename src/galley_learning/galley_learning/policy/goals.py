"""The running step's target in the robot's frame, from the sources the oracle nodes use.

:class:`GoalTracker` follows the executor's /goal_pose and /arm/goal and the global planner's
/plan; :func:`goal_features` turns them, with TF's base and object poses, into the ``goal``
observation's values (``GOAL_NAMES``): a move's goal and path, a pick's object, a place's target,
and the arm step's contact point (:meth:`GoalTracker.contact_point`). ``frames`` (training, from a
bag) and the ``diffusion_policy`` node (acting) both call them (observations.py has the rest).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from galley_core.geometry import normalize_angle, yaw_from_quaternion
from galley_core.manipulation.phases import GraspSpec, pick_grasp, place_tcp
from galley_core.manipulation.poses import rotz
from galley_runtime.conversions import orientation_unset, path_from_msg, transform_values_from_msg
from galley_runtime.msg_constants import ARM_PICK, ARM_PLACE

__all__ = [
    "CONTACT",
    "GOAL_NAMES",
    "PATH_AHEAD_M",
    "STEP_KINDS",
    "GoalTracker",
    "Planar",
    "StepGoal",
    "goal_features",
    "path_point",
    "planar_from_transform",
    "step_kind",
]

F64 = NDArray[np.float64]

STEP_KINDS = ("move", "pick", "place")

_KIND = tuple(f"is_{k}" for k in STEP_KINDS)
#: goal_features' values: the step kind; a move's goal in base_link (x, y, heading, distance); the
#: pick's object or the place's target point in base_link and from the end-effector; its yaw.
GOAL_NAMES = (
    *_KIND,
    *("goal_x", "goal_y", "goal_cos", "goal_sin", "goal_dist"),
    *("target_x", "target_y", "target_z", "target_ee_x", "target_ee_y", "target_ee_z"),
    *("target_cos", "target_sin"),
    *("path_x", "path_y", "path_cos", "path_sin", "path_far_x", "path_far_y"),
    *("has_contact", "contact_x", "contact_y", "contact_z", "contact_ee_x", "contact_ee_y", "contact_ee_z"),
    *("closing_cos2", "closing_sin2"),
    *("object_ee_x", "object_ee_y", "object_ee_z"),
)
CONTACT = GOAL_NAMES.index("has_contact")
#: An object this much above where it lay when its pick began is off its support: lifted.
LIFTED_M = 0.01
#: How far ahead along /plan the two path points lie: the controller's waypoint switching distance
#: (galley_core.navigation.diff_drive's switch_distance_m, the waypoint it steers to) and further on.
PATH_AHEAD_M = (0.35, 1.0)

#: (x, y, z, yaw) of a frame in its parent, metres and radians.
Planar = tuple[float, float, float, float]


def step_kind(text: str) -> str:
    """The kind of a plan step (``move``, ``pick``, ``place``), "" for none or another."""
    word = text.split(" ", 1)[0] if text else ""
    return word if word in STEP_KINDS else ""


def planar_from_transform(msg: Any) -> Planar:
    """(x, y, z, yaw) of a geometry_msgs/Transform(Stamped)."""
    x, y, z, qx, qy, qz, qw = transform_values_from_msg(msg)
    return (x, y, z, yaw_from_quaternion((qx, qy, qz, qw)))


@dataclass
class StepGoal:
    """What the executor last asked for, in ``map``: a move's goal pose, an arm goal."""

    move_goal: tuple[float, float, float] | None = None  # x, y (m), yaw (rad) of /goal_pose
    arm_action: int = -1  # ArmGoal.action of /arm/goal (PICK 0, PLACE 1); -1 none yet
    object_name: str = ""  # the object to pick or the held one to place
    place_target: tuple[float, float, float] | None = None  # x, y, z (m) of a PLACE's target_pose
    place_yaw: float | None = None  # the PLACE target's yaw; None: left open (all-zero quaternion)
    path: F64 | None = None  # (N, 2) the global planner's /plan in map, for the move goal above
    # The arm goal's contact point in map (x, y, z) and closing yaw, and for a pick the height the
    # object lay at when the goal came (contact_point); None until the object is seen.
    contact: tuple[float, float, float, float] | None = None
    support_z: float | None = None


class GoalTracker:
    """Follows the executor's goal topics, as the oracle nodes do (the latest goal of each kind).

    Args:
        grasps: object name -> its grasp (the scene file's grasp_offset, grasp_yaw, symmetry), for
            the contact point; without it a pick's contact point is the object's origin.
        shoulder: the arm's shoulder in base_link (phases.shoulder_point), towards which a round
            object's grasp turns.
    """

    def __init__(
        self, grasps: Mapping[str, GraspSpec] | None = None, shoulder: Any = (0.0, 0.0, 0.0)
    ) -> None:
        self.goal = StepGoal()
        self.grasps = dict(grasps or {})
        self.shoulder = np.asarray(shoulder, dtype=float)

    def on_goal_pose(self, msg: Any) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        self.goal.move_goal = (p.x, p.y, yaw_from_quaternion((q.x, q.y, q.z, q.w)))
        self.goal.path = None  # the planner answers a new goal with a new /plan

    def on_plan(self, msg: Any) -> None:
        """The global planner's path (nav_msgs/Path in map); an empty one cancels."""
        points, _ = path_from_msg(msg)
        finite = len(points) > 0 and bool(np.all(np.isfinite(points)))
        self.goal.path = points if finite else None

    def on_arm_goal(self, msg: Any) -> None:
        g = self.goal
        g.arm_action = int(msg.action)
        g.object_name = str(msg.object_name)
        p, o = msg.target_pose.pose.position, msg.target_pose.pose.orientation
        place = int(msg.action) == ARM_PLACE
        g.place_target = (p.x, p.y, p.z) if place else None
        open_yaw = orientation_unset(msg.target_pose) or not place
        g.place_yaw = None if open_yaw else yaw_from_quaternion((o.x, o.y, o.z, o.w))
        g.contact, g.support_z = None, None

    def target(self, kind: str, objects: Mapping[str, Planar]) -> Planar | None:
        """The point the running step acts on, in map: the object to pick, the place target."""
        g = self.goal
        held = objects.get(g.object_name)
        if kind == "pick" and g.arm_action == ARM_PICK and held is not None:
            return held
        if kind == "place" and g.arm_action == ARM_PLACE and g.place_target is not None:
            return (*g.place_target, held[3] if held is not None else 0.0)
        return None

    def contact_point(
        self, kind: str, base: Planar, objects: Mapping[str, Planar], ee_p: Any
    ) -> Planar | None:
        """Where the tcp acts in this arm step, in map (x, y, z) with the fingers' closing yaw.

        A pick's: the object's grasp point as the pick-and-place machine computes it
        (phases.pick_grasp), following the object while it lies on its support and held once it
        is lifted (the machine's lift and retreat are anchored at the grasp). A place's: where the
        tcp must be for the held object to stand at the target, with the tcp's offset from the
        object as held when the place began (turned towards the shoulder for a round object whose
        yaw the goal leaves open, as the machine turns it). None outside an arm step, or before
        the object is seen.
        """
        g = self.goal
        target, held = self.target(kind, objects), objects.get(g.object_name)
        if target is None or held is None:
            return None
        spec = self.grasps.get(g.object_name, GraspSpec((0.0, 0.0, 0.0)))
        if kind == "pick":
            if g.support_z is None:
                g.support_z = held[2]
            if g.contact is None or held[2] - g.support_z < LIFTED_M:
                position, yaw = _point_in_base(base, held), held[3] - base[3]
                point, _, closing = pick_grasp(spec, position, yaw, self.shoulder)
                g.contact = (*_point_in_map(base, point), normalize_angle(yaw + closing + base[3]))
            return g.contact
        if g.contact is None:  # the place's first frame: the tcp's offset from the held object
            position, yaw = _point_in_base(base, held), held[3] - base[3]
            offset = rotz(-yaw) @ (np.asarray(ee_p, dtype=float) - position)
            place_yaw = yaw if g.place_yaw is None else g.place_yaw - base[3]
            free_yaw = g.place_yaw is None and spec.symmetric
            place = _point_in_base(base, target)
            point, _ = place_tcp(offset, place, place_yaw, self.shoulder, free_yaw=free_yaw)
            g.contact = (*_point_in_map(base, point), 0.0)
        return g.contact


def _point_in_base(base: Planar | F64, point: Any) -> F64:
    x, y = _in_base(base, point[0], point[1])
    return np.array([x, y, point[2] - base[2]])


def _point_in_map(base: Planar | F64, point: Any) -> tuple[float, float, float]:
    c, s = math.cos(base[3]), math.sin(base[3])
    return (base[0] + c * point[0] - s * point[1], base[1] + s * point[0] + c * point[1], base[2] + point[2])


def _in_base(base: Planar | F64, x: float, y: float) -> tuple[float, float]:
    c, s = math.cos(base[3]), math.sin(base[3])
    dx, dy = x - base[0], y - base[1]
    return c * dx + s * dy, -s * dx + c * dy


def path_point(path: F64, base_map: Planar | F64, ahead_m: float) -> tuple[float, float]:
    """The point of ``path`` (N, 2, map) the base steers to, in base_link.

    As the path follower picks its waypoint (the first one not yet within ``ahead_m``), but without
    its memory: from the waypoint nearest the base, the first at least ``ahead_m`` away; the last
    waypoint when none is.
    """
    d = np.hypot(path[:, 0] - base_map[0], path[:, 1] - base_map[1])
    nearest = int(np.argmin(d))
    far = np.nonzero(d[nearest:] >= ahead_m)[0]
    x, y = path[nearest + int(far[0]) if len(far) else len(path) - 1]
    return _in_base(base_map, float(x), float(y))


def goal_features(
    kind: str, base_map: Planar, tracker: GoalTracker, objects: Mapping[str, Planar], ee_p: Any
) -> F64:
    """The running step's target in the robot's frame (GOAL_NAMES); zeros where a part does not apply.

    Args:
        kind: the step's kind (:func:`step_kind`).
        base_map: base_link in map (TF), (x, y, z, yaw).
        tracker: the executor's goals.
        objects: object name -> its pose in map (TF ``object/<name>``).
        ee_p: (3,) end-effector position in base_link.
    """
    out = np.zeros(len(GOAL_NAMES))
    if kind in STEP_KINDS:
        out[STEP_KINDS.index(kind)] = 1.0
    goal = tracker.goal.move_goal
    if kind == "move" and goal is not None:
        gx, gy = _in_base(base_map, goal[0], goal[1])
        heading = goal[2] - base_map[3]
        out[3:8] = (gx, gy, math.cos(heading), math.sin(heading), math.hypot(gx, gy))
        path = tracker.goal.path
        if path is not None:
            (px, py), far = (path_point(path, base_map, a) for a in PATH_AHEAD_M)
            bearing = math.atan2(py, px)
            out[16:22] = (px, py, math.cos(bearing), math.sin(bearing), *far)
    target = tracker.target(kind, objects)
    if target is not None:
        tx, ty = _in_base(base_map, target[0], target[1])
        point = np.array([tx, ty, target[2] - base_map[2]])
        yaw = target[3] - base_map[3]
        out[8:16] = (*point, *(point - np.asarray(ee_p, dtype=float)), math.cos(yaw), math.sin(yaw))
    contact = tracker.contact_point(kind, base_map, objects, ee_p) if kind in ("pick", "place") else None
    if contact is not None:
        point = _point_in_base(base_map, contact)
        # the fingers grip alike turned by pi: the closing direction as twice its angle
        closing = 2.0 * (contact[3] - base_map[3]) if kind == "pick" else None
        out[CONTACT : CONTACT + 7] = (1.0, *point, *(point - np.asarray(ee_p, dtype=float)))
        if closing is not None:
            out[CONTACT + 7 : CONTACT + 9] = (math.cos(closing), math.sin(closing))
        # The step's object from the end-effector: in a place, whether it is still in the hand (the
        # fingers' opening around a cup reads 0.8 of open, so the gripper alone does not say so).
        held = _point_in_base(base_map, objects[tracker.goal.object_name])
        out[CONTACT + 9 : CONTACT + 12] = held - np.asarray(ee_p, dtype=float)
    return out
