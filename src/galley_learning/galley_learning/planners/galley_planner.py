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
import itertools
import json
import re
from collections.abc import Callable, Sequence
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
    V3_WEIGHTS,
    PlannerNet,
    Vocabulary,
    greedy_decode,
    image_inputs,
    load_model,
    to_tensors,
)
from galley_learning.planners.galley_slots import (
    FORMAT,
    SLOTS,
    NameSlots,
    SlotPlannerNet,
    SlotVocabulary,
    load_slot_model,
)
from galley_learning.planners.grounding import presence_scores

__all__ = ["GROUNDINGS", "GalleyPlanner"]

#: Where v3 reads each object's zone from: ``scene`` matches the scene file's description of every
#: object against the image (:mod:`.grounding`), the network's presence score breaking the ties
#: the image leaves; ``learned``: the network's presence score alone.
GROUNDINGS = ("scene", "learned")
#: Weight of the network's presence logits beside the description match's log-likelihoods.
LEARNED_WEIGHT = 0.25


Model = tuple[PlannerNet | SlotPlannerNet, Vocabulary | SlotVocabulary, dict[str, Any]]


def _load(path: Path) -> Model:
    """v3 weights (:func:`load_slot_model`) or v2 (:func:`load_model`), as their JSON says."""
    try:
        meta = json.loads(path.with_suffix(".json").read_text())
    except (OSError, ValueError):
        return load_model(path)  # missing or unreadable: load_model's error names the fix
    if meta.get("format") == FORMAT:
        return load_slot_model(path)
    if "format" in meta:
        raise ValueError(
            f"{path}: galley planner weights of format {meta['format']!r}, which this galley cannot read; "
            "use the shipped weights or retrain with: galley train-planner"
        )
    return load_model(path)


