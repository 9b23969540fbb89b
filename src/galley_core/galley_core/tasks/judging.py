"""Kitchen-R's success criteria: whether a step did what it says, judged on ground truth (Sec. V-A).

* move: the base centre within ``nav_success_radius_m`` (0.10 m) of the zone's approach position;
* pick: the object lifted off its surface (its bottom at least ``lift_height_m`` above it) and,
  where no node reports that the grasp closed (a learned policy), the tool centre point within
  ``hold_distance_m`` of the object's grasp point: a knocked object rises too;
* place: the object's position within ``place_success_radius_m`` (0.05 m) of its target.

:func:`judge_step` applies the running step's criterion to a :class:`GroundTruth`, which it asks
only for what that criterion needs, so a step is not failed for a frame it does not look at.
Everything is in the map frame, in metres.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from galley_core.geometry import Pose2D, Transform
from galley_core.manipulation.poses import grasp_point
from galley_core.scene import Scene
from galley_core.tasks.executor import ExecutorConfig, PlanRunner, move_goal
from galley_core.tasks.grammar import Step
from galley_core.tf_tree import TransformError

__all__ = [
    "GroundTruth",
    "PickRetreat",
    "held",
    "judge_step",
    "move_succeeded",
    "pick_succeeded",
    "place_succeeded",
    "retreat_over",
    "robot_zone",
    "settled",
    "surface_z",
]

#: A success flag and, on failure, why (empty on success).
Judgement = tuple[bool, str]


class GroundTruth(Protocol):
    """Where things are now, in the map frame; each query raises TransformError or KeyError if unknown."""

    def base_pose(self) -> Pose2D:
        """The robot base's pose."""
        ...

    def object_pose(self, name: str) -> Transform:
        """``T_map_object`` of object ``name`` (origin at the object's bottom centre)."""
        ...

    def tcp(self) -> NDArray[np.float64]:
        """(3,) position of the gripper's tool centre point."""
        ...


def move_succeeded(base: Pose2D, goal: Pose2D, config: ExecutorConfig) -> Judgement:
    """Whether the base stands within ``nav_success_radius_m`` of the goal's position (yaw is free)."""
    distance = math.hypot(base.x - goal.x, base.y - goal.y)
    if distance <= config.nav_success_radius_m:
        return True, ""
    return False, f"the base stopped {distance:.3f} m from the goal (> {config.nav_success_radius_m} m)"


def settled(
    runner: PlanRunner,
    scene: Scene,
    truth: GroundTruth,
    config: ExecutorConfig,
    *,
    arm_drawn_back: bool = True,
) -> bool:
    """Whether the running step has left the robot as the oracle's same step leaves it.

    Not a success criterion: what completion 'criteria' waits for, once the criterion holds, before
    it ends a step, so that a learned policy's next step starts where the oracle's does. A move: the
    base faces its goal's heading within ``nav_heading_tolerance_rad`` (the path follower turns
    before it reports). A pick: the object's bottom at least ``pick_carry_height_m`` above the
    floor (the pick-and-place machine ends a pick with the object raised to its carry height, over
    the counters the next move drives past; 0: no wait) and ``arm_drawn_back`` (the caller's
    judgement that the arm has come back as the machine's retreat brings it, ``pick_retreat_m``).
    Any other step, or none running: True.
    """
    step = runner.current
    if step is None or step.action not in ("move", "pick"):
        return True
    try:
        if step.action == "pick":
            carried = float(truth.object_pose(step.target).translation[2]) >= config.pick_carry_height_m
            return carried and arm_drawn_back
        yaw = truth.base_pose().theta
    except (TransformError, KeyError):
        return False
    error = math.remainder(yaw - move_goal(scene, step.target).theta, math.tau)
    return abs(error) <= config.nav_heading_tolerance_rad


#: A pick's retreat is over once the tcp draws away from the object's start slower than this, m/s.
RETREAT_OVER_MPS = 0.02


def retreat_over(
    distance_m: float, previous_m: float | None, config: ExecutorConfig, *, period_s: float
) -> bool:
    """Whether a pick has drawn the arm back as the oracle's retreat does (``settled``'s ``arm_drawn_back``).

    ``distance_m``: the tcp's horizontal distance from where the object stood when the pick began;
    ``previous_m``: the same one check (``period_s``) earlier, None at the first. Over: at least
    ``pick_retreat_m`` away and drawing away slower than ``RETREAT_OVER_MPS`` (ended at a set
    distance, a policy's arm was still 8 to 12 cm short of the oracle's carry pose).
    """
    if previous_m is None or distance_m < config.pick_retreat_m:
        return False
    return distance_m - previous_m <= RETREAT_OVER_MPS * period_s


