"""The ``out_of_scope`` set: instructions the scene cannot ground, whose right answer is a refusal.

By kind (:data:`~galley_core.language.phrase_grammar.OUT_OF_SCOPE_KINDS`): unknown actions,
questions, negations (nothing to do), absent objects, absent zones, nonsense and chit-chat; their
plan is empty.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from galley_core.episode import Episode, sample_episode
from galley_core.language.phrase_grammar import (
    EPISODE_SEED_BASE,
    OUT_OF_SCOPE_KINDS,
    PLAIN_VERBS,
    POLITE_OPENERS,
)
from galley_core.language.wording import capitalise
from galley_core.scene import Scene
from galley_core.tasks.suite import SuiteEntry

__all__ = ["generate_out_of_scope"]

_UNKNOWN_ACTIONS = (
    "wash {o}", "rinse {o}", "dry {o}", "polish {o}", "eat {o}", "peel {o}", "slice {o}", "cut {o} in half",
    "break {o}", "throw away {o}", "fill {o} with water", "heat up {o}", "hand me {o}", "smell {o}",
    "open the fridge", "turn on the kettle", "bring me a coffee", "make me a sandwich", "wipe the table",
    "sweep the floor", "dance for me", "sing a song", "charge your battery", "order a pizza",
    "close the fridge door", "water the plants", "do the dishes", "cook dinner", "pour me some tea",
)  # fmt: skip
_QUESTIONS = (
    "how are you?", "where is {o}?", "which zone is {o} in?", "is {o} in the {c} zone?",
    "what is on the {c} spot?", "how many things are on the table?", "can you see {o}?",
    "what can you do?", "what time is it?", "could you tell me where {o} is?", "why is {o} there?",
    "what colour is {o}?", "are you busy?", "what's in the {c} zone?", "did you move {o}?",
)  # fmt: skip
_NEGATIONS = (
    "leave everything as it is", "don't touch {o}", "do not move {o} to the {c} zone",
    "keep {o} where it is", "never mind", "please don't move anything", "{o} is fine where it is",
    "leave {o} alone", "no need to move {o}", "nothing to do right now, thanks", "stay put",
    "cancel that", "forget it, don't do anything", "don't put {o} in the {c} zone",
    "it's all fine, leave it",
)  # fmt: skip
_NEGATION_OPENERS = ("hey robot,", "actually,", "robot,", "hmm,", "no wait,", "on second thought,")
_ABSENT_OBJECTS = ("knife", "spoon", "mug", "banana", "glass", "pan", "bottle", "teapot", "sponge", "orange")
_ABSENT_ZONES = (
    "the orange zone", "the pink area", "the black zone", "the white spot", "the brown zone", "the grey area",
    "the cyan zone", "the fridge", "the sink", "the top shelf", "the dishwasher", "the oven", "the bin",
)  # fmt: skip
_NONSENSE = (
    "asdf qwer", "green green green", "{n} {n} {n}", "the the the", "zxcvbnm", "lorem ipsum dolor sit amet",
    "?!?", "...", "123 456", "qwertyuiop", "blorp the snazzle", "{c} {c}", "hjkl hjkl", "zone zone",
    "fjdksla", "mmmmmm", "{n}? {n}!", "{c} {n} {c} {n} {c}",
)  # fmt: skip
_CHIT_CHAT = (
    "hello", "thanks!", "good morning, robot", "you're doing great", "tell me a joke", "I'm hungry",
    "nice weather today", "what's your name?", "ok", "bye!", "I had a long day", "haha",
    "this kitchen looks nice", "good job earlier", "see you tomorrow",
)  # fmt: skip


def _absent(things: tuple[str, ...], scene: Scene) -> tuple[str, ...]:
    """``things`` without those that name one of the scene's objects or zones.

    A generated kitchen may have a mug or a brown zone; the shipped kitchen has none of them, so its
    set (and the draws from it) is unchanged.
    """
    names = set(scene.object_names) | set(scene.zone_names)
    kept = tuple(t for t in things if not set(_words(t)) & names and t.removeprefix("the ") not in names)
    return kept or things


def _words(text: str) -> list[str]:
    words = text.removeprefix("the ").split()
    return [" ".join(words[:-1])] if words[-1] in ("zone", "area", "spot") else [" ".join(words)]


def _out_of_scope_text(kind: str, scene: Scene, rng: random.Random) -> str:
    objects, zones = sorted(scene.object_names), sorted(scene.zone_names)
    n, c = rng.choice(objects), rng.choice(zones)
    o = f"the {n}"
    if kind == "absent_object":
        verb = rng.choice(sorted(PLAIN_VERBS))
        thing = rng.choice(_absent(_ABSENT_OBJECTS, scene))
        word = rng.choice(("zone", "area", "spot"))
        text = f"{verb} the {thing} {rng.choice(PLAIN_VERBS[verb])} the {c} {word}"
        if rng.random() < 0.3:
            text = f"{verb} the {thing} and {o} {rng.choice(PLAIN_VERBS[verb])} the {c} zone"
    elif kind == "absent_zone":
        verb = rng.choice(sorted(PLAIN_VERBS))
        text = f"{verb} {o} {rng.choice(PLAIN_VERBS[verb])} {rng.choice(_absent(_ABSENT_ZONES, scene))}"
    else:
        pool = {
            "unknown_action": _UNKNOWN_ACTIONS,
            "question": _QUESTIONS,
            "negation": _NEGATIONS,
            "nonsense": _NONSENSE,
            "chit_chat": _CHIT_CHAT,
        }[kind]
        text = rng.choice(pool).format(o=o, c=c, n=n)
    if kind in ("unknown_action", "absent_object", "absent_zone") and rng.random() < 0.35:
        text = f"{rng.choice(POLITE_OPENERS)} {text}"
    elif kind == "negation" and rng.random() < 0.35:
        text = f"{rng.choice(_NEGATION_OPENERS)} {text}"
    return capitalise(text) if rng.random() < 0.7 else text


def generate_out_of_scope(
    scene: Scene,
    *,
    per_kind: int = 12,
    seed: int = 1,
    episode_sampler: Callable[[Scene, int], Episode] = sample_episode,
) -> list[SuiteEntry]:
    """``per_kind`` distinct instructions the scene cannot ground, of each of :data:`OUT_OF_SCOPE_KINDS`.

    Each comes with an episode (the planner sees its top-down image); the plan is empty.
    """
    rng = random.Random(seed)
    out: list[SuiteEntry] = []
    seen: set[str] = set()
    for kind in OUT_OF_SCOPE_KINDS:
        made, attempts = 0, 0
        while made < per_kind:
            attempts += 1
            if attempts > 500 * per_kind:
                raise RuntimeError(f"out of scope {kind}: could not make {per_kind} distinct instructions")
            text = _out_of_scope_text(kind, scene, rng)
            episode_seed = EPISODE_SEED_BASE + rng.randrange(1_000_000)
            if text.lower() in seen:
                continue
            episode_sampler(scene, episode_seed)  # the episode must exist in this scene
            seen.add(text.lower())
            out.append(
                SuiteEntry(
                    f"{kind}-{made:02d}", f"out_of_scope/{kind}", "out_of_scope", text, episode_seed, ()
                )
            )
            made += 1
    return out
