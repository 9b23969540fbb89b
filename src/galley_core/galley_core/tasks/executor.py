"""The policy evaluator's logic: run a plan step by step and judge each step (Kitchen-R Sec. IV, V-A).

:class:`PlanRunner` keeps the sequence: which step runs, since when, what each finished step
achieved, and whether the episode goes on after a failure (Kitchen-R stops an episode at the
first failed step unless the robot is teleported to the next step's start: galley then teleports
the base after a failed move, the object after a failed place, and the object into the gripper,
the arm tucked, after a failed pick).
The node around it (``task_executor``) sends the navigation and arm goals and calls
:meth:`PlanRunner.finish` when they report. Whether a step succeeded is
:mod:`galley_core.tasks.judging`'s (Kitchen-R's criteria on ground truth).

:func:`move_goal` is the base pose a move step drives to; :func:`place_target` chooses where in
a zone an object is put down: the spot of the zone's patch nearest the robot whose footprint keeps
clear of the other objects' footprints.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from galley_core.config import Config, param
from galley_core.geometry import Pose2D
from galley_core.scene import Scene
from galley_core.tasks.grammar import Step

__all__ = [
    "ExecutorConfig",
    "PlanRunner",
    "StepResult",
    "move_goal",
    "place_target",
]


@dataclass(frozen=True)
class ExecutorConfig(Config):
    """How the evaluator runs and judges a plan (Kitchen-R's defaults)."""

    step_time_limit_s: float = param(120.0, "simulated time allowed for one step", unit="s", gt=0.0)
    nav_success_radius_m: float = param(
        0.10, "move succeeds with the base this close to the goal", unit="m", gt=0.0
    )
    nav_heading_tolerance_rad: float = param(
        0.1,
        "completion 'criteria' ends a move only with the base also facing the goal's heading this "
        "closely (the path follower's tolerance), so a policy turns as the oracle does before a pick; "
        "at the time limit the move is judged on position alone, Kitchen-R's criterion, which never "
        "looks at the yaw; pi: end it on position, yaw free",
        unit="rad",
        gt=0.0,
        le=math.pi,
    )
    place_success_radius_m: float = param(
        0.05, "place succeeds with the object this close to its target", unit="m", gt=0.0
    )
    lift_height_m: float = param(
        0.03, "pick succeeds with the object this far above its surface", unit="m", gt=0.0
    )
    pick_carry_height_m: float = param(
        0.0,
        "completion 'criteria' ends a pick only with the object's bottom this high above the floor "
        "(the pick-and-place machine's carry pose, arm_controller's carry_height_m), so a policy's "
        "next move starts carrying the object over the counters as the oracle's does; at the time "
        "limit the pick is judged on the lift alone; 0: end it at the lift",
        unit="m",
        ge=0.0,
    )
    pick_retreat_m: float = param(
        0.0,
        "completion 'criteria' ends a pick only with the tool centre point this far (horizontally) from "
        "where the object stood when the pick began and no longer drawing away (the oracle's pick ends "
        "with its retreat towards the base over; a policy's object reaches pick_carry_height_m with the "
        "arm still reaching out, and the place after the next move then starts from a pose no "
        "demonstration starts from); at the time limit the pick is judged on the lift alone; 0: no wait",
        unit="m",
        ge=0.0,
    )
    max_steps: int = param(0, "execute only the first K steps of the plan; 0: all", ge=0)
    teleport_on_failure: bool = param(
        False,
        "after a failed step, teleport the world to where the step should have left it and go on (a "
        "move: the base to its goal; a pick: the object into the gripper, the arm tucked; a place: the "
        "object onto its target); else stop at the first failure",
    )


@dataclass(frozen=True)
class StepResult:
    """What one step achieved."""

    step: str
    success: bool
    duration_s: float
    reason: str = ""


@dataclass
class PlanRunner:
    """Sequence of a plan's steps with their outcomes; time is simulated seconds."""

    plan: Sequence[Step]
    config: ExecutorConfig
    results: list[StepResult] = field(default_factory=list)
    index: int = 0
    started_s: float | None = None
    stopped: bool = False

    def __post_init__(self) -> None:
        if self.config.max_steps:
            self.plan = list(self.plan)[: self.config.max_steps]

    @property
    def current(self) -> Step | None:
        """The running (or next) step, None when the episode is over."""
        return None if self.done else self.plan[self.index]

    @property
    def done(self) -> bool:
        return self.stopped or self.index >= len(self.plan)

    @property
    def success(self) -> bool:
        """Every step of the (possibly truncated) plan succeeded."""
        return len(self.results) == len(self.plan) and all(r.success for r in self.results)

    def begin(self, now_s: float) -> Step:
        """Start the current step at ``now_s``."""
        step = self.current
        if step is None:
            raise RuntimeError("the plan is finished")
        self.started_s = now_s
        return step

    def elapsed_s(self, now_s: float) -> float:
        return 0.0 if self.started_s is None else now_s - self.started_s

    def outcomes(self) -> list[tuple[str, bool, float, str]]:
        """Each finished step as (step, success, duration_s, reason), in order."""
        return [(r.step, r.success, r.duration_s, r.reason) for r in self.results]

    def timed_out(self, now_s: float) -> bool:
        return self.started_s is not None and self.elapsed_s(now_s) > self.config.step_time_limit_s

    def finish(self, success: bool, reason: str, now_s: float) -> StepResult:
        """Record the current step's outcome and move on (or stop after a failure)."""
        step = self.current
        if step is None:
            raise RuntimeError("no step is running")
        result = StepResult(str(step), success, round(self.elapsed_s(now_s), 3), reason)
        self.results.append(result)
        self.index += 1
        self.started_s = None
        if not success and not self.config.teleport_on_failure:
            self.stopped = True
        return result

    def abort(self, reason: str, now_s: float) -> None:
        """End the episode now (a monitor abort): the running step fails with ``reason``."""
        if self.current is not None and self.started_s is not None:
            self.finish(False, reason, now_s)
        self.stopped = True


def move_goal(scene: Scene, zone: str) -> Pose2D:
    """The base pose of a ``move to the <zone> zone`` step: the zone's approach pose."""
    x, y, yaw = scene.zone(zone).approach
    return Pose2D(x, y, yaw)


def place_target(
    scene: Scene,
    zone: str,
    obj: str,
    others: Mapping[str, tuple[float, float]],
    robot: tuple[float, float],
    *,
    grid: int = 9,
) -> tuple[float, float, float]:
    """Where to put ``obj`` down in ``zone``: (x, y, z of the surface).

    Candidates lie on a ``grid`` x ``grid`` lattice over the zone's patch, the object's centre kept
    half its footprint radius inside the patch's edges (so that the footprint stays on the surface).
    Each is scored by the gap between the object's footprint and the nearest other object's
    footprint (rims, not centres: a plate's 9 cm radius is most of a 30 cm patch), counted up to
    ``_PLACE_CLEARANCE_M``; among the clearest, the one nearest the robot wins, where the arm
    reaches it most easily. Candidates within ``_PLACE_REACH_M`` of the robot come first (a base
    parked up to 10 cm short leaves the patch's far corners out of reach). Centre distances alone
    put plates on top of apples and forks in crowded zones: the plate then landed tilted,
    centimetres off, or pushed the other object off.
    """
    z = scene.zone(zone)
    radius = scene.object(obj).footprint_radius
    half = [max(0.0, s / 2.0 - radius / 2.0) for s in z.size]
    footprints = {n: _footprint(scene, n) for n in others if n != obj}
    candidates = []
    for i in range(grid):
        for j in range(grid):
            x = z.center[0] - half[0] + 2 * half[0] * i / (grid - 1)
            y = z.center[1] - half[1] + 2 * half[1] * j / (grid - 1)
            gap = min(
                (math.hypot(x - others[n][0], y - others[n][1]) - radius - r for n, r in footprints.items()),
                default=math.inf,
            )
            distance = math.hypot(x - robot[0], y - robot[1])
            candidates.append((distance <= _PLACE_REACH_M, min(gap, _PLACE_CLEARANCE_M), -distance, x, y))
    *_, x, y = max(candidates)
    return x, y, z.z


def _footprint(scene: Scene, name: str) -> float:
    """The footprint radius of object ``name``; 0 for a name the scene does not know (a point)."""
    return scene.object(name).footprint_radius if name in scene.object_names else 0.0


#: Gap wanted between a placed object's footprint and every other object's footprint, metres.
_PLACE_CLEARANCE_M = 0.05

#: Farthest a placed object's centre is put from the robot's centre when a nearer spot will do,
#: metres: the arm, top-down over a 0.9 m counter, stalled 2 to 4 cm short of spots 0.84 m away.
_PLACE_REACH_M = 0.78
