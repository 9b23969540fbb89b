"""The ``sensors`` observation's step features: the step's target from what a robot has.

:class:`SensorGoals` turns, per frame, the running step into the values ``SENSOR_NAMES`` lists,
from these sources only:

* the step's text (its kind and object name; the object's shape from the scene file, the map's
  annotations);
* the executor's /goal_pose (a move's goal: the zone's approach pose from the map's annotations)
  and the global planner's /plan;
* TF ``map -> base_link`` (the robot's localisation) and the end-effector pose (the arm's joint
  states through its kinematics);
* perception's estimates (/perception/objects: pose and confidence of each object, from the
  base RGB-D camera; :class:`Perceived`).

Nothing in it comes from the simulator's ground truth (no ``object/<name>`` frame) or from the
oracle's arm code (no ``phases.pick_grasp`` grasp point, no ``place_tcp`` release point, no
executor's place target, which it chooses on ground truth). Where the policy puts the tcp is its
own decision; the *anchor* is only a reference point of the robot's own making that actions may
be expressed from (``actions: anchor``, observations.encode_actions):

* a pick's: the object's perceived position at the pick's first frame with an estimate, held for
  the step (the arm then hides the object from the base camera, and a lifted object moves);
* a place's: the spot of the zone the last move went to that
  :func:`galley_core.tasks.executor.place_target` chooses among the *perceived* positions of the
  other objects, nearest the base: the task layer's rule, fed with the robot's estimates. It is
  chosen at the place's first frame, as the executor chooses its target once, and held for the
  step; chosen again only where the base has since moved more than ``REANCHOR_M`` (an
  evaluation's teleport after a failed move puts the base there only a frame after the place
  began). Made afresh each frame, the spot jumped by more than 5 cm within 44 % of the plates'
  places of the shipped policy's collection (13 to 31 % of the other kinds'), almost always
  before the release: the arm hides the other objects from the base camera and their estimates
  move. The oracle's release point then lay more than 5 cm from where the anchor put it in 37 %
  of the plates' places; from the first frame's spot, in 8 %;
* none in a move (the end-effector's own position stands in).

``frames`` (training, from a bag's /perception/objects) and the ``diffusion_policy`` node (acting,
subscribed to the perception node) call the same functions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from galley_core.geometry import Pose2D, yaw_from_quaternion
from galley_core.scene import OBJECT_SHAPES, Scene
from galley_core.tasks.executor import place_target
from galley_core.tasks.grammar import InvalidPlanError, parse_step
from galley_core.tasks.judging import robot_zone
from galley_learning.policy.goals import PATH_AHEAD_M, STEP_KINDS, GoalTracker, Planar, path_point

__all__ = ["ANCHOR", "REANCHOR_M", "SENSOR_NAMES", "Perceived", "SensorGoals", "perceived_from_msg"]

F64 = NDArray[np.float64]

#: The ``sensors`` step features: the step kind; a move's goal and path points in base_link (as
#: the ``goal`` preset's); the step object's shape (one-hot over the scene format's shapes); the
#: object's live estimate (whether there is one, its position in base_link and from the
#: end-effector, its yaw in base_link as angle and twice the angle, its confidence); the anchor.
SENSOR_NAMES = (
    *(f"is_{k}" for k in STEP_KINDS),
    *("goal_x", "goal_y", "goal_cos", "goal_sin", "goal_dist"),
    *("path_x", "path_y", "path_cos", "path_sin", "path_far_x", "path_far_y"),
    *(f"shape_{s}" for s in OBJECT_SHAPES),
    *("seen", "object_x", "object_y", "object_z", "object_ee_x", "object_ee_y", "object_ee_z"),
    *("object_cos", "object_sin", "object_cos2", "object_sin2", "confidence"),
    *("has_anchor", "anchor_x", "anchor_y", "anchor_z", "anchor_ee_x", "anchor_ee_y", "anchor_ee_z"),
)
ANCHOR = SENSOR_NAMES.index("has_anchor")
#: How far (m) the base may move after a place chose its spot before the spot is chosen again.
REANCHOR_M = 0.05
_GOAL = SENSOR_NAMES.index("goal_x")
_PATH = SENSOR_NAMES.index("path_x")
_SHAPE = SENSOR_NAMES.index(f"shape_{OBJECT_SHAPES[0]}")
_SEEN = SENSOR_NAMES.index("seen")


@dataclass(frozen=True)
class Perceived:
    """One of perception's estimates, in ``map``: position (m), yaw (rad), confidence 0..1."""

    x: float
    y: float
    z: float
    yaw: float
    confidence: float


