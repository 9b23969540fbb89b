"""Everyday requests to a kitchen robot: a dev set written apart from galley's training grammar.

galley's paraphrase grammar (``galley_learning.planners.phrasing``) is what the planner trains on,
and its held-out pool shares its author's habits. This generator was written separately, from how
people ask a household robot for something: indirect requests phrased as questions ("could you
put the bowl in the green area?", "would you mind moving ..."), hedges ("maybe", "if you can",
"when you get a chance", "no rush, but ..."), needs and wishes ("I need the cup over in the red
zone"), afterthoughts ("move the bowl. oh and the cup to red too"), the place said first, and a
zone named by "one" once a zone word was said ("take the fork from the blue zone and leave it at
the yellow one"). It is dev data only: nothing trains on it.

:func:`everyday_set` draws one request per episode seed, with its style (what makes it everyday)
and kind of relocation; :data:`EVERYDAY_OUT_OF_SCOPE` are everyday requests galley must refuse.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from galley_core.episode import sample_episode
from galley_core.scene import Scene
from galley_core.tasks.grammar import format_step
from galley_core.tasks.suite import SuiteEntry, gold_plan

STYLES = ("ask", "hedge", "need", "place_first", "afterthought", "from_to", "chatty", "terse", "word_order",
          "synonym", "polite", "rare_words")  # fmt: skip
KINDS = ("one", "two", "same", "replace", "to_object")

_VERBS = (("put", "putting"), ("move", "moving"), ("take", "taking"), ("bring", "bringing"),
          ("stick", "sticking"), ("pop", "popping"), ("carry", "carrying"), ("set", "setting"))  # fmt: skip
_ASK = ("could you {v} {X}?", "can you {v} {X} please?", "would you mind {ving} {X}?",
        "could you please {v} {X}", "do you think you could {v} {X}?", "any chance you could {v} {X}?",
        "would you {v} {X} for me?", "can you {v} {X}", "could you maybe {v} {X}?",
        "is there any way you could {v} {X}?", "mind {ving} {X}?", "will you {v} {X}, please?")  # fmt: skip
_HEDGE = ("maybe {v} {X}", "{v} {X} if you can", "{v} {X} when you get a chance",
          "no rush, but {v} {X}", "don't forget to {v} {X}", "if it's not too much trouble, {v} {X}",
          "{v} {X}, if that's ok", "whenever you can, {v} {X}", "i think you should {v} {X}",
          "perhaps you could {v} {X}", "try to {v} {X}", "{v} {X} if possible")  # fmt: skip
_NEED = ("i need {O} in {Z}", "i'd like {O} in {Z}", "i want {O} moved to {Z}", "{O} needs to go to {Z}",
         "i need {O} over in {Z}", "{O} should be in {Z}", "let's get {O} to {Z}", "we need {O} in {Z}",
         "i'd like {O} put in {Z}", "{O} has to go to {Z}", "can i have {O} in {Z}?",
         "i want {O} over in {Z}")  # fmt: skip
_PLACE_FIRST = ("over to {Z} with {O}", "to {Z}, {v} {O}", "in {Z}, {v} {O} please", "{Z}: {O}",
                "onto {Z} with {O}", "into {Z}, {O} please")  # fmt: skip
_CHATTY = ("hey, {v} {X}", "ok so {v} {X}", "alright, {v} {X} thanks", "hi! {v} {X} please",
           "right, {v} {X}", "so, could you {v} {X}", "um, {v} {X}", "{v} {X}, thanks a lot")  # fmt: skip
_THEN = ("{A}. oh and {B} too", "{A}, and while you're at it {B}", "{A}. after that, {B}",
         "{A}; {B} as well", "first {A}, then {B}", "{A}, and then {B}", "{A} and also {B}",
         "{A}. then {B}", "{A}, after which {B}", "{A}. once that's done, {B}")  # fmt: skip
_SWAP = ("could you swap {O} and {O2}?", "{O} and {O2} should switch places", "swap {O} with {O2} please",
         "can you switch {O} and {O2} around?", "i'd like {O} and {O2} swapped",
         "would you mind swapping {O} and {O2}?", "maybe swap {O} and {O2}")  # fmt: skip
_NEAR = ("{v} {O} next to {O2} please", "could you {v} {O} beside {O2}?", "{O} should be next to {O2}",
         "i'd like {O} next to {O2}", "can you {v} {O} by {O2}?", "{v} {O} over by {O2} if you can",
         "{v} {O} in the same zone as {O2}")  # fmt: skip
_SAME = ("could you {v} {O} and {O2} in {Z}?", "{O} and {O2} both go to {Z}", "{v} {O} to {Z}, {O2} too",
         "i need {O} and {O2} in {Z}", "{v} {O} and {O2} over to {Z} please",
         "would you mind {ving} {O} and {O2} to {Z}?", "{v} {O} to {Z}. oh, and {O2} as well")  # fmt: skip
_FROM = ("take {O} from {S} and leave it at {Z1}", "grab {O} off {S} and {v} it on {Z}",
         "{O} out of {S}, into {Z} please", "could you {v} {O} from {S} to {Z}?",
         "{v} {O} from {S} over to {Z}", "can you take {O} out of {S} and put it in {Z}?")  # fmt: skip
_ZONE_WORDS = ("zone", "zone", "area", "area", "spot", "section")
_TERSE = ("{o} to {z}", "{o} -> {z}", "{o} into {z} pls", "{o} => {z}", "{o}: {z}", "{o} over to {z}",
          "move {o} {z}", "{o} in {z} plz", "{o} to {z}!", "{o} → {z}", "{o} → {z} thx", "{o} -- {z}",
          "{o} = {z}", "{z} <- {o}", "{o}, {z}")  # fmt: skip
_WORD_ORDER = ("the {o}, to {Z}", "to {Z} with the {o}", "{Z} is where the {o} should go",
               "{Z}, the {o} please", "the {o} - {Z}", "into {Z} goes the {o}",
               "it's the {o} that needs to go to {Z}", "the {o}? {Z} please", "over in {Z} i want the {o}",
               "what i need is the {o} in {Z}", "the {o} i want in {Z}", "in {Z} the {o}, please",
               "{Z} for the {o}", "the {o} goes in {Z}")  # fmt: skip
_SYNONYM_VERBS = ("relocate", "shift", "transfer", "drop", "shove", "haul", "slide", "bring over",
                  "carry over", "get", "move over", "transport", "lug", "toss")  # fmt: skip
_SYNONYM_ZONES = ("section", "corner", "square", "part", "side", "patch", "bit", "region", "space",
                  "location", "pad", "tile", "end", "mat", "area")  # fmt: skip
#: Everyday words a small lexicon may lack: verbs, nouns for a zone, adjectives for an object.
_RARE_VERBS = ("stow", "plunk", "bung", "scoot", "tuck", "whisk", "plop", "cart", "stash", "ferry")
_RARE_ZONE_NOUNS = ("bit", "tile", "box", "end", "bay", "strip", "quadrant", "zone")
_RARE_ADJECTIVES = ("porcelain", "stainless", "chipped", "trusty", "usual", "favourite", "little")
_POLITE = ("i'd be grateful if you could {v} {X}", "would you be able to {v} {X}?",
           "are you able to {v} {X}?", "could you possibly {v} {X}?", "would it be possible to {v} {X}?",
           "sorry to bother you, but could you {v} {X}?", "excuse me, could you {v} {X}",
           "i'd love it if you could {v} {X}", "could i get you to {v} {X}?", "{v} {X}, if you would",
           "please and thank you: {v} {X}", "i'd really appreciate it if you'd {v} {X}",
           "do me a favour and {v} {X}", "please {v} {X}, thank you so much")  # fmt: skip
_CONNECTORS = (" and ", ", then ", "; ", " plus ", " as well as ", ", along with ", ", followed by ",
               " & ", " + ", ". after that ", " and afterwards ", ". next, ", ", and also ", " - then ",
               " and next ", ". also ", "\n")  # fmt: skip


def _zone(colour: str, rng: random.Random) -> str:
    return rng.choice((f"the {colour} {rng.choice(_ZONE_WORDS)}", f"the {colour} {rng.choice(_ZONE_WORDS)}",
                       colour))  # fmt: skip


def _one_request(style: str, rng: random.Random, o: str, z: str, source: str) -> str:
    v, ving = rng.choice(_VERBS)
    zone = _zone(z, rng)
    x = f"the {o} {rng.choice(('to', 'to', 'into', 'over to', 'in'))} {zone}"
    if style == "ask":
        return rng.choice(_ASK).format(v=v, ving=ving, X=x)
    if style == "hedge":
        return rng.choice(_HEDGE).format(v=v, X=x)
    if style == "need":
        return rng.choice(_NEED).format(O=f"the {o}", Z=zone)
    if style == "place_first":
        return rng.choice(_PLACE_FIRST).format(v=v, O=f"the {o}", Z=zone)
    if style == "terse":
        return rng.choice(_TERSE).format(o=rng.choice((o, o, f"the {o}")), z=rng.choice((z, zone)))
    if style == "word_order":
        return rng.choice(_WORD_ORDER).format(o=o, Z=zone)
    if style == "synonym":
        verb = rng.choice(_SYNONYM_VERBS)
        to = rng.choice(("to", "into", "onto", "over to", "in"))
        return f"{verb} the {o} {to} the {z} {rng.choice(_SYNONYM_ZONES)}"
    if style == "rare_words":
        verb, adjective = rng.choice(_RARE_VERBS), rng.choice(_RARE_ADJECTIVES)
        place = f"the {z} {rng.choice(_RARE_ZONE_NOUNS)}"
        return rng.choice((f"{verb} the {adjective} {o} in {place}", f"{verb} the {o} over to {place}",
                           f"could you {verb} the {adjective} {o} onto {place}?",
                           f"{place}, {verb} the {o} there"))  # fmt: skip
    if style == "polite":
        return rng.choice(_POLITE).format(v=v, X=x)
    if style == "from_to":
        word = rng.choice(_ZONE_WORDS)
        return rng.choice(_FROM).format(
            v=v, O=f"the {o}", S=f"the {source} {word}", Z=zone, Z1=f"the {z} one"
        )
    return rng.choice(_CHATTY).format(v=v, X=x)


def misspell(text: str, rng: random.Random, *, all_edits: bool = False) -> str:
    """One word of five letters or more misspelt: two neighbouring letters swapped.

    With ``all_edits``, one letter dropped, doubled or swapped with its neighbour, at random.
    """
    words = text.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if not long:
        return text
    i = rng.choice(long)
    w = words[i]
    j = rng.randrange(1, len(w) - 1)
    swapped = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    words[i] = rng.choice((w[:j] + w[j + 1 :], w[:j] + w[j] + w[j:], swapped)) if all_edits else swapped
    return " ".join(words)


def everyday_request(
    start: dict[str, str], zones: Sequence[str], rng: random.Random, style: str, kind: str
) -> tuple[str, list[tuple[str, str]]]:
    """A request in ``style`` of ``kind`` for the objects starting in ``start``: (text, relocations)."""
    o, o2 = rng.sample(sorted(start), 2)
    z = rng.choice([x for x in zones if x != start[o] and (kind != "same" or x != start[o2])])
    z2 = rng.choice([x for x in zones if x not in (start[o2], z)])
    v, ving = rng.choice(_VERBS)
    if kind == "one":
        return _one_request(style, rng, o, z, start[o]), [(o, z)]
    if kind == "two":
        first = _one_request(style, rng, o, z, start[o]).rstrip("?")
        if style in ("terse", "word_order", "synonym"):
            second = _one_request(style, rng, o2, z2, start[o2]).rstrip("?")
            return first + rng.choice(_CONNECTORS) + second, [(o, z), (o2, z2)]
        second = rng.choice((f"the {o2} to {_zone(z2, rng)}", f"{v} the {o2} to {_zone(z2, rng)}"))
        return rng.choice(_THEN).format(A=first, B=second), [(o, z), (o2, z2)]
    if kind == "same":
        text = rng.choice(_SAME).format(v=v, ving=ving, O=f"the {o}", O2=f"the {o2}", Z=_zone(z, rng))
        return text, [(o, z), (o2, z)]
    if kind == "replace":
        text = rng.choice(_SWAP).format(O=f"the {o}", O2=f"the {o2}")
        return text, [(o, start[o2]), (o2, start[o])]
    text = rng.choice(_NEAR).format(v=v, O=f"the {o}", O2=f"the {o2}")
    return text, [(o, start[o2])]


def everyday_set(scene: Scene, seeds: Sequence[int], *, seed: int, typos: float = 0.1) -> list[SuiteEntry]:
    """One everyday request per episode seed; the entry's template is ``style/kind``.

    Styles and kinds take turns, so each appears evenly; ``typos`` of the requests have two
    neighbouring letters of one word swapped.
    """
    return dev_entries(
        scene,
        seeds,
        seed=seed,
        prefix="everyday",
        styles=STYLES,
        kinds=KINDS,
        request=everyday_request,
        typos=typos,
    )


#: ``request(start zones, zone names, rng, style, kind)`` -> (text, relocations).
Request = Callable[
    [dict[str, str], Sequence[str], random.Random, str, str], tuple[str, list[tuple[str, str]]]
]


def dev_entries(
    scene: Scene,
    seeds: Sequence[int],
    *,
    seed: int,
    prefix: str,
    styles: Sequence[str],
    kinds: Sequence[str],
    request: Request,
    typos: float | None = None,
) -> list[SuiteEntry]:
    """One ``request`` per episode seed, styles and kinds taking turns; gold plans from the start zones.

    ``typos``: the share misspelt (:func:`misspell`), None for no draw at all; half the requests
    start with a capital. The entries' template is ``style/kind``, their split ``everyday``.
    """
    rng = random.Random(seed)
    entries = []
    for n, episode_seed in enumerate(seeds):
        start = {p.name: p.zone for p in sample_episode(scene, episode_seed).objects}
        style, kind = styles[n % len(styles)], kinds[(n // len(styles)) % len(kinds)]
        text, relocations = request(start, scene.zone_names, rng, style, kind)
        if typos is not None and rng.random() < typos:
            text = misspell(text, rng)
        if rng.random() < 0.5:
            text = text[0].upper() + text[1:]
        plan = tuple(format_step(s) for s in gold_plan(relocations, start))
        entries.append(
            SuiteEntry(f"{prefix}-{n:03d}", f"{style}/{kind}", "everyday", text, episode_seed, plan)
        )
    return entries


#: Everyday requests galley cannot do or that ask for nothing, by kind (written for this dev set,
#: apart from the refusal rules' own examples).
EVERYDAY_OUT_OF_SCOPE: dict[str, tuple[str, ...]] = {
    "question": (
        "could you tell me where the bowl is?", "is the cup in the red zone?", "what's in the green area?",
        "where did you put the fork?", "do you know where the apple is?", "how many things are on the table?",
        "can you see the plate?", "which area is the cup in?", "is there anything in the blue zone?",
        "have you moved the bowl yet?",
    ),
    "negation": (
        "don't move anything", "please don't touch the plate", "leave the bowl alone",
        "no, stop", "actually, don't move the cup", "never mind the fork",
        "don't put the apple in the red zone", "leave it all where it is please",
    ),
    "unknown_action": (
        "can you make me a sandwich?", "wash the cup please", "could you do the dishes?",
        "bring me a glass of water", "would you mind cleaning the red area?", "please cut the apple",
        "could you warm up the plate?", "empty the bowl when you get a chance",
    ),
    "unknown_name": (
        "could you move the spoon to the red zone?", "put the mug in the green area please",
        "i need the knife over in the blue zone", "would you mind moving the bowl to the orange area?",
        "take the glass from the yellow zone and leave it at the red one", "put the cup in the white spot",
    ),
}  # fmt: skip
