"""The instruction suite: templates that turn an episode into an instruction and its gold plan.

Kitchen-R evaluates planners on 563 instructions from 58 templates with plans of 4 to 8 steps
(Sec. V-I). An instruction only has a gold plan in a situation: "Move the bowl to the green zone"
starts with ``move to the blue zone`` when the bowl is on the blue zone, which the planner sees in
the top-down image. So a suite entry is (instruction, episode seed, gold plan): the seed fixes
where every object starts (:func:`galley_core.episode.sample_episode`).

Every template is a list of relocations (object -> zone) with a wording; :func:`gold_plan` turns
relocations into steps the way an oracle executes them: drive to the object's zone unless already
there, pick, drive to the target zone unless already there, place — so "remove the cup from the
red zone onto the blue zone and put the bowl there instead" takes 7 steps, as in the paper.

The suite is generated once by :func:`generate_suite` and saved under ``config/suites/`` with a
version; the ``split`` of each entry is ``train`` or ``test`` (held-out instructions of seen
templates) or ``unseen`` (the held-out templates, for generalisation).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from galley_core.episode import Episode, sample_episode
from galley_core.files import read_yaml
from galley_core.scene import Scene
from galley_core.tasks.grammar import InvalidPlanError, Step, format_step

__all__ = [
    "SUITE_VERSION",
    "TEMPLATES",
    "SuiteEntry",
    "SuiteError",
    "Template",
    "generate_suite",
    "gold_plan",
    "load_suite",
    "plan_for_instruction",
    "save_suite",
]

SUITE_VERSION = 1

#: Relocations of a template, computed from the slots: (object, target zone) pairs in order.
Relocations = list[tuple[str, str]]


@dataclass(frozen=True)
class Template:
    """One way of asking for a rearrangement.

    Attributes:
        id: stable identifier, e.g. ``"move_1"``.
        text: the wording with slots ``{o}``, ``{o2}`` (objects), ``{z}``, ``{z2}`` (target zones),
            ``{zs}``, ``{zs2}`` (the zones the objects start in).
        kind: which relocations it asks for: ``one`` (o -> z), ``two`` (o -> z, o2 -> z2),
            ``same`` (o -> z, o2 -> z), ``replace`` (o -> zone of o2, o2 -> zone of o),
            ``to_object`` (o -> the zone of o2).
    """

    id: str
    text: str
    kind: str


def _t(prefix: str, kind: str, texts: Sequence[str]) -> list[Template]:
    return [Template(f"{prefix}_{i + 1}", text, kind) for i, text in enumerate(texts)]


TEMPLATES: tuple[Template, ...] = tuple(
    _t(
        "move",
        "one",
        [
            "Move the {o} to the {z} zone.",
            "Put the {o} in the {z} zone.",
            "Take the {o} to the {z} zone.",
            "Bring the {o} over to the {z} zone.",
            "Could you relocate the {o} to the {z} zone?",
            "Carry the {o} to the {z} area.",
            "Place the {o} on the {z} zone.",
            "I need the {o} in the {z} zone.",
            "Transfer the {o} to the {z} zone.",
            "Pick up the {o} and leave it at the {z} zone.",
            "Please set the {o} down in the {z} zone.",
            "The {o} belongs in the {z} zone; put it there.",
            "Get the {o} and drop it off at the {z} zone.",
            "Shift the {o} into the {z} zone.",
            "Grab the {o} and bring it to the {z} zone.",
            "Can you take the {o} and put it on the {z} zone?",
            "Deliver the {o} to the {z} zone.",
            "Fetch the {o} and place it in the {z} zone.",
            "Have the {o} moved to the {z} zone.",
            "Relocate the {o} so that it sits in the {z} zone.",
        ],
    )
    + _t(
        "from",
        "one",
        [
            "Move the {o} from the {zs} zone to the {z} zone.",
            "Take the {o} off the {zs} zone and put it in the {z} zone.",
            "The {o} is in the {zs} zone; bring it to the {z} zone.",
            "Clear the {o} from the {zs} zone by moving it to the {z} zone.",
            "Pick the {o} up from the {zs} zone and place it on the {z} zone.",
            "Carry the {o} from the {zs} area over to the {z} area.",
        ],
    )
    + _t(
        "two",
        "two",
        [
            "Move the {o} to the {z} zone and the {o2} to the {z2} zone.",
            "Put the {o} in the {z} zone, then put the {o2} in the {z2} zone.",
            "Take the {o} to the {z} zone and take the {o2} to the {z2} zone.",
            "First bring the {o} to the {z} zone, then bring the {o2} to the {z2} zone.",
            "I want the {o} in the {z} zone and the {o2} in the {z2} zone.",
            "Relocate the {o} to the {z} zone; afterwards relocate the {o2} to the {z2} zone.",
            "Place the {o} on the {z} zone and the {o2} on the {z2} zone.",
            "Carry the {o} over to the {z} zone, and then the {o2} over to the {z2} zone.",
            "Deliver the {o} to the {z} zone and deliver the {o2} to the {z2} zone.",
            "Could you move the {o} to the {z} zone and after that the {o2} to the {z2} zone?",
            "Get the {o} into the {z} zone and the {o2} into the {z2} zone.",
            "Set the {o} down in the {z} zone, then set the {o2} down in the {z2} zone.",
        ],
    )
    + _t(
        "same",
        "same",
        [
            "Put the {o} and the {o2} in the {z} zone.",
            "Gather the {o} and the {o2} in the {z} zone.",
            "Move both the {o} and the {o2} to the {z} zone.",
            "Bring the {o}, then the {o2}, to the {z} zone.",
            "Collect the {o} and the {o2} at the {z} zone.",
            "I want the {o} and the {o2} together in the {z} zone.",
            "Take the {o} to the {z} zone and the {o2} there too.",
            "Place the {o} and then the {o2} on the {z} zone.",
        ],
    )
    + _t(
        "replace",
        "replace",
        [
            "Remove the {o} from the {zs} zone onto the {zs2} zone and place the {o2} instead.",
            "Swap places: put the {o} where the {o2} is, and the {o2} where the {o} was.",
            "Move the {o} to the {zs2} zone and bring the {o2} back to the {zs} zone.",
            "Replace the {o} in the {zs} zone with the {o2} from the {zs2} zone.",
            "Exchange the {o} and the {o2}: the {o} goes to the {zs2} zone first.",
            "Put the {o} on the {zs2} zone, then take the {o2} from there to the {zs} zone.",
        ],
    )
    + _t(
        "near",
        "to_object",
        [
            "Bring the {o} to where the {o2} is.",
            "Put the {o} next to the {o2}.",
            "Move the {o} to the zone that holds the {o2}.",
            "Place the {o} beside the {o2}.",
            "Take the {o} over to the {o2}.",
            "Set the {o} down in the same zone as the {o2}.",
        ],
    )
)


def gold_plan(relocations: Sequence[tuple[str, str]], start_zones: dict[str, str]) -> list[Step]:
    """Steps an oracle takes for ``relocations`` (object -> zone), objects starting in ``start_zones``.

    The robot starts at no zone, drives only when it is not already where it must be, and holds
    one object at a time.
    """
    where = dict(start_zones)
    at: str | None = None
    steps: list[Step] = []
    for obj, zone in relocations:
        if at != where[obj]:
            steps.append(Step("move", where[obj]))
            at = where[obj]
        steps.append(Step("pick", obj))
        if at != zone:
            steps.append(Step("move", zone))
            at = zone
        steps.append(Step("place", obj))
        where[obj] = zone
    return steps


@dataclass(frozen=True)
class SuiteEntry:
    """One instruction of the suite, with the episode it refers to and its gold plan."""

    id: str
    template: str
    split: str
    instruction: str
    seed: int
    plan: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["plan"] = list(self.plan)
        return out

    @staticmethod
    def from_dict(data: dict[str, Any]) -> SuiteEntry:
        return SuiteEntry(
            id=str(data["id"]),
            template=str(data["template"]),
            split=str(data["split"]),
            instruction=str(data["instruction"]),
            seed=int(data["seed"]),
            plan=tuple(str(s) for s in data["plan"]),
        )


def _relocations(kind: str, slots: dict[str, str], start: dict[str, str]) -> Relocations:
    """The (object, zone) moves a template of ``kind`` asks for, objects starting in ``start``."""
    o, o2 = slots.get("o", ""), slots.get("o2", "")
    if kind == "one":
        return [(o, slots["z"])]
    if kind == "to_object":
        return [(o, start[o2])]
    if kind == "replace":
        return [(o, start[o2]), (o2, start[o])]
    if kind == "same":
        return [(o, slots["z"]), (o2, slots["z"])]
    if kind == "two":
        return [(o, slots["z"]), (o2, slots["z2"])]
    raise ValueError(f"unknown template kind {kind!r}")


def _fill(template: Template, episode: Episode, rng: random.Random) -> tuple[str, Relocations] | None:
    """An instruction and its relocations for this episode, or None when the episode does not fit."""
    start = {p.name: p.zone for p in episode.objects}
    objects = sorted(start)
    zones = sorted({p.zone for p in episode.objects} | {p.goal_zone for p in episode.objects})
    if len(objects) < 2:
        return None
    o, o2 = rng.sample(objects, 2)
    others = [z for z in zones if z != start[o]]
    z = rng.choice(others)
    slots = {"o": o, "o2": o2, "z": z, "zs": start[o], "zs2": start[o2]}
    if template.kind == "same" and z == start[o2]:
        return None  # o2 would already be there
    if template.kind == "two":
        slots["z2"] = rng.choice([x for x in zones if x != start[o2] and x != z])
    relocations = _relocations(template.kind, slots, start)
    return template.text.format(**slots), relocations


def generate_suite(
    scene: Scene,
    *,
    per_template: int = 10,
    held_out_every: int = 6,
    test_fraction: float = 0.2,
    seed: int = 0,
    episode_sampler: Callable[[Scene, int], Episode] = sample_episode,
) -> list[SuiteEntry]:
    """Generate the suite for ``scene``.

    Args:
        per_template: instructions per template (58 templates x 10 = 580 >= Kitchen-R's 563).
        held_out_every: every n-th template is held out entirely (split ``unseen``).
        test_fraction: share of each seen template's instructions kept for testing (split ``test``).
        seed: seeds the choice of episodes, objects and zones.
        episode_sampler: draws the episode of a seed (the scene's randomisation by default).

    Every entry's plan has 4 to 8 steps and names only the scene's zones and objects.
    """
    rng = random.Random(seed)
    entries: list[SuiteEntry] = []
    used: set[tuple[str, int]] = set()
    for t_index, template in enumerate(TEMPLATES):
        unseen = held_out_every > 0 and t_index % held_out_every == held_out_every - 1
        made = 0
        attempt = 0
        while made < per_template:
            attempt += 1
            if attempt > 50 * per_template:
                raise RuntimeError(f"template {template.id}: could not fill {per_template} instructions")
            episode_seed = rng.randrange(1_000_000)
            if (template.id, episode_seed) in used:
                continue
            episode = episode_sampler(scene, episode_seed)
            filled = _fill(template, episode, rng)
            if filled is None:
                continue
            instruction, relocations = filled
            plan = gold_plan(relocations, {p.name: p.zone for p in episode.objects})
            if not 4 <= len(plan) <= 8:
                continue
            used.add((template.id, episode_seed))
            split = (
                "unseen" if unseen else ("test" if made >= per_template * (1 - test_fraction) else "train")
            )
            entries.append(
                SuiteEntry(
                    id=f"{template.id}-{made:02d}",
                    template=template.id,
                    split=split,
                    instruction=instruction,
                    seed=episode_seed,
                    plan=tuple(format_step(s) for s in plan),
                )
            )
            made += 1
    return entries


def save_suite(entries: Sequence[SuiteEntry], path: str | Path, *, scene: str) -> None:
    """Write a suite file (YAML): version, scene, and the entries."""
    document = {"version": SUITE_VERSION, "scene": scene, "instructions": [e.to_dict() for e in entries]}
    Path(path).write_text(yaml.safe_dump(document, sort_keys=False, width=120))


def load_suite(path: str | Path) -> tuple[str, list[SuiteEntry]]:
    """The scene name and the entries of a suite file.

    Raises:
        SuiteError: the file is missing, malformed, or of another version.
    """
    document = read_yaml(path, what="suite file", error=SuiteError)
    if not isinstance(document, dict) or "instructions" not in document:
        raise SuiteError(f"suite file {path}: expected keys version, scene, instructions")
    if document.get("version") != SUITE_VERSION:
        raise SuiteError(
            f"suite file {path} has version {document.get('version')!r}; this galley reads version "
            f"{SUITE_VERSION} (regenerate it with: galley suite)"
        )
    try:
        return str(document["scene"]), [SuiteEntry.from_dict(e) for e in document["instructions"]]
    except (KeyError, TypeError, ValueError) as err:
        raise SuiteError(f"suite file {path}: an entry is malformed ({err!r})") from None


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names it and the fix."""


def _template_pattern(template: Template, zone_names: Sequence[str] = ()) -> re.Pattern[str]:
    """The template as a pattern; a zone slot also takes the scene's names of several words."""
    text = re.escape(template.text.rstrip(".?!").lower())
    spaced = sorted((n for n in zone_names if " " in n), key=len, reverse=True)
    zone = "|".join([*(re.escape(n) for n in spaced), "[a-z_]+"])
    for slot in ("o2", "o", "zs2", "zs", "z2", "z"):  # longest names first
        word = f"(?:{zone})" if slot.startswith("z") else "[a-z_]+"
        text = text.replace(re.escape("{" + slot + "}"), f"(?P<{slot}>{word})", 1)
        text = text.replace(re.escape("{" + slot + "}"), f"(?P={slot})")
    return re.compile(text + r"[.?!]?")


def plan_for_instruction(instruction: str, scene: Scene, episode: Episode) -> tuple[str, list[Step]]:
    """The template an instruction follows and its gold plan in ``episode``.

    Raises:
        InvalidPlanError: the instruction follows no template, names an unknown object or zone, states a
            start zone that the episode contradicts, or asks for nothing (already done).
    """
    clean = " ".join(instruction.strip().lower().split())
    start = {p.name: p.zone for p in episode.objects}
    for template in TEMPLATES:
        match = _template_pattern(template, scene.zone_names).fullmatch(clean)
        if match is None:
            continue
        slots = match.groupdict()
        for key in ("o", "o2"):
            if key in slots and slots[key] not in start:
                known = ", ".join(sorted(start))
                raise InvalidPlanError(
                    f"{instruction!r}: no object {slots[key]!r} in this episode; objects: {known}"
                )
        for key in ("z", "z2", "zs", "zs2"):
            if key in slots and slots[key] not in scene.zone_names:
                raise InvalidPlanError(
                    f"{instruction!r}: no zone {slots[key]!r}; zones: {', '.join(scene.zone_names)}"
                )
        for key, obj in (("zs", "o"), ("zs2", "o2")):
            if key in slots and start[slots[obj]] != slots[key]:
                raise InvalidPlanError(
                    f"{instruction!r}: in episode {episode.seed} the {slots[obj]} is in the "
                    f"{start[slots[obj]]} zone, not the {slots[key]} zone"
                )
        relocations = _relocations(template.kind, slots, start)
        needed = [
            (obj, zone) for obj, zone in relocations if start[obj] != zone or template.kind == "replace"
        ]
        if not needed:
            raise InvalidPlanError(f"{instruction!r}: nothing to do in episode {episode.seed}: already so")
        return template.id, gold_plan(needed, start)
    raise InvalidPlanError(
        f"{instruction!r} follows none of the suite's {len(TEMPLATES)} templates; give the plan explicitly "
        "(galley run --plan 'move to the blue zone; pick the bowl; ...')"
    )
