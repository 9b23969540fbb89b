"""The ``galley`` task planner backend: galley's planner network (:mod:`.galley_model`) planning.

:class:`GalleyPlanner` loads the weights shipped in ``planners/weights/`` (retrain with
``galley train-planner``) and plans on a CPU in milliseconds.
It reads the instruction as :func:`galley_core.language.reading.canonical` writes it (typos corrected,
filler dropped, synonyms read), with location references ("the thing in the red zone") resolved to
the object the presence head sees there; instructions the scene cannot ground are refused before
(:func:`~galley_core.language.planning.check_instruction`), and after decoding a plan is cleared of
relocations nobody asked for, or refused when it moves nothing (the request is already fulfilled).
When it plans again after a failure (a :class:`~galley_core.tasks.replanning.PlanContext`), the
plan first made is the goal and :func:`~galley_core.tasks.replanning.remaining_plan` plans what
remains from where the objects are now.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from galley_core.language.planning import Plan, Planner, PlanningError, check_instruction
from galley_core.language.reading import (
    canonical,
    canonical_tokens,
    location_references,
    read,
    related_relocations,
)
from galley_core.scene import Scene
from galley_core.tasks.grammar import format_step, valid_steps
from galley_core.tasks.replanning import PlanContext, remaining_plan
from galley_core.tasks.suite import gold_plan
from galley_learning.planners.galley_model import (
    DEFAULT_WEIGHTS,
    END,
    PlannerNet,
    Vocabulary,
    greedy_decode,
    image_inputs,
    load_model,
    to_tensors,
)

__all__ = ["GalleyPlanner"]


def _shared_model(path: str | Path) -> tuple[PlannerNet, Vocabulary, dict[str, Any]]:
    """:func:`load_model`, loaded once per process and file version: planners only run it.

    An evaluation builds a task planner node per episode; loading the weights each time cost
    more than some episodes' control loops.
    """
    p = Path(path)
    try:
        files = (p, p.with_suffix(".json"))
        key = tuple((str(f.resolve()), f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    except OSError:
        return load_model(p)  # missing: load_model's error names the fix
    return _cached_model(key, p)


@functools.lru_cache(maxsize=4)
def _cached_model(key: tuple[Any, ...], path: Path) -> tuple[PlannerNet, Vocabulary, dict[str, Any]]:
    return load_model(path)


def _trim(steps: Sequence[str], reading: str, scene: Scene) -> tuple[str, ...]:
    """``steps`` without relocations that nobody asked for.

    The network sometimes adds a relocation of an object that the instruction never names, or
    carries a named object a second time. The plan's relocations (object, where it was picked,
    where it was placed) are kept for named objects, first time only, and the plan is rebuilt
    from them as the oracle drives (:func:`galley_core.tasks.suite.gold_plan`). A plan with no
    named object is kept as it is (the reading missed a name).
    """
    named = set(reading.split()) & set(scene.object_names)
    at, picked_at = "", {}
    relocations: list[tuple[str, str]] = []
    start: dict[str, str] = {}
    for step in steps:
        action, _, target = step.partition(" the ")
        if action == "move to":
            at = target.removesuffix(" zone")
        elif action == "pick":
            picked_at[target] = at
        elif action == "place" and target in picked_at and target in named and target not in start:
            start[target] = picked_at[target]
            relocations.append((target, at))
    if not relocations:
        return tuple(steps)
    kept = tuple(format_step(s) for s in gold_plan(relocations, start))
    # Only drop whole relocations: a plan the oracle would not drive stays as the model made it.
    return kept if set(kept) <= set(steps) else tuple(steps)


def _refuse_if_idle(plan: Plan) -> None:
    """Refuse a plan that moves no object to another zone.

    That is the model's answer to a request that is already fulfilled ("move the bowl to the
    green zone" with the bowl in the green zone): it picks the object and puts it back, or only
    picks it. Nothing to do, so no plan.

    Raises:
        PlanningError: ``out_of_scope``, naming the object and the zone it is in.
    """
    at, picked = "", {}
    for step in plan.steps:
        action, _, target = step.partition(" the ")
        if action == "move to":
            at = target.removesuffix(" zone")
        elif action == "pick":
            picked[target] = at
        elif action == "place" and picked.get(target, at) != at:
            return
    obj, zone = next(iter(picked.items()), ("object", at))
    raise PlanningError(
        "out_of_scope",
        f"{plan.instruction!r}: nothing to do, the {obj} is already in the {zone} zone (as the image "
        "shows); ask for a zone it is not in",
    )


class GalleyPlanner(Planner):
    """The ``galley`` backend: galley's planner network on the CPU, decoding under the scene's grammar.

    Args:
        weights: the ``.pt`` file (its ``.json`` beside it); default: the weights shipped with galley.
        constrained: mask steps the scene does not allow (the default); False lets every step of the
            model's vocabulary through (for the Table II ablation).
    """

    name = "galley"
    accepts_image = True

    def __init__(self, *, weights: str | Path = DEFAULT_WEIGHTS, constrained: bool = True) -> None:
        torch.set_num_threads(max(1, min(4, torch.get_num_threads())))
        self.net, self.vocab, self.training = _shared_model(weights)
        self.constrained = constrained

    def _allowed(self, scene: Scene) -> torch.Tensor:
        if list(self.vocab.zones) != scene.zone_names or list(self.vocab.objects) != scene.object_names:
            raise PlanningError(
                "model",
                f"galley's planner was trained on scene {self.vocab.scene!r} (zones "
                f"{', '.join(self.vocab.zones)}; objects {', '.join(self.vocab.objects)}); scene "
                f"{scene.name!r} differs: retrain it with "
                f"galley train-planner --scene {scene.name}, or choose another backend",
            )
        allowed = torch.ones(len(self.vocab.steps), dtype=torch.bool)
        if self.constrained:
            valid = set(valid_steps(scene))
            allowed = torch.tensor([s in valid or s == END for s in self.vocab.steps])
        return allowed

    def _resolve(self, text: str, scene: Scene, presence: torch.Tensor) -> dict[str, str]:
        """Zone -> the object the image shows in it, for the zones that ``text`` refers to by location.

        Each object lies where the presence head finds it most likely (the same soft choice that
        grounds object names in the network); a zone referred to that holds none is refused.
        """
        referred = [zone for _, _, zone in location_references(read(text, scene).tokens, scene)]
        if not referred:
            return {}
        zones, objects = list(self.vocab.zones), list(self.vocab.objects)
        best: dict[str, tuple[float, str]] = {}
        for o, obj in enumerate(objects):
            z = int(presence[:, o].argmax())
            score = float(presence[z, o])
            if zones[z] not in best or score > best[zones[z]][0]:
                best[zones[z]] = (score, obj)
        for zone in referred:
            if zone not in best:
                raise PlanningError(
                    "unknown_name",
                    f"{text!r} refers to the object in the {zone} zone, but the image shows none there; "
                    "name the object instead",
                )
        return {zone: obj for zone, (_, obj) in best.items()}

    def _positions(self, presence: torch.Tensor) -> dict[str, str]:
        """Object -> the zone the presence head finds it most likely in (for swaps and "next to")."""
        zones = list(self.vocab.zones)
        return {obj: zones[int(presence[:, o].argmax())] for o, obj in enumerate(self.vocab.objects)}

    def plan(
        self, instruction: str, top_down_image: Any, scene: Scene, context: PlanContext | None = None
    ) -> Plan:
        """See :meth:`galley_core.language.planning.Planner.plan`; the image is required.

        With ``context``, the plan covers what remains of the context's first plan (or, without
        one, of the network's plan for the instruction) from the context's state; it is empty when
        the goal holds already.
        """
        if context is None:
            return self.plan_batch([instruction], [top_down_image], scene)[0]
        text = check_instruction(instruction, scene)
        goal = context.plan or self.plan_batch([text], [top_down_image], scene)[0].steps
        try:
            steps = remaining_plan(goal, context, scene)
        except ValueError as err:
            raise PlanningError("out_of_scope", f"{text!r}: {err}") from None
        return Plan(text, steps, self.name, 1, "")

    def plan_batch(self, instructions: Sequence[str], images: Sequence[Any], scene: Scene) -> list[Plan]:
        """Plans for several (instruction, image) pairs at once (faster for evaluation).

        Raises:
            PlanningError: for the first instruction that is empty or names something the scene lacks,
                or a missing image.
        """
        texts = [check_instruction(t, scene) for t in instructions]
        if any(image is None for image in images):
            raise PlanningError(
                "no_image",
                "galley's planner needs the top-down image (it shows where the objects are): wait for "
                "/camera/top_down/image_raw, or give galley plan --seed N or --image PNG",
            )
        allowed = self._allowed(scene)
        c = self.net.config
        inputs = [image_inputs(scene, np.asarray(image, dtype=np.uint8)[..., :3], c) for image in images]
        glimpses, view = to_tensors(np.stack([g for g, _ in inputs]), np.stack([v for _, v in inputs]))
        with torch.no_grad():
            seen = self.net.presence(self.net.zone_tokens(glimpses))
        where = [self._resolve(t, scene, s) for t, s in zip(texts, seen, strict=True)]
        at = [self._positions(s) for s in seen]
        readings = [canonical(t, scene, w, a) for t, w, a in zip(texts, where, at, strict=True)]
        # Swaps and "next to": the relocations are read from the words and where the presence head
        # sees each object; the steps are the oracle's for them (chains of three relocations too,
        # which the network, trained on at most two, cannot write).
        related = [
            related_relocations(canonical_tokens(t, scene, w), scene, a)
            for t, w, a in zip(texts, where, at, strict=True)
        ]
        ids = [self.vocab.encode(t, c.max_words) or [1] for t in readings]
        words = torch.zeros(len(ids), max(len(i) for i in ids), dtype=torch.long)
        for row, seq in enumerate(ids):
            words[row, : len(seq)] = torch.tensor(seq)
        with torch.no_grad():
            memory, pad, _ = self.net.encode(words, glimpses, view)
            decoded = greedy_decode(self.net, memory, pad, allowed)
        plans = [
            Plan(text, _trim([self.vocab.steps[i] for i in plan], reading, scene), self.name, 1, "")
            if not pairs
            else Plan(text, tuple(format_step(s) for s in gold_plan(pairs, a)), self.name, 1, "")
            for text, reading, plan, pairs, a in zip(texts, readings, decoded, related, at, strict=True)
        ]
        for plan in plans:
            _refuse_if_idle(plan)
        return plans
