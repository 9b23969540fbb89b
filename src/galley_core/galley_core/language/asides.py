"""What in a request only addresses the listener, and the verbs of a request in any inflection.

People wrap a request in words about themselves and the listener: an indirect request's frame
("is there any way you could ..."), asides ("if it's not too much trouble", "while you're at it"),
idle remarks ("no rush"), wishes ("I'd like the bowl ..."). :func:`drop_asides` removes them by
linguistic category, for the planner's reading (:func:`galley_core.language.reading.canonical`) and
for refusal (:mod:`galley_core.language.refusal`), so that a polite or hedged request is read as the
request it is; :func:`verb_stem` reads "moving", "swapping" as their verbs. Pure Python.
"""

from __future__ import annotations

from collections.abc import Sequence

from galley_core.language.lexicon import (
    CONNECTORS,
    DETERMINERS,
    MODALS,
    MOVE_VERBS,
    REFERENCE_NOUNS,
    RELATIONS,
    UNSUPPORTED_VERBS,
    WH,
    is_word,
)
from galley_core.scene import Scene

__all__ = ["drop_asides", "drop_remarks", "verb_stem", "wishes_as_requests"]

#: Verbs of rearranging that keep their meaning when inflected ("swapping the bowl and the cup",
#: "flipping the positions of the bowl and the cup"): the verbs of a swap read inflected too.
_REARRANGING = frozenset(
    {"pick", "swap", "switch", "exchange", "trade", "gather", "collect", "group", "interchange", "flip",
     "reverse", "transpose", "invert", "permute", "replace", "change"}
)  # fmt: skip
#: Words that open a remark of the speaker's own, thinking aloud ("let's see", "let me think").
_HORTATIVE = (("let", "us"), ("let", "me"))
#: Words that open a clause about the listener or the circumstances, not about the task.
_SUBORDINATORS = frozenset({"if", "when", "whenever", "while", "once", "as", "unless"})
#: Pronouns that make such a clause an aside ("if you can", "while you are at it", "once that is done").
_ASIDE_PRONOUNS = frozenset({"you", "u", "it", "that", "this", "i", "we", "there", "everything"})


def verb_stem(word: str) -> str:
    """The verb of an inflected form ("moving", "swapping": "move", "swap"), or ``word``."""
    if word == "places":
        return word  # "swap places"
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            for candidate in (stem, stem + "e", stem[:-1]):
                if candidate in MOVE_VERBS or candidate in _REARRANGING:
                    return candidate
    return word


def _names_object_next(tokens: Sequence[str], i: int, names: frozenset[str]) -> bool:
    """Whether a name follows ``tokens[i]`` within two words ("move the bowl", "put it" does not)."""
    return any(t in names for t in tokens[i + 1 : i + 3])


#: Words of ability, permission or wish that, with a person, frame a request ("are you able to").
_FRAMES = frozenset(
    {
        "able",
        "willing",
        "possible",
        "ok",
        "okay",
        "alright",
        "want",
        "wanna",
        "mind",
        "free",
        "ready",
        "wonder",
        "wondering",
        "think",
        "suppose",
        "chance",
        "way",
        "like",
        "love",
    }
)
#: Words that make a question about what happened, not a request ("did you move ...").
_PAST = frozenset({"did", "has", "had", "was", "were", "have"})


def _indirect_request(tokens: Sequence[str], names: frozenset[str]) -> int:
    """Where the asked-for action starts in an indirect request, or 0.

    A request asked as a question or a wish about the listener: "is there any way you could move
    ...", "are you able to put ...", "do you think you might take ...", "mind moving ...". The
    action is the first verb of carrying or rearranging, in its bare form (or "-ing" after
    "mind"), before any name; what precedes it speaks of a person ("you", "i", "we", "it") and of
    ability, permission or wish (a modal, "able", "possible", "want", ...), and of no other action
    or of the past: "could you tell me where ...", "did you move ..." stay questions.
    """
    verbs = MOVE_VERBS | _REARRANGING
    for j, word in enumerate(tokens):
        if word in names or word in UNSUPPORTED_VERBS:
            return 0
        stem = verb_stem(word)
        gerund = word.endswith("ing") and j > 0 and tokens[j - 1] == "mind"
        if stem in verbs and (stem == word or gerund) and j > 0:
            frame = set(tokens[:j])
            if frame & (_PAST | WH - {"how"}):
                return 0
            if gerund and j == 1:
                return j  # "mind moving the cup to red?"
            return j if frame & {"you", "u", "i", "we", "it"} and frame & (MODALS | _FRAMES) else 0
    return 0


