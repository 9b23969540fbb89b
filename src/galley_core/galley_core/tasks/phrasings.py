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
seeds at :data:`EPISODE_SEED_BASE` and above, disjoint from the suite's (below 1,000,000) and from
galley's training episodes (from 10,000,000). An instruction that the suite's own template
matcher (:func:`~galley_core.tasks.suite.plan_for_instruction`) recognises is dropped, so no
instruction of the split is worded as a suite template.

The ``out_of_scope`` set holds instructions that the scene cannot ground, by kind: unknown actions,
questions, negations (nothing to do), absent objects, absent zones, nonsense and chit-chat; their
plan is empty: the right answer is a refusal.

Everything is deterministic given the seed. :func:`generate_phrasing_suite` returns suite entries
(the suite's schema: ``template`` is ``phrasing/<kind>/<relocation kind>`` or
``out_of_scope/<kind>``); ``galley suite --phrasing`` writes them to
``config/suites/<scene>_phrasing_v1.yaml``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from galley_core.episode import Episode, sample_episode
from galley_core.scene import Scene
from galley_core.tasks.grammar import InvalidPlanError, format_step
from galley_core.tasks.suite import SuiteEntry, gold_plan, plan_for_instruction

__all__ = [
    "EPISODE_SEED_BASE",
    "OUT_OF_SCOPE_KINDS",
    "PHRASING_KINDS",
    "RELOCATION_KINDS",
    "Phrased",
    "edit_distance",
    "generate_out_of_scope",
    "generate_phrasing_suite",
    "generate_phrasings",
    "location_references",
    "phrasing_kind",
    "typo",
]

#: Episode seeds of this split start here (the suite's are below 1,000,000, training's from 10,000,000).
EPISODE_SEED_BASE = 50_000_000
PHRASING_KINDS = ("compound", "word_order", "terse", "synonyms", "polite", "typo", "location", "mixed")
RELOCATION_KINDS = ("one", "two", "same", "replace", "to_object")
OUT_OF_SCOPE_KINDS = (
    "unknown_action",
    "question",
    "negation",
    "absent_object",
    "absent_zone",
    "nonsense",
    "chit_chat",
)

# -- vocabulary --------------------------------------------------------------------------------