def perceived_from_msg(msg: Any) -> dict[str, Perceived]:
    """name -> estimate of a galley_msgs/PerceivedObjects message (its frame: map)."""
    out = {}
    for o in msg.objects:
        p, q = o.pose.position, o.pose.orientation
        yaw = yaw_from_quaternion((q.x, q.y, q.z, q.w))
        out[str(o.name)] = Perceived(float(p.x), float(p.y), float(p.z), yaw, float(o.confidence))
    return out


def _in_base(base: Planar, x: float, y: float, z: float) -> F64:
    c, s = math.cos(base[3]), math.sin(base[3])
    dx, dy = x - base[0], y - base[1]
    return np.array([c * dx + s * dy, -s * dx + c * dy, z - base[2]])


class SensorGoals:
    """The ``sensors`` step features of each frame (:meth:`features`); follows /goal_pose and /plan.

    Args:
        scene: the scene (its objects' shapes, its zones and their surfaces: the map's annotations).
    """

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.moves = GoalTracker()  # /goal_pose and /plan (its arm-goal half is never fed)
        self._step = ""
        self._anchor: tuple[float, float, float] | None = None  # the step's, in map
        self._anchored_at = (0.0, 0.0)  # where the base stood (map) when a place chose its spot
        self._zone = ""  # the zone the last move went to

    def on_goal_pose(self, msg: Any) -> None:
        self.moves.on_goal_pose(msg)

    def on_plan(self, msg: Any) -> None:
        self.moves.on_plan(msg)

    def features(self, step: str, base_map: Planar, perceived: Mapping[str, Perceived], ee_p: Any) -> F64:
        """The step features (SENSOR_NAMES) of this frame; zeros where a part does not apply.

        Args:
            step: the running step's text ("" between steps).
            base_map: base_link in map (TF), (x, y, z, yaw).
            perceived: perception's latest estimates, object name -> :class:`Perceived` (map).
            ee_p: (3,) end-effector position in base_link.
        """
        if step != self._step:  # a new step: its anchor is made afresh
            self._step, self._anchor = step, None
        out = np.zeros(len(SENSOR_NAMES))
        try:
            parsed = parse_step(step) if step else None
        except InvalidPlanError:
            parsed = None
        if parsed is None:
            return out
        kind, ee = parsed.action, np.asarray(ee_p, dtype=float)
        out[STEP_KINDS.index(kind)] = 1.0
        if kind == "move":
            self._zone = parsed.target
            self._move(out, base_map)
            return out
        name = parsed.target
        if name in self.scene.object_names:
            out[_SHAPE + OBJECT_SHAPES.index(self.scene.object(name).shape)] = 1.0
        estimate = perceived.get(name)
        if estimate is not None:
            point = _in_base(base_map, estimate.x, estimate.y, estimate.z)
            yaw = estimate.yaw - base_map[3]
            out[_SEEN : _SEEN + 12] = (
                1.0,
                *point,
                *(point - ee),
                math.cos(yaw),
                math.sin(yaw),
                math.cos(2 * yaw),
                math.sin(2 * yaw),
                estimate.confidence,
            )
        if kind == "place":
            moved = math.dist(self._anchored_at, base_map[:2]) > REANCHOR_M
            if self._anchor is None or moved:
                self._anchor = self._place_spot(name, base_map, perceived)
                self._anchored_at = (base_map[0], base_map[1])
            anchor = self._anchor
        else:
            if self._anchor is None and estimate is not None:
                self._anchor = (estimate.x, estimate.y, estimate.z)
            anchor = self._anchor
        if anchor is not None:
            point = _in_base(base_map, *anchor)
            out[ANCHOR : ANCHOR + 7] = (1.0, *point, *(point - ee))
        return out

    def _move(self, out: F64, base_map: Planar) -> None:
        goal = self.moves.goal.move_goal
        if goal is None:
            return
        gx, gy, _ = _in_base(base_map, goal[0], goal[1], 0.0)
        heading = goal[2] - base_map[3]
        out[_GOAL : _GOAL + 5] = (gx, gy, math.cos(heading), math.sin(heading), math.hypot(gx, gy))
        path = self.moves.goal.path
        if path is not None:
            (px, py), far = (path_point(path, base_map, a) for a in PATH_AHEAD_M)
            bearing = math.atan2(py, px)
            out[_PATH : _PATH + 6] = (px, py, math.cos(bearing), math.sin(bearing), *far)

    def _place_spot(
        self, name: str, base_map: Planar, perceived: Mapping[str, Perceived]
    ) -> tuple[float, float, float] | None:
        """Where a place puts ``name`` down (map): place_target among the perceived others."""
        if name not in self.scene.object_names:
            return None
        base = Pose2D(base_map[0], base_map[1], base_map[3])
        zone = self._zone if self._zone in self.scene.zone_names else robot_zone(self.scene, base)
        others = {n: (e.x, e.y) for n, e in perceived.items() if n != name}
        return place_target(self.scene, zone, name, others, (base.x, base.y))