def drop_asides(tokens: Sequence[str], scene: Scene) -> tuple[list[str], bool]:
    """``tokens`` without what only addresses the listener, and whether an indirect request was read.

    Three linguistic categories, none tied to a phrase list:

    * an indirect request's frame, up to the action ("is there any way you could | move the bowl");
    * a subordinate aside about the listener or the circumstances: "if", "when", "while", "once",
      ... opening a clause with a pronoun and no name ("if it is not too much trouble", "while you
      are at it", "whenever you can", "if you do not mind", "once that is done"), up to the next
      punctuation, name, or verb that carries a named object; "once the bowl is in green" stays;
    * a stretch between punctuation with no name, verb, relation or connector ("no rush", "do not
      worry"), when another stretch names an object: its "no" is no negation of the task.
    """
    objects = frozenset(scene.object_names)
    names = objects | frozenset(scene.zone_names)
    start = _indirect_request(tokens, names)
    out = list(tokens[start:])
    i = 0
    while i < len(out):
        if out[i] in _SUBORDINATORS and (i == 0 or not is_word(out[i - 1]) or out[i - 1] in CONNECTORS):
            j = i + 1
            while j < len(out) and is_word(out[j]) and out[j] not in names and out[j] not in DETERMINERS:
                if verb_stem(out[j]) in MOVE_VERBS and _names_object_next(out, j, names):
                    break
                j += 1
            if set(out[i + 1 : j]) & _ASIDE_PRONOUNS:
                del out[i:j]
                continue
        i += 1
    stretches = _stretches(out)
    telling = names | MOVE_VERBS | _REARRANGING | UNSUPPORTED_VERBS | RELATIONS | CONNECTORS | REFERENCE_NOUNS
    if any(out[n] in names for stretch in stretches for n in stretch):
        idle = {
            n
            for stretch in stretches
            if not any(out[n] in telling or verb_stem(out[n]) in telling for n in stretch)
            for n in stretch
        }
        out = [t for n, t in enumerate(out) if n not in idle]
    return out, start > 0


def _stretches(tokens: Sequence[str]) -> list[list[int]]:
    """The indices of ``tokens`` in runs of words between punctuation (empty runs included)."""
    stretches: list[list[int]] = [[]]
    for n, token in enumerate(tokens):
        if is_word(token):
            stretches[-1].append(n)
        else:
            stretches.append([])
    return stretches


def drop_remarks(tokens: Sequence[str], scene: Scene) -> list[str]:
    """``tokens`` without the speaker's remarks to themselves: "let's see", "let me think".

    A stretch between punctuation that opens with "let us" or "let me" and names nothing of the
    scene, no verb of carrying or rearranging and no relation is thinking aloud; its verb ("see",
    "think") is not an action asked for. Only when another stretch names an object ("let's see...
    put the bowl in green"); "let's dance" alone stays, to be refused.
    """
    names = frozenset(scene.object_names) | frozenset(scene.zone_names)
    carrying = names | MOVE_VERBS | _REARRANGING | RELATIONS | REFERENCE_NOUNS
    stretches = _stretches(tokens)
    if not any(tokens[n] in names for stretch in stretches for n in stretch):
        return list(tokens)
    remarks = {
        n
        for stretch in stretches
        if tuple(tokens[n] for n in stretch[:2]) in _HORTATIVE
        and not any(tokens[n] in carrying or verb_stem(tokens[n]) in carrying for n in stretch)
        for n in stretch
    }
    return [t for n, t in enumerate(tokens) if n not in remarks]


_WISH = frozenset({"want", "need", "like", "love", "prefer"})


def wishes_as_requests(tokens: list[str], objects: frozenset[str]) -> list[str]:
    """A clause's "I (would) want / need / like / love / prefer the bowl ..." read as "move the bowl ...".

    A wish for an object to be somewhere asks for the move, whatever follows it ("next to the cup",
    "in the green zone"); a wish for an action ("i would like you to") is a request phrase already.
    """
    out: list[str] = []
    i = 0
    while i < len(tokens):
        opens = not out or not is_word(out[-1]) or out[-1] in CONNECTORS
        j = i + 1 + (tokens[i + 1 : i + 2] == ["would"])
        if (
            opens
            and tokens[i] in ("i", "we")
            and j < len(tokens)
            and tokens[j] in _WISH
            and tokens[j + 1 : j + 2]
            and (tokens[j + 1] in DETERMINERS or tokens[j + 1] in objects)
        ):
            out.append("move")
            i = j + 1
            continue
        out.append(tokens[i])
        i += 1
    return out