#: Plain verbs with the prepositions that go with them before a zone.
_PLAIN_VERBS: dict[str, tuple[str, ...]] = {
    "move": ("to", "over to", "into"),
    "put": ("in", "on", "into", "onto"),
    "take": ("to", "over to"),
    "bring": ("to", "over to"),
    "place": ("in", "on"),
    "set": ("on", "down in", "down on"),
    "carry": ("to", "over to"),
}
#: Less usual verbs for the same thing.
_SYNONYM_VERBS: dict[str, tuple[str, ...]] = {
    "relocate": ("to",),
    "shift": ("to", "over to"),
    "transfer": ("to", "into"),
    "haul": ("to", "over to"),
    "drop": ("in", "on", "into"),
    "stick": ("in", "on"),
    "pop": ("in", "onto"),
    "park": ("in", "on"),
    "shove": ("over to", "into"),
    "slide": ("over to", "onto"),
    "lug": ("to", "over to"),
    "get": ("to", "over to", "into"),
    "deliver": ("to",),
    "stash": ("in",),
    "plonk": ("on", "in"),
    "transport": ("to",),
    "reposition": ("to", "onto"),
    "send": ("to", "over to"),
    "leave": ("in", "on"),
}
_GERUNDS = {
    "move": "moving", "put": "putting", "take": "taking", "bring": "bringing", "place": "placing",
    "set": "setting", "carry": "carrying", "relocate": "relocating", "shift": "shifting",
    "transfer": "transferring", "haul": "hauling", "drop": "dropping", "stick": "sticking",
    "pop": "popping", "park": "parking", "shove": "shoving", "slide": "sliding", "lug": "lugging",
    "get": "getting", "deliver": "delivering", "stash": "stashing", "plonk": "plonking",
    "transport": "transporting", "reposition": "repositioning", "send": "sending", "leave": "leaving",
    "swap": "swapping", "switch": "switching", "exchange": "exchanging", "trade": "trading",
    "have": "having", "interchange": "interchanging", "let": "letting", "flip": "flipping",
}  # fmt: skip
_SYNONYM_ZONE_WORDS = ("area", "spot", "region", "place", "section", "square", "patch", "space", "part")
#: Picking up, then putting down "it": one relocation told as two actions.
_PICK_VERBS = ("pick up", "grab", "take", "lift", "fetch", "collect", "go get", "get hold of")
_DROP_PHRASES: dict[str, tuple[str, ...]] = {
    "put it": ("in", "on", "into", "onto"),
    "drop it": ("in", "on", "into"),
    "set it down": ("in", "on"),
    "place it": ("in", "on"),
    "leave it": ("in", "on"),
    "put it down": ("in", "on"),
    "stick it": ("in", "on"),
    "take it": ("to", "over to"),
    "bring it": ("to", "over to"),
}
#: Swapping two objects: (verb phrase with {a} and {b}); {a} moves first.
_SWAPS = (
    "swap {a} and {b}",
    "switch {a} with {b}",
    "exchange {a} and {b}",
    "trade the places of {a} and {b}",
    "switch around {a} and {b}",
    "have {a} and {b} change places",
    "interchange {a} and {b}",
    "let {a} and {b} trade spots",
    "flip the positions of {a} and {b}",
)
#: Near another object: how "to where the cup is" is said.
_NEAR = ("next to {b}", "beside {b}", "where {b} is", "over by {b}", "alongside {b}", "near {b}")
#: References by location; {c} is the zone's colour, {w} a word for zone.
_LOCATION_REFS = (
    "the thing in the {c} {w}",
    "whatever is on the {c} {w}",
    "the object sitting in the {c} {w}",
    "the item on the {c} {w}",
    "whatever's lying in the {c} {w}",
    "the one in the {c} {w}",
    "what's in the {c} {w}",
    "the stuff on the {c} {w}",
)

_CLAUSE_CONNECTORS = (
    " and ",
    ", then ",
    " and then ",
    ". After that, ",
    "; ",
    ", also ",
    ". Also, ",
    ", plus ",
    ", followed by ",
    "\n",
    ". Next, ",
    ", and afterwards ",
    ". Once that's done, ",
    " & ",
    ", and finally ",
    " - then ",
    " as well as ",
    ", after which ",
    " then ",
    ". Then ",
)
#: Connectors after which the second clause may drop its verb ("..., then the cup to the red zone").
_ELIDING = frozenset(
    {" and ", ", then ", " and then ", ", plus ", ", followed by ", " as well as ", " then "}
)

_POLITE_OPENERS = (
    "hey robot, um, could you please",
    "hi! would you",
    "robot, if you don't mind, please",
    "um, okay, so could you maybe",
    "excuse me, can you",
    "when you have a moment, please",
    "I'd love it if you could",
    "sorry to bother you, but could you",
    "could you do me a favour and",
    "hmm, let's see... please",
    "hello there, can you please",
    "uh, robot? please",
    "so, like, could you",
    "if it's not too much trouble, could you",
    "good morning! please",
    "right, er, would you kindly",
)
_POLITE_MIND = ("would you mind", "hey, would you mind", "um, do you mind", "robot, would you mind")
_POLITE_CLOSERS = (
    "",
    ", please",
    ", thank you!",
    " - thanks a lot",
    ". Cheers!",
    ", if you can",
    " when you get a chance",
    ", that would be great",
    ", thanks",
    " for me",
    ", you're a star",
)

_TERSE_ARROWS = (" -> ", " → ", " => ", " >> ", " --> ", " to ", " into ")
_TERSE_ZONE_WORDS = ("", "", " zone", " area", " spot")


