"""A second phrase grammar: the held-out ``phrasing`` split and the ``out_of_scope`` set.

The instruction suite (:mod:`galley_core.tasks.suite`) asks for rearrangements in 58 fixed
wordings; a person does not. This module words the same five kinds of request (``one``: an
object to a zone; ``two``: two objects to two zones; ``same``: two objects to one zone;
``replace``: two objects swap zones; ``to_object``: an object to where another one is) the ways
people actually type them, from a grammar written independently of the suite's templates, so
that a planner trained on the suite (or on anything derived from its templates) meets wordings
no training data touches. Each instruction is labelled with one phrasing kind:

* ``compound``: several clauses joined by many connectors and punctuation ("and", "then",
  "after that", ";", ",", "also", "as well as", "plus", "followed by", new lines, bullets,
  numbered lists), including one relocation told as two actions ("grab the fork, then drop it
  on the red spot");
* ``word_order``: the target first ("to the green zone, take the bowl"), left dislocation,
  the object as subject ("the cup should end up in the red zone");
* ``terse``: telegraphic commands ("bowl -> green", "bowl green zone", "fork: red area");
* ``synonyms``: other verbs (relocate, shift, haul, ...) and other words for a zone (area,
  spot, region, place, ...);
* ``polite``: politeness and filler ("hey robot, um, could you please ...");
* ``typo``: one edited character (insertion, deletion, substitution or transposition) in one or
  two words, never turning a word into another name of the scene or a word of the grammar;
* ``location``: objects named by where they are ("the thing in the red zone"), only where the
  episode makes the reference unique and no earlier part of the request moves something there;
* ``mixed``: several of the above at once.

Gold plans come from :func:`galley_core.tasks.suite.gold_plan` and the episode's start zones, so
they are exactly what the suite's plans would be for the same request. Episodes are drawn from
seeds at :data:`~galley_core.language.phrase_grammar.EPISODE_SEED_BASE` and above, disjoint from the
suite's (below 1,000,000) and from galley's training episodes (from 10,000,000). An instruction
that the suite's own template matcher (:func:`~galley_core.tasks.suite.plan_for_instruction`)
recognises is dropped, so no instruction of the split is worded as a suite template.

The ``out_of_scope`` set holds instructions that the scene cannot ground, by kind: unknown actions,
questions, negations (nothing to do), absent objects, absent zones, nonsense and chit-chat; their
plan is empty: the right answer is a refusal.

Everything is deterministic given the seed. :func:`generate_phrasing_suite` returns suite entries
(the suite's schema: ``template`` is ``phrasing/<kind>/<relocation kind>`` or
``out_of_scope/<kind>``); ``galley suite --phrasing`` writes them to
``config/suites/<scene>_phrasing_v1.yaml``.

The grammar's kinds and vocabulary are in :mod:`galley_core.language.phrase_grammar`, the wording of a
request in :mod:`galley_core.language.wording`, typos in :mod:`galley_core.language.typos`, and the
out-of-scope set in :mod:`galley_core.language.out_of_scope`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from galley_core.episode import Episode, sample_episode
from galley_core.language.out_of_scope import generate_out_of_scope
from galley_core.language.phrase_grammar import (
    EPISODE_SEED_BASE,
    LOCATION_REFS,
    PHRASING_KINDS,
    PLAIN_VERBS,
    RELOCATION_KINDS,
    SYNONYM_VERBS,
    SYNONYM_ZONE_WORDS,
)
from galley_core.language.typos import add_typos
from galley_core.language.wording import (
    Request,
    Style,
    Wording,
    compound,
    draw_request,
    finish,
    polite,
    terse,
    word_order,
)
from galley_core.scene import Scene
from galley_core.tasks.grammar import InvalidPlanError, format_step
from galley_core.tasks.suite import SuiteEntry, gold_plan, plan_for_instruction

__all__ = [
    "Phrased",
    "generate_phrasing_suite",
    "generate_phrasings",
    "location_references",
    "phrasing_kind",
]


@dataclass(frozen=True)
class Phrased:
    """One in-scope instruction: the suite entry, and what made it (for tests and reports).

    Attributes:
        clean: the instruction before typos were added (equal to the entry's without typos).
        request: the relocations it asks for.
        location_zones: zones whose object the instruction names by location.
    """

    entry: SuiteEntry
    kind: str
    relocation: str
    clean: str
    request: Request
    location_zones: tuple[str, ...]


def _style(kind: str, rng: random.Random) -> Style:
    plain = Style(PLAIN_VERBS, ("zone",), location=False)
    if kind == "synonyms":
        return Style(SYNONYM_VERBS, SYNONYM_ZONE_WORDS, location=False)
    if kind == "location":
        return Style(PLAIN_VERBS, ("zone", "zone", "area", "spot"), location=True)
    if kind == "mixed":
        verbs = dict(SYNONYM_VERBS) | (PLAIN_VERBS if rng.random() < 0.5 else {})
        return Style(verbs, ("zone", *SYNONYM_ZONE_WORDS), location=rng.random() < 0.5)
    return plain


def _word(kind: str, request: Request, scene: Scene, rng: random.Random) -> tuple[str, str, tuple[str, ...]]:
    """(instruction, instruction before typos, zones referenced by location) for ``request``."""
    wording = Wording(request, _style(kind, rng), rng)
    if kind == "compound":
        text = compound(wording)
    elif kind == "word_order":
        text = word_order(wording)
    elif kind == "terse":
        text = terse(wording)
    elif kind == "polite":
        text = polite(wording)
    elif kind == "mixed":
        text = rng.choice((polite, compound, word_order))(wording)
    else:
        text = wording.clause()
    text = text if kind == "terse" else finish(text, rng)
    clean = text
    if kind == "typo" or (kind == "mixed" and rng.random() < 0.5):
        text = add_typos(text, scene, rng, 1 if rng.random() < 0.6 else 2)
    return text, clean, tuple(sorted(location_references(clean, scene)))


def location_references(text: str, scene: Scene) -> set[str]:
    """The zones whose object ``text`` names by location (by one of the grammar's reference forms)."""
    lowered = text.lower()
    found = set()
    for zone in scene.zone_names:
        for ref in LOCATION_REFS:
            for w in ("zone", *SYNONYM_ZONE_WORDS):
                if ref.format(c=zone, w=w) in lowered:
                    found.add(zone)
    return found


def _suite_wording(text: str, scene: Scene, episode: Episode) -> bool:
    """Whether the suite's own template matcher recognises ``text`` (then it is not held out)."""
    try:
        plan_for_instruction(text, scene, episode)
    except InvalidPlanError:
        return False
    return True


def generate_phrasings(
    scene: Scene,
    *,
    per_cell: int = 8,
    seed: int = 0,
    episode_sampler: Callable[[Scene, int], Episode] = sample_episode,
) -> list[Phrased]:
    """The in-scope instructions: ``per_cell`` for each phrasing kind and relocation kind, distinct.

    Raises:
        RuntimeError: a cell cannot be filled (a scene with too few objects or zones).
    """
    rng = random.Random(seed)
    out: list[Phrased] = []
    seen: set[str] = set()
    for kind in PHRASING_KINDS:
        for relocation in RELOCATION_KINDS:
            made, attempts = 0, 0
            while made < per_cell:
                attempts += 1
                if attempts > 200 * per_cell:
                    raise RuntimeError(
                        f"phrasing {kind}/{relocation}: could not word {per_cell} instructions"
                    )
                episode_seed = EPISODE_SEED_BASE + rng.randrange(1_000_000)
                episode = episode_sampler(scene, episode_seed)
                request = draw_request(relocation, episode, rng)
                if request is None:
                    continue
                text, clean, zones = _word(kind, request, scene, rng)
                if text.lower() in seen or (kind == "location" and not zones):
                    continue
                if _suite_wording(clean, scene, episode) or _suite_wording(text, scene, episode):
                    continue
                plan = gold_plan(request.relocations(), request.start)
                seen.add(text.lower())
                entry = SuiteEntry(
                    id=f"{kind}-{relocation}-{made:02d}",
                    template=f"phrasing/{kind}/{relocation}",
                    split="phrasing",
                    instruction=text,
                    seed=episode_seed,
                    plan=tuple(format_step(s) for s in plan),
                )
                out.append(Phrased(entry, kind, relocation, clean, request, zones))
                made += 1
    return out


def generate_phrasing_suite(
    scene: Scene, *, per_cell: int = 8, per_kind: int = 12, seed: int = 0
) -> list[SuiteEntry]:
    """The ``phrasing`` split followed by the ``out_of_scope`` set, as suite entries."""
    entries = [p.entry for p in generate_phrasings(scene, per_cell=per_cell, seed=seed)]
    return entries + generate_out_of_scope(scene, per_kind=per_kind, seed=seed + 1)


def phrasing_kind(entry: SuiteEntry) -> str:
    """The phrasing kind (``phrasing`` split) or out-of-scope kind of an entry; its split otherwise."""
    parts = entry.template.split("/")
    return parts[1] if len(parts) > 1 and parts[0] in ("phrasing", "out_of_scope") else entry.split
