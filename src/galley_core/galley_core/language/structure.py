"""Reading the structure of a plain relocation request, whatever its word order.

galley's planner network reads the canonical text (:func:`galley_core.language.reading.canonical`)
in the order a person wrote it, and word order it never saw in training ("the green zone is where
the bowl goes", "over in green i want the bowl, the cup in red") throws it. Yet most requests are
plain relocations: each clause names one object and the one zone it should go to. For those the
order of words within a clause carries nothing, so :func:`relocation_pairs` reads the (object,
zone) pairs from the clauses (or, for one object and one zone, from the whole request), and the
planner network reads them in the one form every suite
template shares ("move the bowl to the green zone and move the cup to the red zone"); the network
still plans from the image (where each object is).

Anything with more structure is left to the network as written: relations between objects (next
to, swap, where, same), pronouns (it, there), sources (from, off, out of), clauses that name an
object without its zone or a zone without an object, an object named twice, and temporal
subordination that may reverse the order ("after you ...", "before"). Pure Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from galley_core.scene import Scene

__all__ = ["relocation_pairs", "relocation_text"]

#: Words after which the pairs are not plain relocations in the order written.
_STRUCTURE = frozenset(
    {"next", "swap", "switch", "exchange", "trade", "replace", "where", "same", "together", "both",
     "it", "them", "there", "that", "which", "from", "off", "out", "before", "instead", "except", "but",
     "not", "each", "all", "every", "everything", "other", "holds", "contains", "has", "unless", "until",
     "if", "when", "while", "whenever", "once", "without", "last", "either", "or",
     "beside", "near", "between", "zones", "swapped", "switched", "exchanged", "as", "too", "well", "by",
     "after", "back"}
)  # fmt: skip
#: Coordinating connectors between clauses (canonical text: punctuation is ``sep``); "first" too,
#: where the caller's ``stop`` lets it through.
CONNECTORS = frozenset({"sep", "and", "then", "plus", "also", "afterwards", "afterward", "later",
                        "subsequently", "thereafter", "finally", "lastly", "first"})  # fmt: skip
#: Two-word connectors: "after that" (and which, this), "followed by", "and next".
PAIRED = {("after", "that"), ("after", "which"), ("after", "this"), ("followed", "by"), ("and", "next"),
          ("sep", "next")}  # fmt: skip


def split_clauses(tokens: Sequence[str], stop: Callable[[int, str], bool]) -> list[list[str]] | None:
    """``tokens`` split at connectors, or None where ``stop(index, word)`` says a word means more."""
    clauses: list[list[str]] = [[]]
    i = 0
    while i < len(tokens):
        if tuple(tokens[i : i + 2]) in PAIRED:
            clauses.append([])
            i += 2
            continue
        word = tokens[i]
        if stop(i, word):
            return None
        if word in CONNECTORS:
            clauses.append([])
        else:
            clauses[-1].append(word)
        i += 1
    return [c for c in clauses if c]


def _clauses(tokens: Sequence[str]) -> list[list[str]] | None:
    """``tokens`` split at connectors, or None when a word says more than "this goes there"."""
    # "first" opening the request keeps the order; later it may reverse it.
    return split_clauses(tokens, lambda i, word: word in _STRUCTURE or (word == "first" and i > 0))


#: Words that relate objects to each other or quantify over them: a single (object, zone) pair
#: is no longer all a request says.
_RELATING = frozenset(
    {"next", "swap", "switch", "exchange", "trade", "replace", "same", "together", "both", "each", "all",
     "every", "everything", "other", "rest", "except", "between", "holds", "contains", "has", "swapped",
     "switched", "exchanged", "either", "or", "zones", "any", "everywhere"}
)  # fmt: skip
#: Words before a zone that make it where an object is, not where it goes ("from", "the bowl is in").
_SOURCE = frozenset({"from", "off", "out", "away", "is", "are", "was", "were", "sits", "lies", "currently"})


def _single_pair(tokens: Sequence[str], scene: Scene) -> tuple[str, str] | None:
    """The one (object, zone) pair of a request that names one object and one target zone, or None.

    With one object and one zone the zone is where the object goes, whatever the order and the
    pronouns ("the green zone is where the bowl goes", "the bowl, put it there: green zone");
    unless the zone is a source ("from the green zone", "the bowl is in the green zone") or the
    request relates objects or quantifies over them.
    """
    objects, zones = set(scene.object_names), set(scene.zone_names)
    if any(t in _RELATING for t in tokens):
        return None
    named = {t for t in tokens if t in objects}
    places = [i for i, t in enumerate(tokens) if t in zones and tokens[i + 1 : i + 2] == ["zone"]]
    if len(named) != 1 or len(places) != 1 or set(tokens[max(0, places[0] - 3) : places[0]]) & _SOURCE:
        return None
    return named.pop(), tokens[places[0]]


def relocation_pairs(tokens: Sequence[str], scene: Scene) -> list[tuple[str, str]] | None:
    """The (object, target zone) pairs of a plain relocation request in canonical tokens, or None.

    ``tokens`` are :func:`~galley_core.language.reading.canonical`'s words (a zone is "<name> zone",
    punctuation ``sep``). One object and one target zone make one pair (:func:`_single_pair`);
    else None unless every clause that names an object or a zone names exactly
    one of each, no object twice, and nothing in the request says more than "this goes there"
    (see the module docstring).
    """
    objects, zones = set(scene.object_names), set(scene.zone_names)
    single = _single_pair(tokens, scene)
    if single:
        return [single]
    clauses = _clauses(tokens)
    if clauses is None:
        return None
    found: list[tuple[list[str], list[str]]] = []
    for clause in clauses:
        named = [t for t in clause if t in objects]
        places = [t for i, t in enumerate(clause) if t in zones and clause[i + 1 : i + 2] == ["zone"]]
        if named or places:
            found.append((named, places))
    pairs: list[tuple[str, str]] = []
    while found:
        named, places = found.pop(0)
        if found and len(named) + len(places) == 1:
            # "to the green zone, take the bowl": a clause with the zone only, one with the object only.
            other_named, other_places = found[0]
            if len(other_named) + len(other_places) == 1 and bool(named) != bool(other_named):
                found.pop(0)
                named, places = named + other_named, places + other_places
        if len(named) != 1 or len(places) != 1:
            return None
        pairs.append((named[0], places[0]))
    if not pairs or len({o for o, _ in pairs}) != len(pairs):
        return None
    return pairs


def relocation_text(pairs: Sequence[tuple[str, str]]) -> str:
    """The pairs as the suite's templates say them: "move the bowl to the green zone and move ..."."""
    return " and ".join(f"move the {obj} to the {zone} zone" for obj, zone in pairs)