# -- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What an instruction asks for, before it is worded.

    Attributes:
        kind: one of :data:`RELOCATION_KINDS`.
        o, o2: the objects (``o2`` empty for ``one``).
        z, z2: the target zones (``same``: both go to ``z``; ``replace`` and ``to_object``: unused).
        start: the zone each object starts in.
    """

    kind: str
    o: str
    o2: str
    z: str
    z2: str
    start: dict[str, str]

    def relocations(self) -> list[tuple[str, str]]:
        """(object, zone) pairs in the order they are asked for."""
        if self.kind == "one":
            return [(self.o, self.z)]
        if self.kind == "two":
            return [(self.o, self.z), (self.o2, self.z2)]
        if self.kind == "same":
            return [(self.o, self.z), (self.o2, self.z)]
        if self.kind == "replace":
            return [(self.o, self.start[self.o2]), (self.o2, self.start[self.o])]
        if self.kind == "to_object":
            return [(self.o, self.start[self.o2])]
        raise ValueError(f"unknown relocation kind {self.kind!r}; kinds: {', '.join(RELOCATION_KINDS)}")


def _draw_request(kind: str, episode: Episode, rng: random.Random) -> Request | None:
    """A request of ``kind`` that makes sense in ``episode`` (every relocation moves something)."""
    start = {p.name: p.zone for p in episode.objects}
    objects = sorted(start)
    zones = sorted(set(start.values()) | {p.goal_zone for p in episode.objects})
    if len(objects) < 2 or len(zones) < 3:
        return None
    o, o2 = rng.sample(objects, 2)
    if start[o] == start[o2]:
        return None  # replace and to_object would ask for nothing
    z = rng.choice([x for x in zones if x != start[o]])
    z2 = ""
    if kind == "same" and z == start[o2]:
        return None
    if kind == "two":
        z2 = rng.choice([x for x in zones if x not in (start[o2], z)])
    if kind == "one":
        o2 = ""
    return Request(kind, o, o2 if kind != "one" else "", z, z2, start)


# -- wording -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Style:
    """The word choices one instruction is made with."""

    verbs: dict[str, tuple[str, ...]]
    zone_words: tuple[str, ...]
    location: bool  # name objects by their zone where that is unique


class _Wording:
    """Words one request; keeps track of which zones have received an object so far."""

    def __init__(self, request: Request, style: _Style, rng: random.Random) -> None:
        self.r = request
        self.style = style
        self.rng = rng
        self.targeted: set[str] = set()
        self.referenced = False

    def pick(self, options: Sequence[str]) -> str:
        return options[self.rng.randrange(len(options))]

    def zone(self, colour: str) -> str:
        return f"the {colour} {self.pick(self.style.zone_words)}"

    def obj(self, name: str, force_location: bool = False) -> str:
        """``the <name>``, or a reference by location where the style wants one and it is unique."""
        zone = self.r.start[name]
        unique = [o for o, z in self.r.start.items() if z == zone] == [name] and zone not in self.targeted
        if unique and self.style.location and (force_location or self.rng.random() < 0.6):
            self.referenced = True
            return self.pick(_LOCATION_REFS).format(c=zone, w=self.pick(self.style.zone_words))
        return f"the {name}"

    def verb(self) -> tuple[str, str]:
        verb = self.pick(sorted(self.style.verbs))
        return verb, self.pick(self.style.verbs[verb])

    def to_zone(self, name: str, colour: str, *, gerund: bool = False) -> str:
        """``<verb> <object> <prep> <zone>``; the object is worded before the zone is marked as targeted."""
        chosen, prep = self.verb()
        thing = self.obj(name, force_location=not self.referenced)
        self.targeted.add(colour)
        return f"{_GERUNDS[chosen] if gerund else chosen} {thing} {prep} {self.zone(colour)}"

    def bare_to_zone(self, name: str, colour: str) -> str:
        """``<object> to <zone>``, the verb elided."""
        thing = self.obj(name)
        self.targeted.add(colour)
        return f"{thing} {self.pick(('to', 'into', 'over to', 'onto'))} {self.zone(colour)}"

    def swap(self) -> str:
        a = self.obj(self.r.o, force_location=True)
        b = self.obj(self.r.o2)
        return self.pick(_SWAPS).format(a=a, b=b)

    def near(self, *, gerund: bool = False) -> str:
        verb, _ = self.verb()
        a = self.obj(self.r.o, force_location=True)
        b = self.obj(self.r.o2)
        return f"{_GERUNDS[verb] if gerund else verb} {a} {self.pick(_NEAR).format(b=b)}"

    def clause(self, *, gerund: bool = False) -> str:
        """The whole request as one clause (two relocations joined by "and" where there are two)."""
        r = self.r
        if r.kind == "one":
            return self.to_zone(r.o, r.z, gerund=gerund)
        if r.kind == "replace":
            text = self.swap()
            if gerund:
                verb, rest = text.split(" ", 1)
                text = f"{_GERUNDS[verb]} {rest}"
            return text
        if r.kind == "to_object":
            return self.near(gerund=gerund)
        first = self.to_zone(r.o, r.z, gerund=gerund)
        if r.kind == "same":
            tail = self.pick((" too", " as well", "", " also"))
            return (
                f"{first} and {self.obj(r.o2)}{tail}"
                if tail
                else f"{first} and {self.bare_to_zone(r.o2, r.z)}"
            )
        return f"{first} and {self.bare_to_zone(r.o2, r.z2)}"


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _finish(text: str, rng: random.Random) -> str:
    """Sentence case and a closing mark, sometimes none (people often leave it off)."""
    text = _capitalise(text)
    if text[-1:] in ".!?":
        return text
    return text + rng.choice((".", ".", "", "!"))


def _join(first: str, second: str, connector: str) -> str:
    if connector.rstrip(" ").endswith(".") or connector.endswith("\n"):
        second = _capitalise(second)
    return first + connector + second


def _compound(w: _Wording) -> str:
    r, rng = w.r, w.rng
    if r.kind in ("one", "to_object"):
        pick = f"{w.pick(_PICK_VERBS)} {w.obj(r.o)}"
        if r.kind == "one":
            w.targeted.add(r.z)
            phrase = w.pick(sorted(_DROP_PHRASES))
            drop = f"{phrase} {w.pick(_DROP_PHRASES[phrase])} {w.zone(r.z)}"
        else:
            drop = f"{w.pick(sorted(_DROP_PHRASES))} {w.pick(_NEAR).format(b=w.obj(r.o2))}"
        joins = (" and ", ", then ", " and then ", ". After that, ", "; ", ", ", "\n", " & then ", ", and ")
        return _join(pick, drop, w.pick(joins))
    connector = w.pick(_CLAUSE_CONNECTORS)
    form = rng.randrange(3)
    if r.kind == "replace":
        first = f"{w.verb()[0]} {w.obj(r.o)} {w.pick(_NEAR).format(b=w.obj(r.o2))}"
        w.targeted.add(r.start[r.o2])  # the first object is there now: no reference by that zone after
        was = w.pick(("where {a} was", "where {a} used to be", "to {a}'s old spot", "into the gap {a} left"))
        second = f"{w.verb()[0]} {w.obj(r.o2)} {was.format(a=f'the {r.o}')}"
        if connector in _ELIDING:
            second = f"{w.obj(r.o2)} {was.format(a=f'the {r.o}')}"
    else:
        z2 = r.z if r.kind == "same" else r.z2
        first = w.to_zone(r.o, r.z)
        if connector in _ELIDING and form:
            second = w.bare_to_zone(r.o2, z2)
        elif r.kind == "same" and form == 2:
            second = w.pick(
                ("do the same with {b}", "the same for {b}", "{b} goes there too", "{b} there too")
            )
            second = second.format(b=w.obj(r.o2))
        else:
            second = w.to_zone(r.o2, z2)
    if form == 0 and connector not in _ELIDING:
        bullet = w.pick(("- ", "* ", "• ", "1) ", "1. "))
        numbered = bullet[0].isdigit()
        lead = w.pick(("", "Please do this:\n", "Two things:\n", "To do:\n"))
        marks = (bullet, bullet.replace("1", "2")) if numbered else (bullet, bullet)
        return f"{lead}{marks[0]}{_capitalise(first)}\n{marks[1]}{_capitalise(second)}"
    return _join(first, second, connector)


def _word_order(w: _Wording) -> str:
    r = w.r
    if r.kind == "one":
        pattern = w.pick(
            (
                "to {Z}, {v} {O}",
                "into {Z} {v} {O}",
                "{Z}: that's where {O} should go",
                "{Z} is where I want {O}",
                "{O}, {v} it to {Z}",
                "{O} should end up in {Z}",
                "over to {Z} with {O}",
                "in {Z}, {v} {O}",
                "{O} needs to go to {Z}",
                "{Z} - {O} goes there",
            )
        )
        thing = w.obj(r.o)
        w.targeted.add(r.z)
        return pattern.format(Z=w.zone(r.z), O=thing, v=w.verb()[0])
    if r.kind in ("two", "same"):
        z2 = r.z if r.kind == "same" else r.z2
        a = w.obj(r.o)
        w.targeted.add(r.z)
        b = w.obj(r.o2)
        za, zb = w.zone(r.z), w.zone(z2)
        if r.kind == "same" and w.rng.random() < 0.5:
            pattern = w.pick(
                ("into {Za}, {v} {a} and {b}", "{Za} should get both {a} and {b}", "to {Za}: {a}, then {b}")
            )
        else:
            pattern = w.pick(
                (
                    "to {Za} {a}, and to {Zb} {b}",
                    "in {Za}, {v} {a}; in {Zb}, {v} {b}",
                    "{Za} gets {a} and {Zb} gets {b}",
                    "{a} goes to {Za}, {b} to {Zb}",
                    "over to {Za} with {a}, then over to {Zb} with {b}",
                )
            )
        return pattern.format(Za=za, Zb=zb, a=a, b=b, v=w.verb()[0])
    a, b = w.obj(r.o), w.obj(r.o2)
    if r.kind == "replace":
        pattern = w.pick(
            (
                "where {b} is, {v} {a}; then {v2} {bn} where {an} was",
                "first, to {b}'s spot with {a}, then {bn} goes where {an} was",
                "{a} should go where {b} is, and {bn} where {an} was",
                "into the spot of {b}, {v} {a}, and {bn} into the old spot of {an}",
            )
        )
        names = {"an": f"the {r.o}", "bn": f"the {r.o2}"}
        return pattern.format(a=a, b=b, v=w.verb()[0], v2=w.verb()[0], **names)
    pattern = w.pick(
        (
            "next to {b}, {v} {a}",
            "where {b} is, that's where {a} goes",
            "beside {b} - {v} {a} there",
            "{a} should be next to {b}",
            "by {b}, {v} {a}",
        )
    )
    return pattern.format(a=a, b=b, v=w.verb()[0])


def _terse(w: _Wording) -> str:
    r = w.r

    def arrow(name: str, colour: str) -> str:
        form = w.rng.randrange(4)
        zone = colour + w.pick(_TERSE_ZONE_WORDS)
        if form == 0:
            return f"{name}{w.pick(_TERSE_ARROWS)}{zone}"
        if form == 1:
            return f"{name} {colour} {w.pick(('zone', 'area', 'spot'))}"
        if form == 2:
            return f"{name}: {zone}"
        return f"{w.pick(('mv', 'move', 'put', 'take'))} {name} {w.pick(('', 'to ', '-> '))}{zone}"

    if r.kind == "one":
        return arrow(r.o, r.z)
    if r.kind == "two":
        return arrow(r.o, r.z) + w.pick((", ", "; ", " | ", "\n", " and ", " / ", ". ")) + arrow(r.o2, r.z2)
    if r.kind == "same":
        pattern = w.pick(
            (
                "{a} + {b}{arr}{z}",
                "{a} & {b}: {z}",
                "{a}, {b} to {z}",
                "{a} and {b}{arr}{z}",
                "{a}/{b} -> {z}",
            )
        )
        zone = r.z + w.pick(_TERSE_ZONE_WORDS)
        return pattern.format(a=r.o, b=r.o2, arr=w.pick(_TERSE_ARROWS), z=zone)
    if r.kind == "replace":
        return w.pick(
            ("swap {a} {b}", "{a} <-> {b}", "{a} ⇄ {b}", "switch {a}/{b}", "swap {a}, {b}", "{a} <=> {b}")
        ).format(a=r.o, b=r.o2)
    return w.pick(
        (
            "{a} -> {b}",
            "{a} next to {b}",
            "{a} -> where {b} is",
            "{a} by {b}",
            "{a} => {b}'s zone",
            "{a} beside {b}",
        )
    ).format(a=r.o, b=r.o2)


def _polite(w: _Wording) -> str:
    if w.rng.random() < 0.25:
        opener, core = w.pick(_POLITE_MIND), w.clause(gerund=True)
        return f"{opener} {core}{w.pick(('?', '? thanks', ', please?', '?'))}"
    opener, core = w.pick(_POLITE_OPENERS), w.clause()
    closer = w.pick(_POLITE_CLOSERS)
    question = any(opener.endswith(x) for x in ("could you", "can you", "would you", "could you maybe"))
    asks = question and closer in ("", ", please", ", if you can", " when you get a chance", " for me")
    return f"{opener} {core}{closer}{'?' if asks else ''}"


# -- typos -------------------------------------------------------------------------------------

_KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours(letter: str) -> str:
    """Keys beside ``letter`` on a QWERTY keyboard (substitutions people actually make)."""
    for row in _KEYBOARD_ROWS:
        i = row.find(letter)
        if i >= 0:
            return row[max(0, i - 1) : i] + row[i + 1 : i + 2]
    return "e"


def edit_distance(a: str, b: str) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment): each edit counts 1."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def typo(word: str, rng: random.Random) -> str:
    """``word`` with one character inserted, deleted, substituted (a keyboard neighbour) or transposed."""
    for _ in range(20):
        edit = rng.choice(("insert", "delete", "substitute", "transpose"))
        i = rng.randrange(len(word))
        if edit == "insert":
            out = word[:i] + rng.choice(_neighbours(word[i]) + word[i]) + word[i:]
        elif edit == "delete" and len(word) > 3:
            out = word[:i] + word[i + 1 :]
        elif edit == "substitute":
            out = word[:i] + rng.choice(_neighbours(word[i])) + word[i + 1 :]
        elif edit == "transpose" and i + 1 < len(word):
            out = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        else:
            continue
        if out != word and edit_distance(out, word) == 1:
            return out
    return word[:-1] + ("s" if word[-1] != "s" else "z")


def _grammar_words() -> frozenset[str]:
    """Every word the grammar can produce: a typo must not turn one word into another of them."""
    texts = [
        *_PLAIN_VERBS,
        *_SYNONYM_VERBS,
        *_GERUNDS.values(),
        *_SYNONYM_ZONE_WORDS,
        *_PICK_VERBS,
        *_DROP_PHRASES,
        *_SWAPS,
        *_NEAR,
        *_LOCATION_REFS,
        *_CLAUSE_CONNECTORS,
        *_POLITE_OPENERS,
        *_POLITE_MIND,
        *_POLITE_CLOSERS,
        "zone to into onto in on over down the a and then too as well also where was is it of",
    ]
    return frozenset(
        w for text in texts for w in "".join(c if c.isalpha() else " " for c in text.lower()).split()
    )


_GRAMMAR_WORDS = _grammar_words()


def _add_typos(text: str, scene: Scene, rng: random.Random, count: int) -> str:
    """``text`` with ``count`` of its words (letters only, 3+ long) given one typo each, unambiguously.

    A typo never yields a word of the grammar or a name of the scene, and a misspelt name stays
    closer to its own name than to any other (at least two edits from every other name).
    """
    names = set(scene.object_names) | set(scene.zone_names)
    tokens = text.split(" ")
    candidates = [i for i, t in enumerate(tokens) if t.isalpha() and t.islower() and len(t) >= 3]
    rng.shuffle(candidates)
    # Most typos hit the words that carry meaning; a short function word now and then.
    function_words = {"the", "and", "too", "was", "can", "you"}
    candidates.sort(key=lambda i: tokens[i] in function_words and rng.random() < 0.8)
    done = 0
    for i in candidates:
        if done == count:
            break
        word = tokens[i]
        wrong = typo(word, rng)
        if wrong in _GRAMMAR_WORDS or wrong in names:
            continue
        if any(edit_distance(wrong, n) < 2 for n in names if n != word):
            continue
        tokens[i] = wrong
        done += 1
    return " ".join(tokens)


# -- phrasings ---------------------------------------------------------------------------------


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


def _style(kind: str, rng: random.Random) -> _Style:
    plain = _Style(_PLAIN_VERBS, ("zone",), location=False)
    if kind == "synonyms":
        return _Style(_SYNONYM_VERBS, _SYNONYM_ZONE_WORDS, location=False)
    if kind == "location":
        return _Style(_PLAIN_VERBS, ("zone", "zone", "area", "spot"), location=True)
    if kind == "mixed":
        verbs = dict(_SYNONYM_VERBS) | (_PLAIN_VERBS if rng.random() < 0.5 else {})
        return _Style(verbs, ("zone", *_SYNONYM_ZONE_WORDS), location=rng.random() < 0.5)
    return plain


def _word(kind: str, request: Request, scene: Scene, rng: random.Random) -> tuple[str, str, tuple[str, ...]]:
    """(instruction, instruction before typos, zones referenced by location) for ``request``."""
    wording = _Wording(request, _style(kind, rng), rng)
    if kind == "compound":
        text = _compound(wording)
    elif kind == "word_order":
        text = _word_order(wording)
    elif kind == "terse":
        text = _terse(wording)
    elif kind == "polite":
        text = _polite(wording)
    elif kind == "mixed":
        text = rng.choice((_polite, _compound, _word_order))(wording)
    else:
        text = wording.clause()
    text = text if kind == "terse" else _finish(text, rng)
    clean = text
    if kind == "typo" or (kind == "mixed" and rng.random() < 0.5):
        text = _add_typos(text, scene, rng, 1 if rng.random() < 0.6 else 2)
    return text, clean, tuple(sorted(location_references(clean, scene)))


def location_references(text: str, scene: Scene) -> set[str]:
    """The zones whose object ``text`` names by location (by one of the grammar's reference forms)."""
    lowered = text.lower()
    found = set()
    for zone in scene.zone_names:
        for ref in _LOCATION_REFS:
            for w in ("zone", *_SYNONYM_ZONE_WORDS):
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
                request = _draw_request(relocation, episode, rng)
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


# -- out of scope ------------------------------------------------------------------------------

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


def _out_of_scope_text(kind: str, scene: Scene, rng: random.Random) -> str:
    objects, zones = sorted(scene.object_names), sorted(scene.zone_names)
    n, c = rng.choice(objects), rng.choice(zones)
    o = f"the {n}"
    if kind == "absent_object":
        verb = rng.choice(sorted(_PLAIN_VERBS))
        thing = rng.choice(_ABSENT_OBJECTS)
        word = rng.choice(("zone", "area", "spot"))
        text = f"{verb} the {thing} {rng.choice(_PLAIN_VERBS[verb])} the {c} {word}"
        if rng.random() < 0.3:
            text = f"{verb} the {thing} and {o} {rng.choice(_PLAIN_VERBS[verb])} the {c} zone"
    elif kind == "absent_zone":
        verb = rng.choice(sorted(_PLAIN_VERBS))
        text = f"{verb} {o} {rng.choice(_PLAIN_VERBS[verb])} {rng.choice(_ABSENT_ZONES)}"
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
        text = f"{rng.choice(_POLITE_OPENERS)} {text}"
    elif kind == "negation" and rng.random() < 0.35:
        text = f"{rng.choice(_NEGATION_OPENERS)} {text}"
    return _capitalise(text) if rng.random() < 0.7 else text


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
    missing = [x for x in _ABSENT_OBJECTS if x in scene.object_names]
    if missing:
        raise ValueError(
            f"scene {scene.name!r} has the objects {missing} that the out-of-scope set calls absent"
        )
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
