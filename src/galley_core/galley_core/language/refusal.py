"""Refusal: why the scene cannot ground an instruction, before any planner backend is asked.

Every planner backend gets an instruction through :func:`galley_core.language.planning.check_instruction`,
which asks :func:`refusal` whether the scene can ground it at all. :func:`refusal` says why an
instruction gets no plan (kind ``out_of_scope`` or ``unknown_name``): negations and requests for
nothing, questions, actions other than moving objects between zones, names the scene lacks,
nothing named to move, or nowhere named to move it. It is a reader of words
(:mod:`galley_core.language.reading`), not a model: it refuses only what it recognises, so that
in-scope requests in unfamiliar wording go through.
"""

from __future__ import annotations

from collections.abc import Sequence

from galley_core.language.asides import drop_asides, drop_remarks, verb_stem
from galley_core.language.lexicon import (
    ADJECTIVES,
    AUX,
    COLOURS,
    CONNECTORS,
    DETERMINERS,
    FILLER,
    LEXICON,
    MODALS,
    MOVE_VERBS,
    NEGATION_PHRASES,
    NEGATIONS,
    OTHER_VERBS,
    RELATIONS,
    REQUEST_PHRASES,
    TO,
    UNSUPPORTED_VERBS,
    WH,
    ZONE_WORDS,
    is_word,
)
from galley_core.language.reading import (
    canonical_tokens,
    drop_phrases,
    is_known,
    is_near_known,
    location_references,
    read,
    scene_words,
)
from galley_core.language.relations import SWAP_WORDS, relations
from galley_core.scene import Scene

__all__ = ["refusal"]

#: Verbs of reluctance or forgetting: negated, they ask for the task ("do not hesitate to move ...").
_RELUCTANCE = [[w] for w in ("hesitate", "forget", "mind", "fail", "worry", "rush", "hurry", "neglect")]


def _content(tokens: Sequence[str]) -> list[str]:
    """Tokens without politeness, filler and punctuation."""
    words, _ = drop_phrases(tokens, REQUEST_PHRASES)
    return [t for t in words if is_word(t) and not t.isdigit() and t not in FILLER]


def _clauses(tokens: Sequence[str]) -> list[list[str]]:
    """Tokens split at punctuation and connectors, each clause without leading filler."""
    clauses: list[list[str]] = [[]]
    for token in tokens:
        if not is_word(token) or token in CONNECTORS:
            clauses.append([])
        elif token not in FILLER or clauses[-1]:
            clauses[-1].append(token)
    return [c for c in clauses if c]


def _stand_ins(spans: Sequence[tuple[int, int, str]], words: Sequence[str], scene: Scene) -> dict[str, str]:
    """Zone -> an object the request does not name, for each zone referred to by location.

    "Swap the thing in the red zone and the cup" is a swap of two objects whichever object lies
    there: refusal does not see the image, so any other object of the scene stands in for it.
    """
    others = [o for o in scene.object_names if o not in words]
    return {zone: obj for (_, _, zone), obj in zip(spans, others, strict=False)}


