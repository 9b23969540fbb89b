"""The plan grammar: Kitchen-R's atomic steps, exactly as the paper writes them.

A plan is a list of steps, each one of

* ``move to the <zone> zone`` — drive the base to the zone's approach pose;
* ``pick the <object>`` — grasp the object and lift it;
* ``place the <object>`` — put the held object down at the current zone.

e.g. "Move the bowl to the green zone" -> ``move to the blue zone``, ``pick the bowl``,
``move to the green zone``, ``place the bowl`` (Kitchen-R, Fig. 5). :func:`parse_step` and
:func:`format_step` convert between text and :class:`Step`; :func:`validate_plan` checks a plan
against a scene and names any unknown zone or object with the valid ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from galley_core.scene import Scene

__all__ = [
    "ACTIONS",
    "InvalidPlanError",
    "Step",
    "format_step",
    "parse_plan",
    "parse_step",
    "valid_steps",
    "validate_plan",
]

Action = Literal["move", "pick", "place"]
ACTIONS: tuple[Action, ...] = ("move", "pick", "place")

_MOVE = re.compile(r"^move to the (?P<target>[a-z][a-z_ ]*?) zone$")
_PICK = re.compile(r"^pick the (?P<target>[a-z][a-z_ ]*)$")
_PLACE = re.compile(r"^place the (?P<target>[a-z][a-z_ ]*)$")


class InvalidPlanError(ValueError):
    """A step that is not in the grammar, or that names a zone or object the scene lacks."""


@dataclass(frozen=True)
class Step:
    """One atomic step: an action and its target (a zone name for move, an object name otherwise)."""

    action: Action
    target: str

    def __str__(self) -> str:
        return format_step(self)


def format_step(step: Step) -> str:
    """The step's text in the grammar's exact wording."""
    if step.action == "move":
        return f"move to the {step.target} zone"
    return f"{step.action} the {step.target}"


def parse_step(text: str) -> Step:
    """Parse one step (surrounding whitespace and letter case are forgiven).

    Raises:
        InvalidPlanError: the text is not one of the three step forms.
    """
    clean = " ".join(text.strip().lower().split())
    for action, pattern in (("move", _MOVE), ("pick", _PICK), ("place", _PLACE)):
        match = pattern.match(clean)
        if match:
            return Step(action, match["target"])  # type: ignore[arg-type]
    raise InvalidPlanError(
        f"{text!r} is not a step; steps read 'move to the <zone> zone', 'pick the <object>' or "
        "'place the <object>'"
    )


def parse_plan(steps: Iterable[str]) -> list[Step]:
    """Parse every step of a plan.

    Raises:
        InvalidPlanError: naming the first step that is not in the grammar and its index.
    """
    out = []
    for i, text in enumerate(steps):
        try:
            out.append(parse_step(text))
        except InvalidPlanError as err:
            raise InvalidPlanError(f"step {i}: {err}") from None
    return out


def validate_plan(plan: Sequence[Step], scene: Scene) -> None:
    """Check that every step names a zone or object of ``scene``.

    Raises:
        InvalidPlanError: naming the step, the unknown name and the valid ones.
    """
    for i, step in enumerate(plan):
        if step.action == "move" and step.target not in scene.zone_names:
            raise InvalidPlanError(
                f"step {i} ({step}): scene {scene.name!r} has no zone {step.target!r}; "
                f"zones: {', '.join(scene.zone_names)}"
            )
        if step.action != "move" and step.target not in scene.object_names:
            raise InvalidPlanError(
                f"step {i} ({step}): scene {scene.name!r} has no object {step.target!r}; "
                f"objects: {', '.join(scene.object_names)}"
            )


def valid_steps(scene: Scene) -> list[str]:
    """Every step the scene allows (Kitchen-R's "valid instructions"), moves first."""
    steps = [format_step(Step("move", z)) for z in scene.zone_names]
    for action in ("pick", "place"):
        steps += [format_step(Step(action, o)) for o in scene.object_names]
    return steps
