"""Replanning with execution feedback (MORE, shared/seeds/003_…, Sec. III-B "Task planning").

When a step fails, or the monitor aborts it, the task executor asks the planner again, now with the
state of the world: a :class:`PlanContext` holds where each object is (a zone, ``held`` or ``none``),
what the robot holds and where it stands, the steps done so far with their outcomes, why the last one
failed (the executor's or the monitor's reason) and the instruction with the plan first made for it.
MORE gives its language planner the scene graph as text with the robot state, the action history
and the environment's feedback; :func:`scene_graph_text` is that text for galley's flat scene (the
kitchen is one room: zones are its regions, objects hang under their zone).

:func:`remaining_plan` is how galley's own planner uses the context: the plan first made says where
each object must end (its last ``place``); from the current state, objects already there need
nothing, a held object is carried to its target first (the robot holds one object at a time), and
an object knocked or moved elsewhere is picked again from where it lies now.
:func:`locate_objects` turns ground-truth positions into the context's ``objects``.
Pure Python: no ROS, no simulator.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from galley_core.scene import Scene
from galley_core.tasks.grammar import InvalidPlanError, parse_plan, validate_plan

__all__ = [
    "HELD",
    "NOWHERE",
    "EpisodeReplans",
    "PlanContext",
    "StepOutcome",
    "goal_zones",
    "locate_objects",
    "remaining_plan",
    "scene_graph_text",
]

#: Where an object is that the gripper holds / that lies in no zone (on the floor, between zones).
HELD = "held"
NOWHERE = "none"

#: An object rests in a zone when its bottom is this close to the zone's surface (metres).
_RESTING_TOLERANCE_M = 0.03


@dataclass(frozen=True)
class StepOutcome:
    """A step done in the episode: its text, whether it succeeded, and why not."""

    step: str
    success: bool
    reason: str = ""


@dataclass(frozen=True)
class PlanContext:
    """What the planner is told when it plans again (MORE's scene graph, robot state and history).

    Attributes:
        instruction: the instruction of the episode.
        objects: (object, where) for every object of the scene: a zone name, ``held`` or ``none``.
        held: the object in the gripper, "" when none.
        robot_zone: the zone the base stands at (nearest approach pose), "" when unknown.
        steps: every step executed so far in the episode, across plans, in order.
        failure: why the last step failed: the executor's or the monitor's reason.
        plan: the plan first made for the instruction (its goal: where each object must end).
        replan: how many replans came before this one (0 for the first).
    """

    instruction: str
    objects: tuple[tuple[str, str], ...]
    held: str = ""
    robot_zone: str = ""
    steps: tuple[StepOutcome, ...] = ()
    failure: str = ""
    plan: tuple[str, ...] = ()
    replan: int = 0
    where: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", dict(self.objects))

    def to_json(self) -> str:
        """The context as one JSON object (the /task/replan message's data)."""
        return json.dumps(
            {
                "instruction": self.instruction,
                "objects": dict(self.objects),
                "held": self.held,
                "robot_zone": self.robot_zone,
                "steps": [{"step": s.step, "success": s.success, "reason": s.reason} for s in self.steps],
                "failure": self.failure,
                "plan": list(self.plan),
                "replan": self.replan,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> PlanContext:
        """The context of :meth:`to_json`'s text.

        Raises:
            ValueError: not JSON, or a field missing or of the wrong type; the message names it.
        """
        try:
            d: Any = json.loads(text)
            return cls(
                instruction=str(d["instruction"]),
                objects=tuple((str(k), str(v)) for k, v in dict(d["objects"]).items()),
                held=str(d.get("held", "")),
                robot_zone=str(d.get("robot_zone", "")),
                steps=tuple(
                    StepOutcome(str(s["step"]), bool(s["success"]), str(s.get("reason", "")))
                    for s in d.get("steps", [])
                ),
                failure=str(d.get("failure", "")),
                plan=tuple(str(s) for s in d.get("plan", [])),
                replan=int(d.get("replan", 0)),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise ValueError(
                f"replan context {text[:120]!r} is not a PlanContext's JSON ({type(err).__name__}: {err}); "
                "publish PlanContext.to_json()"
            ) from None


def locate_objects(
    scene: Scene, positions: Mapping[str, Sequence[float]], held: str = ""
) -> tuple[tuple[str, str], ...]:
    """(object, where) for each object of ``scene``, from ground truth.

    ``positions`` holds each object's bottom centre (x, y, z) in the map frame, metres; ``held`` names
    the object the gripper holds. An object rests in a zone when its (x, y) lies on the zone's patch
    and its bottom within 3 cm of the zone's surface; any other object (or one without a position)
    is ``none``.
    """
    out = []
    for name in scene.object_names:
        where = NOWHERE
        if name == held:
            where = HELD
        elif name in positions:
            x, y, z = (float(v) for v in positions[name][:3])
            for zone in scene.zones:
                (cx, cy), (sx, sy) = zone.center, zone.size
                on_patch = abs(x - cx) <= sx / 2.0 and abs(y - cy) <= sy / 2.0
                if on_patch and abs(z - zone.z) <= _RESTING_TOLERANCE_M:
                    where = zone.name
                    break
        out.append((name, where))
    return tuple(out)


def goal_zones(plan: Sequence[str]) -> dict[str, str]:
    """Object -> the zone a plan leaves it in (the zone of the last move before its last place).

    Objects in the order the plan first places them.

    Raises:
        InvalidPlanError: a step off the grammar.
    """
    at, goals = "", {}
    for step in parse_plan(list(plan)):
        if step.action == "move":
            at = step.target
        elif step.action == "place" and at:
            goals[step.target] = at
    return goals


def remaining_plan(goal_plan: Sequence[str], context: PlanContext, scene: Scene) -> tuple[str, ...]:
    """The steps that still bring every object of ``goal_plan`` to its target, from ``context``'s state.

    An object already in its target zone needs nothing; a held one is carried to its target first; one
    in another zone is fetched from there. The robot is at ``context.robot_zone``: a move there is
    skipped only while it still holds nothing it must carry (the plan first drives where it stands).
    An empty result means the goal holds already.

    Raises:
        ValueError: an object of the goal lies in no zone (nothing can pick it there), or the robot
            holds an object the goal does not place; the message names it.
    """
    goals = goal_zones(goal_plan)
    where = context.where
    held = context.held or next((o for o, w in where.items() if w == HELD), "")
    if held and held not in goals:
        raise ValueError(
            f"the robot holds the {held}, which the plan {list(goal_plan)} does not place; "
            "the instruction does not say where it goes"
        )
    order = ([held] if held else []) + [o for o in goals if o != held]
    at = context.robot_zone if not held else ""
    steps: list[str] = []
    for obj in order:
        target, now = goals[obj], where.get(obj, NOWHERE)
        if now == target:
            continue
        if now != HELD:
            if now == NOWHERE:
                raise ValueError(
                    f"the {obj} lies in no zone (on the floor or between zones); galley picks objects "
                    "only from a zone, so no plan can bring it to the "
                    f"{target} zone"
                )
            if at != now:
                steps.append(f"move to the {now} zone")
            steps.append(f"pick the {obj}")
        steps += [f"move to the {target} zone", f"place the {obj}"]
        at = target
    _check(steps, scene)
    return tuple(steps)


def _check(steps: Sequence[str], scene: Scene) -> None:
    try:
        validate_plan(parse_plan(list(steps)), scene)
    except InvalidPlanError as err:
        raise ValueError(f"the remaining plan is off the scene: {err}") from None


def scene_graph_text(context: PlanContext, scene: Scene) -> str:
    """The context as MORE's scene graph in text: regions with their objects, the robot, the history.

    e.g.::

        Scene graph (the kitchen; zones and the objects in them):
        - red zone: apple, cup
        - green zone: (nothing)
        - held by the robot: bowl
        - in no zone: fork
        Robot: at the green zone, holding the bowl.
        Steps done:
        1. move to the blue zone: succeeded
        2. pick the bowl: FAILED (the bowl is not lifted)
        Last failure: the bowl is not lifted
        Original plan: move to the blue zone; pick the bowl; move to the green zone; place the bowl
        Plan the steps that remain to fulfil the instruction from this state.
    """
    where = context.where
    lines = [f"Scene graph (the {scene.name}; zones and the objects in them):"]
    for zone in scene.zone_names:
        inside = [o for o in scene.object_names if where.get(o) == zone]
        lines.append(f"- {zone} zone: {', '.join(inside) if inside else '(nothing)'}")
    for label, key in (("held by the robot", HELD), ("in no zone", NOWHERE)):
        found = [o for o in scene.object_names if where.get(o, NOWHERE) == key]
        if found:
            lines.append(f"- {label}: {', '.join(found)}")
    stand = f"at the {context.robot_zone} zone" if context.robot_zone else "at no zone"
    holding = f"holding the {context.held}" if context.held else "holding nothing"
    lines.append(f"Robot: {stand}, {holding}.")
    if context.steps:
        lines.append("Steps done:")
        for i, s in enumerate(context.steps, 1):
            outcome = "succeeded" if s.success else "FAILED" + (f" ({s.reason})" if s.reason else "")
            lines.append(f"{i}. {s.step}: {outcome}")
    if context.failure:
        lines.append(f"Last failure: {context.failure}")
    if context.plan:
        lines.append(f"Original plan: {'; '.join(context.plan)}")
    lines.append("Plan the steps that remain to fulfil the instruction from this state.")
    return "\n".join(lines)


@dataclass
class EpisodeReplans:
    """An episode's replans: how many are left, the steps of the plans before, and each replan.

    The task executor keeps one per episode: :meth:`start` with the first plan, :meth:`request`
    when a step fails (it returns False when no replan is left: the episode ends as before),
    :meth:`answered` with the new plan. ``max_replans`` 0 never replans.
    """

    max_replans: int = 0
    first_plan: tuple[str, ...] = ()
    #: Steps of the plans that failed, in order: (step, success, duration_s, reason).
    earlier: list[tuple[str, bool, float, str]] = field(default_factory=list)
    #: One entry per replan: {"reason", "plan"} (plan empty while awaited, or when nothing remained).
    replans: list[dict[str, Any]] = field(default_factory=list)
    #: Whether a replan was asked for and no plan has come yet.
    pending: bool = False

    def start(self, plan: Sequence[str]) -> None:
        """A new episode with ``plan``: no replans yet."""
        self.first_plan, self.earlier, self.replans, self.pending = tuple(plan), [], [], False

    @property
    def count(self) -> int:
        return len(self.replans)

    def request(self, results: Sequence[tuple[str, bool, float, str]], reason: str) -> bool:
        """A plan failed with ``results`` (its steps done) for ``reason``: whether to plan again."""
        if self.pending or self.count >= self.max_replans:
            return False
        self.earlier += list(results)
        self.replans.append({"reason": reason, "plan": []})
        self.pending = True
        return True

    def answered(self, plan: Sequence[str]) -> None:
        """The new plan arrived."""
        self.replans[-1]["plan"] = list(plan)
        self.pending = False

    def context(self, instruction: str, objects: tuple[tuple[str, str], ...], robot_zone: str) -> PlanContext:
        """The :class:`PlanContext` of the replan just requested."""
        held = next((o for o, w in objects if w == HELD), "")
        return PlanContext(
            instruction=instruction,
            objects=objects,
            held=held,
            robot_zone=robot_zone,
            steps=tuple(StepOutcome(s, ok, why) for s, ok, _, why in self.earlier),
            failure=self.replans[-1]["reason"],
            plan=self.first_plan,
            replan=self.count - 1,
        )