def refusal(text: str, scene: Scene) -> tuple[str, str] | None:  # noqa: PLR0912, PLR0915 -- one rule each
    """Why the scene cannot ground ``text``: (kind, reason), or None when it is in scope.

    Kinds: ``out_of_scope`` (a negation or a request for nothing, a question, an action other
    than moving objects between zones, nothing named to move, nowhere named to move it) and
    ``unknown_name`` (an object or zone the scene lacks). Reasons name the input and say what
    galley can do instead.
    """
    objects, zones = scene_words(scene)
    reading = read(text, scene)
    tokens, request = drop_phrases(drop_remarks(reading.tokens, scene), REQUEST_PHRASES)
    tokens, indirect = drop_asides(tokens, scene)
    request = request or indirect
    quoted = f"{' '.join(text.split())!r}"
    example = "e.g. 'Move the bowl to the green zone.'"
    can = f"galley moves the scene's objects ({', '.join(scene.object_names)}) between its zones"
    names = f"objects: {', '.join(scene.object_names)}; zones: {', '.join(scene.zone_names)}"
    words = [t for t in tokens if is_word(t) and not t.isdigit()]
    # "Don't hesitate to", "I wouldn't mind if": a negated reluctance encourages; it negates no task.
    negation = next(
        (w for i, w in enumerate(words) if w in NEGATIONS and words[i + 1 : i + 2] not in _RELUCTANCE), None
    )
    phrase = next(
        (p for p in NEGATION_PHRASES for i in range(len(words)) if tuple(words[i : i + len(p)]) == p), None
    )
    if negation or phrase:
        said = negation or " ".join(phrase or ())
        return "out_of_scope", (
            f"{quoted} asks for nothing to be done ({said!r}); {can}: say what to move where, {example}"
        )
    content = _content(tokens)
    if not content:
        return "out_of_scope", f"{quoted} asks for nothing; {can}: say what to move where, {example}"
    first = content[0]
    ends_with_question = bool(reading.tokens) and reading.tokens[-1] == "?"
    action_first = first in MOVE_VERBS or first in OTHER_VERBS or first in objects
    # A request may end in "?" ("the bowl to green?"); a question without a question word names no zone.
    action_first = action_first or any(w in zones for w in content)
    # "Can I have the bowl in the green zone?", "Shall we move ...": a modal asking for a move is a request.
    modal = first in MODALS and any(verb_stem(w) in MOVE_VERBS | OTHER_VERBS for w in content[1:])
    request = request or (modal and any(w in zones for w in content))
    spans = location_references(tokens, scene)
    subject = bool(spans) and not ends_with_question and spans[0][0] <= tokens.index(first)
    # "What I need is the bowl in green": a cleft about what the speaker wants, not a question.
    cleft = first in WH and content[1:2] in (["i"], ["we"])
    # A swap or "next to" read whole ("could the cup go next to the bowl?", "where the fork is, put
    # the apple"): a request, unless it opens as a question about the scene ("is the cup by the bowl?").
    related = relations(canonical_tokens(text, scene, _stand_ins(spans, words, scene)), scene) is not None
    related = related and first not in AUX - MODALS and not (first in WH and ends_with_question)
    # An object named like a modal ("can") opens a request, unless a person follows ("can you ...").
    named = first in objects and content[1:2] not in (["you"], ["u"], ["i"], ["we"])
    if (
        not request
        and not related
        and not subject
        and not cleft
        and not named
        and (first in WH or first in AUX - {"have", "do"} or (ends_with_question and not action_first))
    ):
        return "out_of_scope", (
            f"{quoted} is a question; galley answers no questions, it plans rearrangements: {can}, {example}"
        )
    # Names the scene lacks: a colour used as a zone, a word before "zone", a noun after a determiner.
    for i, word in enumerate(words):
        after = words[i + 1] if i + 1 < len(words) else ""
        before = words[i - 1] if i > 0 else ""
        if (
            word in COLOURS
            and word not in zones | objects  # "the orange" may be the scene's object
            and (after in ZONE_WORDS or after in ("", "and", "then") or before in ("to", "into", "onto"))
        ):
            return "unknown_name", f"{quoted}: scene {scene.name!r} has no {word!r} zone; {names}"
        if after in ("zone", "area", "region") and word not in zones | objects | LEXICON:
            return "unknown_name", f"{quoted}: scene {scene.name!r} has no {word!r} zone; {names}"
        if word in DETERMINERS:
            j = i + 1
            while j < len(words) and words[j] in ADJECTIVES and words[j] not in objects | zones:
                if j + 1 < len(words) and words[j + 1] in ZONE_WORDS:
                    break  # "the red zone": the colour names the zone
                j += 1
            noun = words[j] if j < len(words) else ""
            # A word before an object's name is its modifier ("the porcelain bowl"), not another object.
            modifier = any(w in objects for w in words[j + 1 : j + 3])
            if (
                noun
                and not modifier
                and noun not in objects | zones
                and not is_known(noun)
                and not is_near_known(noun)
            ):
                return "unknown_name", f"{quoted}: scene {scene.name!r} has no object {noun!r}; {names}"
    for clause in _clauses(tokens):
        head = clause[0]
        targeted = any(w in TO for w in clause) and any(w in zones for w in clause)
        if head in UNSUPPORTED_VERBS and not (related and head in SWAP_WORDS):  # "flip the bowl and the cup"
            return "out_of_scope", f"{quoted}: galley cannot {head!r}; {can}, {example}"
        unknown = not is_known(verb_stem(head)) and head not in objects | zones and not is_near_known(head)
        # An unknown verb in a request that names a zone is a verb of carrying galley does not know.
        if (
            unknown
            and len(clause) > 1
            and not targeted
            and not any(w in zones for w in words)
            and not related
        ):
            return "out_of_scope", f"{quoted}: galley does not know the action {head!r}; {can}, {example}"
    if related:
        return None
    mentioned = [w for w in words if w in objects]
    if not mentioned and not spans:
        return "out_of_scope", f"{quoted} names none of the scene's objects; {can} ({names}), {example}"
    target = any(w in zones for w in words) or any(w in RELATIONS or verb_stem(w) in RELATIONS for w in words)
    target = target or any(
        w in objects and (words[i - 1] in TO or (words[i - 1] == "the" and i > 1 and words[i - 2] in TO))
        for i, w in enumerate(words)
        if i > 0
    )
    if not target:
        return "out_of_scope", (
            f"{quoted} says nowhere to put {mentioned[0] if mentioned else 'it'}: name a zone "
            f"({', '.join(scene.zone_names)}) or another object to put it beside, {example}"
        )
    return None