def _shared_model(path: str | Path) -> Model:
    """The weights at ``path``, loaded once per process and file version: planners only run them.

    An evaluation builds a task planner node per episode; loading the weights each time cost
    more than some episodes' control loops.
    """
    p = Path(path)
    try:
        files = (p, p.with_suffix(".json"))
        key = tuple((str(f.resolve()), f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    except OSError:
        return _load(p)  # missing: load_model's error names the fix
    return _cached_model(key, p)


@functools.lru_cache(maxsize=4)
def _cached_model(key: tuple[Any, ...], path: Path) -> Model:
    return _load(path)


def _trim(steps: Sequence[str], reading: str, scene: Scene) -> tuple[str, ...]:
    """``steps`` without relocations that nobody asked for.

    The network sometimes adds a relocation of an object that the instruction never names, or
    carries a named object a second time. The plan's relocations (object, where it was picked,
    where it was placed) are kept for named objects, first time only, and the plan is rebuilt
    from them as the oracle drives (:func:`galley_core.tasks.suite.gold_plan`). A plan with no
    named object is kept as it is (the reading missed a name).
    """
    named = {o for o in scene.object_names if re.search(rf"\b{re.escape(o)}\b", reading)}
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

    v3 weights (``V3_WEIGHTS``) read the scene's names as an input (:mod:`.galley_slots`) and plan
    in any kitchen of at most 8 objects and 8 zones; v2 weights plan only in the scene they were
    trained on, the shipped kitchen, where they are the more accurate of the two.

    Args:
        weights: the ``.pt`` file (its ``.json`` beside it), pinned; None: the shipped weights, chosen
            per scene: v2 in the scene v2 was trained on, v3 everywhere else.
        constrained: mask steps the scene does not allow (the default); False lets every step of the
            model's vocabulary through (for the Table II ablation).
        grounding: with v3 weights, where each object's zone is read from (:data:`GROUNDINGS`);
            v2 weights always use their presence head (its objects are the shipped kitchen's).

    Raises:
        ValueError: an unknown ``grounding``.
    """

    name = "galley"
    accepts_image = True

    def __init__(
        self, *, weights: str | Path | None = None, constrained: bool = True, grounding: str = "scene"
    ) -> None:
        if grounding not in GROUNDINGS:
            raise ValueError(f"grounding = {grounding!r}: use one of {', '.join(GROUNDINGS)}")
        self.grounding = grounding
        torch.set_num_threads(max(1, min(4, torch.get_num_threads())))
        self.net, self.vocab, self.training = _shared_model(weights or DEFAULT_WEIGHTS)
        self.constrained = constrained
        self._shipped = weights is None

    def _weights_for(self, scene: Scene) -> None:
        """With the shipped weights: v2 in the scene it was trained on, v3 (names as input) elsewhere."""
        if not self._shipped:
            return
        v2 = _shared_model(DEFAULT_WEIGHTS)
        vocab = v2[1]
        assert isinstance(vocab, Vocabulary)
        fits = list(vocab.zones) == scene.zone_names and list(vocab.objects) == scene.object_names
        self.net, self.vocab, self.training = v2 if fits else _shared_model(V3_WEIGHTS)

    def _allowed(self, scene: Scene, slots: NameSlots | None = None) -> torch.Tensor:
        if slots is not None:  # v3: the steps over the slots that hold the scene's names
            valid = set(valid_steps(scene))
            steps = [slots.from_slots(s) for s in self.vocab.steps]
            return torch.tensor(
                [s == END or (bool(s) and (not self.constrained or s in valid)) for s in steps]
            )
        vocab = self.vocab
        assert isinstance(vocab, Vocabulary)
        if list(vocab.zones) != scene.zone_names or list(vocab.objects) != scene.object_names:
            raise PlanningError(
                "model",
                f"these galley planner weights (v2) were trained on scene {vocab.scene!r} (zones "
                f"{', '.join(vocab.zones)}; objects {', '.join(vocab.objects)}); scene "
                f"{scene.name!r} differs: use the v3 weights (weights/galley_planner_v3.pt), which read "
                "the scene's names, "
                f"or retrain with galley train-planner --scene {scene.name}",
            )
        allowed = torch.ones(len(vocab.steps), dtype=torch.bool)
        if self.constrained:
            valid = set(valid_steps(scene))
            allowed = torch.tensor([s in valid or s == END for s in vocab.steps])
        return allowed

    @staticmethod
    def _resolve(text: str, scene: Scene, presence: torch.Tensor) -> dict[str, str]:
        """Zone -> the object the image shows in it, for the zones that ``text`` refers to by location.

        ``presence`` (zones, objects) in scene order; objects lie where :func:`assign` puts them.
        A zone referred to that holds none is refused.
        """
        referred = [zone for _, _, zone in location_references(read(text, scene).tokens, scene)]
        if not referred:
            return {}
        where = {zone: obj for obj, zone in assign(scene, presence).items()}
        for zone in referred:
            if zone not in where:
                raise PlanningError(
                    "unknown_name",
                    f"{text!r} refers to the object in the {zone} zone, but the image shows none there; "
                    "name the object instead",
                )
        return where

    @staticmethod
    def _positions(scene: Scene, presence: torch.Tensor) -> dict[str, str]:
        """Object -> the zone it lies in (:func:`assign`)."""
        return assign(scene, presence)

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

    def _slots(self, scene: Scene) -> NameSlots | None:
        """The scene's names in slots (v3 weights), or None (v2)."""
        if not isinstance(self.net, SlotPlannerNet):
            return None
        try:
            return NameSlots.of(scene)
        except ValueError as err:
            raise PlanningError("model", str(err)) from None

    def _decode(
        self, scene: Scene, images: Sequence[Any], readings: Callable[[torch.Tensor], list[str]]
    ) -> list[list[str]]:
        """Steps for each image, the text read once the presence scores (B, zones, objects) are known."""
        self._weights_for(scene)
        c = self.net.config
        slots = self._slots(scene)
        allowed = self._allowed(scene, slots)
        arrays = [np.asarray(image, dtype=np.uint8)[..., :3] for image in images]
        inputs = [image_inputs(scene, image, c) for image in arrays]
        glimpses, view = to_tensors(np.stack([g for g, _ in inputs]), np.stack([v for _, v in inputs]))
        if slots is None:
            net = self.net
            assert isinstance(net, PlannerNet) and isinstance(self.vocab, Vocabulary)
            with torch.no_grad():
                seen = net.presence(net.zone_tokens(glimpses))
            ids = [self.vocab.encode(t, c.max_words) or [1] for t in readings(seen)]
            with torch.no_grad():
                memory, pad, _ = net.encode(_padded(ids), glimpses, view)
        else:
            net, b, z = self.net, len(images), len(scene.zones)
            assert isinstance(self.vocab, SlotVocabulary)
            padded = torch.zeros(b, SLOTS, *glimpses.shape[2:])
            padded[:, :z] = glimpses
            zone_mask = torch.zeros(b, SLOTS, dtype=torch.bool)
            zone_mask[:, :z] = True
            features, _ = slots.features(scene)
            objects = torch.from_numpy(features)[None].expand(b, -1, -1)
            with torch.no_grad():
                looked, view_tokens = net.see(padded, view, zone_mask)
                seen = net.presence(looked, objects, zone_mask)[:, :z, : len(scene.objects)]
            if self.grounding == "scene":
                described = np.stack([presence_scores(scene, image) for image in arrays])
                seen = torch.from_numpy(described).float() + LEARNED_WEIGHT * seen
            # Each object is grounded where the joint assignment puts it (one object per zone).
            place = torch.zeros(b, SLOTS, SLOTS)
            for row, scores in enumerate(seen):
                for o, zone in enumerate(assign(scene, scores).values()):
                    place[row, o, scene.zone_names.index(zone)] = 1.0
            vocab = self.vocab
            ids = [vocab.encode(slots.tokens(t), c.max_words) or [1] for t in readings(seen)]
            with torch.no_grad():
                memory, pad, _ = net.encode(_padded(ids), looked, view_tokens, objects, zone_mask, place)
        decoded = greedy_decode(self.net, memory, pad, allowed)  # type: ignore[arg-type]
        steps = [[self.vocab.steps[i] for i in plan] for plan in decoded]
        return steps if slots is None else [[slots.from_slots(s) for s in plan] for plan in steps]

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
        read_as: dict[str, Any] = {}

        def readings(seen: torch.Tensor) -> list[str]:
            where = [self._resolve(t, scene, s) for t, s in zip(texts, seen, strict=True)]
            at = [self._positions(scene, s) for s in seen]
            # Swaps and "next to": the relocations are read from the words and where the presence
            # scores see each object; the steps are the oracle's for them (chains of three
            # relocations too, which the network, trained on at most two, cannot write).
            read_as["related"] = [
                related_relocations(canonical_tokens(t, scene, w), scene, a)
                for t, w, a in zip(texts, where, at, strict=True)
            ]
            read_as["at"] = at
            read_as["text"] = [canonical(t, scene, w, a) for t, w, a in zip(texts, where, at, strict=True)]
            return read_as["text"]

        decoded = self._decode(scene, images, readings)
        plans = [
            Plan(text, _trim(plan, reading, scene), self.name, 1, "")
            if not pairs
            else Plan(text, tuple(format_step(s) for s in gold_plan(pairs, a)), self.name, 1, "")
            for text, reading, plan, pairs, a in zip(
                texts, read_as["text"], decoded, read_as["related"], read_as["at"], strict=True
            )
        ]
        for plan in plans:
            _refuse_if_idle(plan)
        return plans


def _padded(ids: Sequence[Sequence[int]]) -> torch.Tensor:
    """(B, W) word ids, 0-padded."""
    words = torch.zeros(len(ids), max(len(i) for i in ids), dtype=torch.long)
    for row, seq in enumerate(ids):
        words[row, : len(seq)] = torch.tensor(seq)
    return words


def assign(scene: Scene, presence: torch.Tensor) -> dict[str, str]:
    """Object -> zone: the assignment of the scene's objects to distinct zones with the highest total score.

    An episode starts every object in a zone of its own (there are never more objects than zones),
    so the objects are placed jointly: where two objects look alike, the one that fits a zone
    better takes it. ``presence`` (zones, objects) logits in scene order. At most 8 x 8: every
    assignment is scored (40,320 at most).
    """
    scores = presence.numpy()
    zones, objects = scores.shape
    if objects > zones:  # cannot happen in an episode; fall back to each object's best zone
        return {o: scene.zone_names[int(scores[:, i].argmax())] for i, o in enumerate(scene.object_names)}
    options = np.array(list(itertools.permutations(range(zones), objects)), dtype=np.int64)
    best = options[int(np.argmax(scores[options, np.arange(objects)].sum(axis=1)))]
    return {o: scene.zone_names[int(best[i])] for i, o in enumerate(scene.object_names)}
