"""galley's own paraphrase grammar: everyday wordings of rearrangements, for training and for a dev set.

The suite's 58 templates are one register of English. People also write terse commands ("bowl ->
green"), put the target first ("to the green zone, take the bowl"), chain requests with any
connector or punctuation, say "area" or "spot" for "zone", add politeness, make typos, and name an
object by where it lies ("the thing in the red zone"). :func:`phrase` draws one such request for an
episode: the text and its relocations, whose gold plan is :func:`galley_core.tasks.suite.gold_plan`'s.

Two disjoint pools of wordings (:data:`TRAINING`, :data:`HELD_OUT`): the planner is trained on the
first only, and :func:`dev_set` draws from either with its own seed, so "held-out wordings" measures
generalisation to verbs, connectors, sentence forms and fillers the model never saw. Neither pool
was written from any evaluation split.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from galley_core.episode import sample_episode
from galley_core.scene import Scene
from galley_core.tasks.grammar import format_step
from galley_core.tasks.suite import SuiteEntry, gold_plan

__all__ = ["HELD_OUT", "KINDS", "TRAINING", "Wordings", "dev_set", "phrase"]

#: What a request asks for (as :mod:`galley_core.tasks.suite`'s template kinds).
KINDS = ("one", "from", "two", "same", "replace", "to_object")


@dataclass(frozen=True)
class Wordings:
    """A pool of wordings. Forms use {V} verb, {O}/{O2} object mentions, {Z}/{Z2} target zones, {S} source."""

    verbs: tuple[str, ...]
    zone_words: tuple[str, ...]
    connectors: tuple[str, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    references: tuple[str, ...]
    one: tuple[str, ...]
    source: tuple[str, ...]
    same: tuple[str, ...]
    swap: tuple[str, ...]
    near: tuple[str, ...]


TRAINING = Wordings(
    verbs=("move", "put", "take", "bring", "carry", "place", "set", "shift", "transfer", "relocate",
           "deliver", "drop", "get", "grab", "fetch"),
    zone_words=("zone", "zone", "zone", "area", "spot", "region", "place", "section"),
    connectors=(" and ", ", then ", "; ", ". Then ", " and then ", ", and after that ", ". ", " then ",
                ", afterwards ", " plus ", ", next ", " & ", ", also ", " as well as ", ", ", " and also ",
                "; then ", " and afterwards ", "; after that, ", ". Next, ", ", and then "),
    before=("please ", "could you ", "can you ", "would you ", "hey robot, ", "kindly ", "ok, ", "now ",
            "i'd like you to ", "please could you ", "robot, ", "just ", "first, "),
    after=(" please", ", thanks", " thank you", " now", ", please", "!", " asap"),
    references=("the thing in {S}", "the object on {S}", "whatever is in {S}", "the item from {S}",
                "what's on {S}", "the {s} zone's item", "the thing sitting in {S}", "the one in {S}"),
    one=("{V} {O} to {Z}", "{V} {O} into {Z}", "{V} {O} onto {Z}", "{V} {O} over to {Z}", "to {Z}, {V} {O}",
         "{O} to {Z}", "{O} -> {Z}", "{O}: {Z}", "{O} goes to {Z}", "{O} in {Z}", "{V} {O} in {Z}",
         "pick up {O} and {V} it in {Z}", "i want {O} in {Z}", "{O} should be in {Z}", "{Z}: {O}",
         "{V} to {Z} {O}", "{V} {O} and put it on {Z}", "into {Z} {V} {O}", "{O} into {Z}",
         "i need {O} in {Z}", "{V} {O} {Z}", "in {Z}, {V} {O}", "onto {Z}, {V} {O}", "{O} {Z}",
         "{V} {O} over into {Z}"),
    source=("{V} {O} from {S} to {Z}", "from {S}, {V} {O} to {Z}", "{O} from {S} to {Z}",
            "{V} {O} off {S} and onto {Z}", "{O} is in {S}; {V} it to {Z}", "{O}: {S} -> {Z}"),
    same=("{V} {O} and {O2} to {Z}", "{O} and {O2} to {Z}", "{V} both {O} and {O2} into {Z}",
          "{V} {O} to {Z}, and {O2} too", "{V} {O} and then {O2} to {Z}", "{O}, {O2} -> {Z}",
          "{V} {O} to {Z} and {O2} there as well"),
    swap=("swap {O} and {O2}", "switch {O} with {O2}", "exchange {O} and {O2}", "{O} and {O2} trade places",
          "swap the places of {O} and {O2}", "swap {O} with {O2}"),
    near=("{V} {O} next to {O2}", "{V} {O} where {O2} is", "{O} beside {O2}", "{V} {O} to the zone of {O2}",
          "{O} next to {O2}", "{V} {O} to the same zone as {O2}"),
)  # fmt: skip

HELD_OUT = Wordings(
    verbs=("haul", "transport", "send", "position", "stick", "pop", "lug", "ferry", "shove", "tote"),
    zone_words=("zone", "corner", "patch", "square", "bay", "location"),
    connectors=(" after which ", ", followed by ", " + ", " - ", ", and subsequently ", " / ", "; next, ",
                ", and finally ", ". After that, ", ", later "),
    before=("would you be so kind as to ", "if possible, ", "when you get a chance, ", "um, ",
            "i'd appreciate it if you would ", "hi there, ", "go ahead and ", "be a dear and "),
    after=(" thank you!", ", cheers", " if you can", ", if possible", " when you can"),
    references=("the stuff lying on {S}", "the {s} zone object", "whatever's sitting on {S}",
                "the object that is in {S}", "the item currently at {S}"),
    one=("{O} => {Z}", "{Z} gets {O}", "{O} needs to go to {Z}", "over to {Z} with {O}",
         "make sure {O} ends up in {Z}", "{O}, {Z}", "{O} belongs in {Z}", "into {Z} with {O}",
         "{V} {O} and leave it in {Z}", "{O} towards {Z}", "{V} {O} toward {Z}"),
    source=("{V} {O} out of {S} and into {Z}", "{O} from {S} over to {Z}", "take {O} away from {S} to {Z}"),
    same=("{O} plus {O2} -> {Z}", "{V} {O} together with {O2} to {Z}", "both {O} and {O2} into {Z}"),
    swap=("switch places between {O} and {O2}", "trade {O} and {O2}", "let {O} and {O2} swap zones"),
    near=("{V} {O} near {O2}", "{O} alongside {O2}", "{V} {O} over by {O2}"),
)  # fmt: skip


def _zone(colour: str, words: Wordings, rng: random.Random, terse: bool) -> str:
    if terse:
        return rng.choice((colour, colour, f"{colour} {rng.choice(words.zone_words)}"))
    return f"the {colour} {rng.choice(words.zone_words)}"


def _typo(word: str, rng: random.Random) -> str:
    """``word`` with one character inserted, deleted, replaced or swapped with its neighbour."""
    i = rng.randrange(1, len(word))  # keep the first letter, as most typos do
    letters = "abcdefghijklmnopqrstuvwxyz"
    edit = rng.choice(("insert", "delete", "replace", "swap"))
    if edit == "insert":
        return word[:i] + rng.choice(letters) + word[i:]
    if edit == "delete":
        return word[:i] + word[i + 1 :]
    if edit == "replace":
        return word[:i] + rng.choice(letters.replace(word[i], "")) + word[i + 1 :]
    j = min(i, len(word) - 2)
    return word[:j] + word[j + 1] + word[j] + word[j + 2 :]


def phrase(  # noqa: PLR0917 -- one draw, every knob explicit
    start: dict[str, str],
    zones: Sequence[str],
    rng: random.Random,
    words: Wordings = TRAINING,
    kind: str = "",
    typos: float = 0.15,
    references: float = 0.12,
) -> tuple[str, list[tuple[str, str]], str]:
    """A request for the objects starting in ``start`` (object -> zone): (text, relocations, kind).

    Args:
        kind: one of :data:`KINDS` (default: drawn).
        typos: probability that one or two words of the text carry a one-character typo.
        references: probability that an object is named by the zone it lies in.
    """
    kind = kind or rng.choice(KINDS)
    objects = sorted(start)
    o, o2 = rng.sample(objects, 2)
    z = rng.choice([x for x in zones if x != start[o] and (kind != "same" or x != start[o2])])
    z2 = rng.choice([x for x in zones if x not in (start[o2], z)])
    terse = rng.random() < 0.35

    def mention(name: str) -> str:
        if rng.random() < references:
            return rng.choice(words.references).format(S=f"the {start[name]} zone", s=start[name])
        return name if terse and rng.random() < 0.7 else f"the {name}"

    def one(obj: str, zone: str, form: str) -> str:
        return form.format(
            V=rng.choice(words.verbs), O=mention(obj), Z=_zone(zone, words, rng, terse),
            S=_zone(start[obj], words, rng, terse),
        )  # fmt: skip

    relocations: list[tuple[str, str]]
    if kind in ("one", "from"):
        text, relocations = one(o, z, rng.choice(words.one if kind == "one" else words.source)), [(o, z)]
    elif kind == "two":
        second = one(o2, z2, rng.choice(words.one))
        if rng.random() < 0.3:
            second = f"{mention(o2)} to {_zone(z2, words, rng, terse)}"
        text = one(o, z, rng.choice(words.one)) + rng.choice(words.connectors) + second
        relocations = [(o, z), (o2, z2)]
    elif kind == "same":
        text = rng.choice(words.same).format(
            V=rng.choice(words.verbs), O=mention(o), O2=mention(o2), Z=_zone(z, words, rng, terse)
        )
        relocations = [(o, z), (o2, z)]
    elif kind == "replace":
        text = rng.choice(words.swap).format(O=mention(o), O2=mention(o2))
        relocations = [(o, start[o2]), (o2, start[o])]
    else:
        text = rng.choice(words.near).format(V=rng.choice(words.verbs), O=mention(o), O2=mention(o2))
        relocations = [(o, start[o2])]
    if rng.random() < 0.35:
        text = rng.choice(words.before) + text
    if rng.random() < 0.2:
        text += rng.choice(words.after)
    if rng.random() < typos:
        tokens = text.split(" ")
        long = [i for i, t in enumerate(tokens) if len(t) >= 4 and t.isalpha()]
        for i in rng.sample(long, min(len(long), rng.choice((1, 1, 2)))):
            tokens[i] = _typo(tokens[i], rng)
        text = " ".join(tokens)
    if rng.random() < 0.5:
        text = text[0].upper() + text[1:]
    if rng.random() < 0.4 and text[-1].isalpha():
        text += rng.choice((".", "!", "."))
    return text, relocations, kind


def dev_set(
    scene: Scene, seeds: Sequence[int], words: Wordings, *, seed: int, label: str
) -> list[SuiteEntry]:
    """One request per episode seed, drawn from ``words`` with ``seed``, as suite entries (split ``label``).

    Every kind appears evenly; typos and location references as often as in training.
    """
    rng = random.Random(seed)
    entries = []
    for n, episode_seed in enumerate(seeds):
        start = {p.name: p.zone for p in sample_episode(scene, episode_seed).objects}
        kind = KINDS[n % len(KINDS)]
        text, relocations, kind = phrase(start, scene.zone_names, rng, words, kind, typos=0.3, references=0.2)
        plan = tuple(format_step(s) for s in gold_plan(relocations, start))
        entries.append(SuiteEntry(f"{label}-{n:03d}", kind, label, text, episode_seed, plan))
    return entries


#: Requests galley must refuse, by kind: written to check :func:`galley_core.language.refusal.refusal`
#: (with the rules in view, so they measure coverage, not generalisation).
OUT_OF_SCOPE: dict[str, tuple[str, ...]] = {
    "unknown action": (
        "Wash the bowl.", "Could you cook the apple in the red zone?", "Open the fridge, please.",
        "Slice the apple on the blue zone", "pour water into the cup", "Please wipe the plate clean.",
        "heat the cup in the microwave", "Throw the fork in the bin.", "Bring me a coffee.",
        "turn on the lights", "peel the apple", "fill the cup with water",
    ),
    "question": (
        "How are you?", "Where is the bowl?", "Is the cup in the green zone?", "What's on the red zone?",
        "Which zone holds the plate?", "Are there any forks?", "Did you move the apple?",
        "Why is the bowl in the blue zone?", "what colour is the plate?", "Can you see the fork?",
    ),
    "negation": (
        "Leave everything as it is.", "Don't move the bowl.", "Do not touch the cup.", "Nothing to do today.",
        "never mind", "Stop!", "Keep everything where it is.", "no need to move the apple",
        "Leave the plate where it is.", "cancel that",
    ),
    "unknown name": (
        "Move the spoon to the red zone.", "Put the cup in the orange zone.",
        "Take the mug to the blue area.", "Bring the knife over to the green spot",
        "Carry the kettle to the yellow zone.", "place the banana on the purple zone",
        "move the bowl to the pink area", "Put the teapot in the red zone",
        "Shift the vase to the blue zone.", "move the plate to the black region",
    ),
    "nonsense": (
        "asdf qwerty", "Colorless green ideas sleep furiously.", "the the the", "banana phone",
        "Purple monkey dishwasher.", "lorem ipsum dolor sit amet", "42", "blue", "hmm", "zone zone zone",
    ),
}  # fmt: skip
