"""Requests that relate two objects: swaps, and one object put next to (or where) another is.

People ask for a swap with verbs of exchange ("switch", "trade", "interchange", "reverse"), with
reciprocal phrases ("trade places", "the other way round", "and vice versa", "change spots"), with
symbols ("bowl <-> cup"), or as two crossed placements ("the cup where the bowl is, and the bowl
where the cup was"). They ask for one object by another with prepositions of place ("by",
"beside", "near", "with", "next to", "at", "to" before an object's name), with the other object's
zone ("to the cup's zone", "the same spot as the cup", "wherever the cup is"), and in any word
order ("next to the bowl: the apple", "the bowl needs the apple next to it").

:func:`relations` reads the canonical tokens (:func:`galley_core.language.reading.canonical_tokens`)
clause by clause into :class:`Relation` s: ``swap`` (two objects exchange zones), ``near`` (an
object goes to the zone of another), ``to`` (an object goes to a zone) and ``swap_zones`` ("swap
the contents of the red and green zones"), or None when a clause is none of these.
:func:`resolve` turns them into (object, zone) relocations from where each object is (which only
the image shows); galley's planner plans those as the oracle drives. Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from galley_core.language.asides import verb_stem
from galley_core.language.structure import split_clauses
from galley_core.scene import Scene

__all__ = ["Relation", "relations", "resolve"]

#: Verbs and nouns of exchange: with two objects and no zone, a swap.
SWAP_WORDS = frozenset(
    {"swap", "switch", "exchange", "trade", "interchange", "reverse", "flip", "change", "versa", "swapped",
     "switched", "exchanged", "traded", "reversed", "swop", "<->", "replace", "replaced", "transpose",
     "transposed", "invert", "inverted", "permute", "crisscross", "interchanged", "vice"}
)  # fmt: skip
#: Words after which an object's name is the object another goes next to (or to the zone of).
_ANCHOR_CUES = frozenset({"next", "to", "with", "where", "wherever", "at", "as", "of", "holds", "contains",
                          "has", "near", "in", "on", "into", "onto", "toward", "towards"})  # fmt: skip
#: Words skipped between a cue and the object's name ("next to the bowl", "where the cup is").
_SKIP = frozenset({"the", "a", "an", "that", "this", "my", "your", "is", "ever", "over", "right"})
#: Words after an object's name that make it the one that goes ("where the apple goes").
_GOES = frozenset({"goes", "go", "should", "belongs", "belong", "needs", "has", "must", "will", "can",
                   "ends", "move", "moved", "gets", "want", "wants"})  # fmt: skip
#: Words after an object's name that make it where another goes ("the cup's zone", "the bowl is").
_ZONE_OF = frozenset({"zone", "zones", "area", "spot", "place", "region", "side", "location", "position",
                      "is", "sits", "lies", "was", "currently"})  # fmt: skip
_PRONOUNS = frozenset({"it", "them", "they"})
#: Words that may reverse the order of the clauses, or say more than these relations.
_OTHER = frozenset({"after", "before", "until", "unless", "if", "not", "except", "instead", "all", "every",
                    "everything", "rest", "either", "or"})  # fmt: skip
#: Words before a zone that make it where an object is now, not where it goes ("from the red zone").
_SOURCE = frozenset({"from", "off", "out", "of", "away"})


@dataclass(frozen=True)
class Relation:
    """What a clause asks for: kind ``swap``, ``near``, ``to`` or ``swap_zones``.

    ``swap``: objects a and b exchange zones; ``near``: a goes to b's zone; ``to``: a goes to
    zone b; ``swap_zones``: the objects in zones a and b exchange zones.
    """

    kind: str
    a: str
    b: str


def _clauses(tokens: Sequence[str]) -> list[list[str]] | None:
    """``tokens`` split at connectors; None when a word may reorder them or says more."""
    return split_clauses(tokens, lambda _, word: word in _OTHER)


def _is_swap(clause: Sequence[str]) -> bool:
    text = " ".join(clause)
    return bool(SWAP_WORDS & {verb_stem(w) for w in clause} | SWAP_WORDS & set(clause)) or any(
        p in text for p in ("other way", "each other", "one another")
    )


def _anchor(clause: Sequence[str], objects: frozenset[str]) -> str | None:
    """The object of ``clause`` that another goes to (or next to), or None when that is unclear."""
    found: set[str] = set()
    for i, word in enumerate(clause):
        if word not in objects:
            continue
        after = clause[i + 1] if i + 1 < len(clause) else ""
        if after in _GOES:
            continue
        j = i - 1
        while j >= 0 and clause[j] in _SKIP:
            j -= 1
        cue = j >= 0 and clause[j] in _ANCHOR_CUES
        if cue and clause[j] == "of":  # "the zone of the cup", not "the places of the bowl and the cup"
            cue = j > 0 and clause[j - 1] in _ZONE_OF
        if cue or after in _ZONE_OF:
            found.add(word)
    return found.pop() if len(found) == 1 else None


def _targets(clause: Sequence[str], zones: frozenset[str]) -> list[str]:
    """The zones ``clause`` names as where something goes (not "from the red zone")."""
    return [
        t
        for i, t in enumerate(clause)
        if t in zones and clause[i + 1 : i + 2] == ["zone"] and not set(clause[max(0, i - 3) : i]) & _SOURCE
    ]


def _relation(clause: Sequence[str], objects: frozenset[str], zones: frozenset[str]) -> Relation | None:
    """The relation one clause asks for, or None."""
    named = list(dict.fromkeys(t for t in clause if t in objects))
    places = _targets(clause, zones)
    if len(named) == 1 and len(places) == 1:
        return Relation("to", named[0], places[0])
    if _is_swap(clause):
        # Zones named with two objects say where they are ("the bowl in red with the cup in green");
        # two zones and no object ask to swap what lies in them ("swap the red and green zones").
        named_zones = list(dict.fromkeys(t for i, t in enumerate(clause) if t in zones))
        if len(named) == 2:
            return Relation("swap", named[0], named[1])
        if not named and len(named_zones) == 2:
            return Relation("swap_zones", named_zones[0], named_zones[1])
    if len(named) != 2 or places:
        return None
    pronoun = next((i for i, t in enumerate(clause) if t in _PRONOUNS and i > 0), None)
    anchor = _anchor(clause, objects)
    if anchor is None and pronoun is not None and clause[pronoun - 1] in _ANCHOR_CUES:
        # "the bowl needs the apple next to it": "it" is the object named before the other.
        anchor = named[0]
    if anchor is None:
        return None
    mover = named[1] if anchor == named[0] else named[0]
    return Relation("near", mover, anchor)


def _merge(clauses: list[list[str]], objects: frozenset[str], zones: frozenset[str]) -> list[list[str]]:
    """Clauses that name objects without a relation joined to the next (after it, or for its pronoun).

    "next to the bowl, put the apple", "the fork: put the cup next to it", "with the cup, swap
    the plate", "the places of the bowl and the cup: swap them".
    """
    out: list[list[str]] = []
    for clause in clauses:
        joined = clause
        if (
            out
            and (any(t in objects for t in out[-1]) or _is_swap(out[-1]))  # "exchange their spots: ..."
            and not _targets(out[-1], zones)
            and _relation(out[-1], objects, zones) is None
        ):
            lone = [t for t in out[-1] if t in objects]
            if len(lone) == 1 and any(t in _PRONOUNS for t in clause):
                out.pop()
                joined = [lone[0] if t in _PRONOUNS else t for t in clause]
            elif not _targets(clause, zones) or (_is_swap(out[-1]) and not set(clause) & objects):
                # A clause with its own target zone stands alone, but for a swap's second zone.
                previous = out.pop()
                if previous[0] in _ANCHOR_CUES | {"by", "beside", "near"}:
                    joined = clause + previous  # "with the fork, swap the cup": the verb's object goes first
                else:
                    joined = previous + clause
        out.append(joined)
    return out


def relations(tokens: Sequence[str], scene: Scene) -> list[Relation] | None:
    """The relations that canonical ``tokens`` ask for, in order, or None.

    None unless at least one relates two objects and every clause is understood (see the module
    docstring).
    """
    objects, zones = frozenset(scene.object_names), frozenset(scene.zone_names)
    clauses = _clauses(tokens)
    if not clauses:
        return None
    clauses = _merge(clauses, objects, zones)
    found: list[Relation] = []
    for clause in clauses:
        after_near = found[-1] if found and found[-1].kind == "near" else None
        named = [t for t in clause if t in objects]
        if not any(t in objects or t in zones for t in clause):
            if after_near and _is_swap(
                clause
            ):  # "... where the bowl is, and vice versa / the other way round"
                found[-1] = Relation("swap", after_near.a, after_near.b)
                continue
            return None
        relation = _relation(clause, objects, zones)
        if (
            relation is None
            and after_near
            and (set(named) == {after_near.a, after_near.b} or (named == [after_near.b] and "back" in clause))
        ):
            # "a in b's place and b in a's", "a to b's zone and b back"
            relation = Relation("near", after_near.b, after_near.a)
        if relation is None:
            return None
        if found and relation.kind == "near" and found[-1] == Relation("near", relation.b, relation.a):
            found[-1] = Relation("swap", relation.b, relation.a)  # "a where b is, and b where a was"
            continue
        found.append(relation)
    if not any(r.kind != "to" for r in found):
        return None
    moved = [r.a for r in found] + [r.b for r in found if r.kind == "swap"]
    return found if len(set(moved)) == len(moved) else None


def resolve(found: Sequence[Relation], at: Mapping[str, str]) -> list[tuple[str, str]] | None:
    """(object, target zone) relocations for ``found``, objects starting where ``at`` says.

    A near relation reads where the other object is at that point of the request. None when an
    object's zone is unknown or a relocation would leave an object where it is.
    """
    where = dict(at)
    pairs: list[tuple[str, str]] = []
    for relation in found:
        r = relation
        if r.kind == "swap_zones":
            held = [[o for o, z in where.items() if z == zone] for zone in (r.a, r.b)]
            if any(len(h) != 1 for h in held):
                return None
            r = Relation("swap", held[0][0], held[1][0])
        if r.a not in where or (r.kind != "to" and r.b not in where):
            return None
        if r.kind == "swap":
            moves = [(r.a, where[r.b]), (r.b, where[r.a])]
        elif r.kind == "near":
            moves = [(r.a, where[r.b])]
        else:
            moves = [(r.a, r.b)]
        for obj, zone in moves:
            if where[obj] == zone:
                return None
            pairs.append((obj, zone))
        where.update(dict(moves))
    return pairs