class PickRetreat:
    """Follows a running pick's tcp from where its object stood, for ``settled``'s ``arm_drawn_back``.

    Call :meth:`over` at every check of the running step and :meth:`reset` when a step begins; the
    object's position is read at the pick's first check. ``period_s``: the time between checks.
    """

    def __init__(self, config: ExecutorConfig, period_s: float) -> None:
        self.config, self.period_s = config, period_s
        self._from: tuple[float, float] | None = None
        self._distance: float | None = None

    def reset(self) -> None:
        self._from = self._distance = None

    def over(self, step: Step | None, truth: GroundTruth) -> bool:
        """Whether ``step``'s retreat is over (``retreat_over``).

        True for any other step or with ``pick_retreat_m`` 0; False while the object or the tcp is
        unknown.
        """
        if self.config.pick_retreat_m <= 0.0 or step is None or step.action != "pick":
            return True
        try:
            if self._from is None:
                t = truth.object_pose(step.target).translation
                self._from = (float(t[0]), float(t[1]))
            tcp = truth.tcp()
        except (TransformError, KeyError):
            return False
        distance = math.hypot(tcp[0] - self._from[0], tcp[1] - self._from[1])
        previous, self._distance = self._distance, distance
        return retreat_over(distance, previous, self.config, period_s=self.period_s)


def pick_succeeded(object_z: float, surface_z: float, name: str, config: ExecutorConfig) -> Judgement:
    """Whether the object's bottom is at least ``lift_height_m`` above the surface it stood on."""
    if object_z - surface_z >= config.lift_height_m:
        return True, ""
    return False, f"the {name} is not lifted ({object_z - surface_z:.3f} m above its surface)"


def place_succeeded(
    position: Iterable[float], target: Iterable[float], name: str, config: ExecutorConfig
) -> Judgement:
    """Whether the object's position is within ``place_success_radius_m`` of its target (3-D)."""
    distance = math.dist(position, target)
    if distance <= config.place_success_radius_m:
        return True, ""
    return False, f"the {name} ended {distance:.3f} m from its target (> {config.place_success_radius_m} m)"


def held(
    scene: Scene, name: str, pose: Transform, tcp: NDArray[np.float64], hold_distance_m: float
) -> Judgement:
    """Whether the tool centre point is within ``hold_distance_m`` of the object's grasp point."""
    grasp = grasp_point(scene.object(name), pose, near=tcp)
    distance = float(np.linalg.norm(tcp - grasp))
    if distance <= hold_distance_m:
        return True, ""
    return (
        False,
        f"the {name} is lifted but not held: the gripper is {distance:.3f} m from its grasp point",
    )


def robot_zone(scene: Scene, base: Pose2D) -> str:
    """The zone whose approach pose is nearest the base (where a place puts the object down)."""
    return min(scene.zones, key=lambda z: (z.approach[0] - base.x) ** 2 + (z.approach[1] - base.y) ** 2).name


def surface_z(scene: Scene, plan: Sequence[Step], index: int) -> float:
    """Height of the surface an object picked at step ``index`` starts on.

    That is the zone of the last move before it; with none, the highest zone's (a lift must then
    clear every surface).
    """
    for step in reversed(list(plan)[:index]):
        if step.action == "move":
            return scene.zone(step.target).z
    return max(z.z for z in scene.zones)


def judge_step(
    runner: PlanRunner,
    scene: Scene,
    truth: GroundTruth,
    config: ExecutorConfig,
    *,
    place_goal: Sequence[float] | None = None,
    hold_distance_m: float | None = None,
) -> Judgement:
    """Whether the runner's current step meets its success criterion on ``truth`` now, and why not.

    Args:
        runner: its current step is judged; the steps before it tell a pick's surface.
        scene: zones and objects.
        truth: ground truth, asked only for what the step's criterion needs.
        config: the criteria's tolerances.
        place_goal: (x, y, z) a place step puts its object at (see ``place_target``).
        hold_distance_m: also require a picked object in the gripper, this close to its grasp
            point, and a placed one out of it (the tcp farther away: let go, and left); None: the
            lift or the target alone (the arm's status already says that the grasp closed or opened).

    A ground truth that is missing fails the step with a reason that says so.

    Raises:
        RuntimeError: no step is running.
        ValueError: a place step without ``place_goal``.
    """
    step = runner.current
    if step is None:
        raise RuntimeError("no step is running")
    if step.action == "place" and place_goal is None:
        raise ValueError(f"{str(step)!r} is judged against its place goal; none was given")
    try:
        if step.action == "move":
            return move_succeeded(truth.base_pose(), move_goal(scene, step.target), config)
        pose = truth.object_pose(step.target)
        if step.action == "pick":
            ok, reason = pick_succeeded(
                pose.translation[2], surface_z(scene, runner.plan, runner.index), step.target, config
            )
            if ok and hold_distance_m is not None:
                ok, reason = held(scene, step.target, pose, truth.tcp(), hold_distance_m)
            return ok, reason
        assert place_goal is not None
        ok, reason = place_succeeded(pose.translation, place_goal, step.target, config)
        in_hand = (
            hold_distance_m is not None
            and ok
            and held(scene, step.target, pose, truth.tcp(), hold_distance_m)[0]
        )
        if in_hand:
            return False, f"the {step.target} is at its target but still in the gripper (it must be let go)"
        return ok, reason
    except (TransformError, KeyError) as err:
        return False, f"no ground truth to judge the step: {err}"
