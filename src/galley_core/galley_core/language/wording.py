"""Wording one request of the second phrase grammar: what it asks for, and the ways people say it.

A :class:`Request` is drawn for an episode (:func:`draw_request`); a :class:`Wording` words it in a
:class:`Style` (verbs, words for a zone, references by location), as one clause or by one of the
phrasing kinds' forms (:func:`compound`, :func:`word_order`, :func:`terse`, :func:`polite`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from galley_core.episode import Episode
from galley_core.language.phrase_grammar import (
    CLAUSE_CONNECTORS,
    DROP_PHRASES,
    ELIDING,
    GERUNDS,
    LOCATION_REFS,
    NEAR,
    PICK_VERBS,
    POLITE_CLOSERS,
    POLITE_MIND,
    POLITE_OPENERS,
    RELOCATION_KINDS,
    SWAPS,
    TERSE_ARROWS,
    TERSE_ZONE_WORDS,
)

__all__ = [
    "Request",
    "Style",
    "Wording",
    "capitalise",
    "compound",
    "draw_request",
    "finish",
    "polite",
    "terse",
    "word_order",
]


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


def draw_request(kind: str, episode: Episode, rng: random.Random) -> Request | None:
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
class Style:
    """The word choices one instruction is made with."""

    verbs: dict[str, tuple[str, ...]]
    zone_words: tuple[str, ...]
    location: bool  # name objects by their zone where that is unique


class Wording:
    """Words one request; keeps track of which zones have received an object so far."""

    def __init__(self, request: Request, style: Style, rng: random.Random) -> None:
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
            return self.pick(LOCATION_REFS).format(c=zone, w=self.pick(self.style.zone_words))
        return f"the {name}"

    def verb(self) -> tuple[str, str]:
        verb = self.pick(sorted(self.style.verbs))
        return verb, self.pick(self.style.verbs[verb])

    def to_zone(self, name: str, colour: str, *, gerund: bool = False) -> str:
        """``<verb> <object> <prep> <zone>``; the object is worded before the zone is marked as targeted."""
        chosen, prep = self.verb()
        thing = self.obj(name, force_location=not self.referenced)
        self.targeted.add(colour)
        return f"{GERUNDS[chosen] if gerund else chosen} {thing} {prep} {self.zone(colour)}"

    def bare_to_zone(self, name: str, colour: str) -> str:
        """``<object> to <zone>``, the verb elided."""
        thing = self.obj(name)
        self.targeted.add(colour)
        return f"{thing} {self.pick(('to', 'into', 'over to', 'onto'))} {self.zone(colour)}"

    def swap(self) -> str:
        a = self.obj(self.r.o, force_location=True)
        b = self.obj(self.r.o2)
        return self.pick(SWAPS).format(a=a, b=b)

    def near(self, *, gerund: bool = False) -> str:
        verb, _ = self.verb()
        a = self.obj(self.r.o, force_location=True)
        b = self.obj(self.r.o2)
        return f"{GERUNDS[verb] if gerund else verb} {a} {self.pick(NEAR).format(b=b)}"

    def clause(self, *, gerund: bool = False) -> str:
        """The whole request as one clause (two relocations joined by "and" where there are two)."""
        r = self.r
        if r.kind == "one":
            return self.to_zone(r.o, r.z, gerund=gerund)
        if r.kind == "replace":
            text = self.swap()
            if gerund:
                verb, rest = text.split(" ", 1)
                text = f"{GERUNDS[verb]} {rest}"
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


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def finish(text: str, rng: random.Random) -> str:
    """Sentence case and a closing mark, sometimes none (people often leave it off)."""
    text = capitalise(text)
    if text[-1:] in ".!?":
        return text
    return text + rng.choice((".", ".", "", "!"))


def _join(first: str, second: str, connector: str) -> str:
    if connector.rstrip(" ").endswith(".") or connector.endswith("\n"):
        second = capitalise(second)
    return first + connector + second


def compound(w: Wording) -> str:
    r, rng = w.r, w.rng
    if r.kind in ("one", "to_object"):
        pick = f"{w.pick(PICK_VERBS)} {w.obj(r.o)}"
        if r.kind == "one":
            w.targeted.add(r.z)
            phrase = w.pick(sorted(DROP_PHRASES))
            drop = f"{phrase} {w.pick(DROP_PHRASES[phrase])} {w.zone(r.z)}"
        else:
            drop = f"{w.pick(sorted(DROP_PHRASES))} {w.pick(NEAR).format(b=w.obj(r.o2))}"
        joins = (" and ", ", then ", " and then ", ". After that, ", "; ", ", ", "\n", " & then ", ", and ")
        return _join(pick, drop, w.pick(joins))
    connector = w.pick(CLAUSE_CONNECTORS)
    form = rng.randrange(3)
    if r.kind == "replace":
        first = f"{w.verb()[0]} {w.obj(r.o)} {w.pick(NEAR).format(b=w.obj(r.o2))}"
        w.targeted.add(r.start[r.o2])  # the first object is there now: no reference by that zone after
        was = w.pick(("where {a} was", "where {a} used to be", "to {a}'s old spot", "into the gap {a} left"))
        second = f"{w.verb()[0]} {w.obj(r.o2)} {was.format(a=f'the {r.o}')}"
        if connector in ELIDING:
            second = f"{w.obj(r.o2)} {was.format(a=f'the {r.o}')}"
    else:
        z2 = r.z if r.kind == "same" else r.z2
        first = w.to_zone(r.o, r.z)
        if connector in ELIDING and form:
            second = w.bare_to_zone(r.o2, z2)
        elif r.kind == "same" and form == 2:
            second = w.pick(
                ("do the same with {b}", "the same for {b}", "{b} goes there too", "{b} there too")
            )
            second = second.format(b=w.obj(r.o2))
        else:
            second = w.to_zone(r.o2, z2)
    if form == 0 and connector not in ELIDING:
        bullet = w.pick(("- ", "* ", "• ", "1) ", "1. "))
        numbered = bullet[0].isdigit()
        lead = w.pick(("", "Please do this:\n", "Two things:\n", "To do:\n"))
        marks = (bullet, bullet.replace("1", "2")) if numbered else (bullet, bullet)
        return f"{lead}{marks[0]}{capitalise(first)}\n{marks[1]}{capitalise(second)}"
    return _join(first, second, connector)


def word_order(w: Wording) -> str:
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


def terse(w: Wording) -> str:
    r = w.r

    def arrow(name: str, colour: str) -> str:
        form = w.rng.randrange(4)
        zone = colour + w.pick(TERSE_ZONE_WORDS)
        if form == 0:
            return f"{name}{w.pick(TERSE_ARROWS)}{zone}"
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
        zone = r.z + w.pick(TERSE_ZONE_WORDS)
        return pattern.format(a=r.o, b=r.o2, arr=w.pick(TERSE_ARROWS), z=zone)
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


def polite(w: Wording) -> str:
    if w.rng.random() < 0.25:
        opener, core = w.pick(POLITE_MIND), w.clause(gerund=True)
        return f"{opener} {core}{w.pick(('?', '? thanks', ', please?', '?'))}"
    opener, core = w.pick(POLITE_OPENERS), w.clause()
    closer = w.pick(POLITE_CLOSERS)
    question = any(opener.endswith(x) for x in ("could you", "can you", "would you", "could you maybe"))
    asks = question and closer in ("", ", please", ", if you can", " when you get a chance", " for me")
    return f"{opener} {core}{closer}{'?' if asks else ''}"
