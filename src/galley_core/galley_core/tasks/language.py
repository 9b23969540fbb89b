"""Reading instructions as people write them: words, typos, synonyms and location references.

What a person types is read as

* **words** (:func:`read`): lower case, contractions spelt out ("don't" -> "do not"), punctuation kept
  as its own token, and every word that is not in galley's lexicon corrected to the one lexicon word
  (or scene name) one edit away (Damerau-Levenshtein: one character inserted, deleted, replaced, or
  two swapped), so "bwol" reads "bowl" and "gren" reads "green";
* **location references** (:func:`location_references`): "the thing in the red zone", "whatever is on
  the blue area", "the red zone's item" name an object by the zone it lies in; which object that is
  only the image can say, so the planner resolves them (:func:`canonical` with ``where``).

:func:`canonical` is the text galley's own planner network reads: the words above with politeness
and filler dropped, "area" / "spot" / "region" / "place" after a zone's name read as "zone", a bare
zone name given its "zone", verbs of carrying read as "move", and punctuation as ``sep``. Pure Python.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from galley_core.scene import Scene
from galley_core.tasks.lexicon import (
    CONNECTORS,
    CORRECTABLE,
    DETERMINERS,
    FILLER,
    LEXICON,
    MODALS,
    MOVE_VERBS,
    NEXT_TO,
    REFERENCE_LINKS,
    REFERENCE_NOUNS,
    REFERENCE_PREPOSITIONS,
    RELATIONS,
    REQUEST_PHRASES,
    UNSUPPORTED_VERBS,
    WH,
    ZONE_WORDS,
)
from galley_core.tasks.structure import relocation_pairs, relocation_text

__all__ = [
    "Reading",
    "canonical",
    "drop_asides",
    "drop_phrases",
    "is_known",
    "is_near_known",
    "location_references",
    "read",
    "scene_words",
    "verb_stem",
]

_TOKEN = re.compile(r"[a-z]+|[0-9]+|->|=>|→|[,;:.!?&+/]")
_CONTRACTIONS = (
    (r"\bcan't\b", "can not"), (r"\bwon't\b", "will not"), (r"\bshan't\b", "shall not"), (r"n't\b", " not"),
    (r"\b(what|that|it|there|here|where|who|how)'s\b", r"\1 is"), (r"\blet's\b", "let us"),
    (r"'d\b", " would"), (r"'m\b", " am"), (r"'ll\b", " will"), (r"'re\b", " are"), (r"'ve\b", " have"),
    (r"'s\b", ""), (r"s'(?=\s|$)", "s"),
)  # fmt: skip


@dataclass(frozen=True)
class Reading:
    """An instruction as galley reads it: tokens (words corrected, punctuation kept) and the corrections."""

    tokens: tuple[str, ...]
    corrections: tuple[tuple[str, str], ...]


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one insertion, deletion, substitution or adjacent swap."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def scene_words(scene: Scene) -> tuple[frozenset[str], frozenset[str]]:
    """The scene's object names and zone names."""
    return frozenset(scene.object_names), frozenset(scene.zone_names)


def is_known(word: str) -> bool:
    """A lexicon word, or its plural."""
    return word in LEXICON or (word.endswith("s") and word[:-1] in LEXICON)


@lru_cache(maxsize=4096)
def _correct(word: str, names: frozenset[str]) -> str:
    """``word``, or the one scene name / lexicon word one edit away (names win a tie)."""
    if word in names or is_known(word) or not word.isalpha():
        return word
    if word.endswith("s") and word[:-1] in names:  # plurals: "cups" names the cup
        return word[:-1]
    near_names = [n for n in names if len(n) >= 3 and len(word) >= 2 and _one_edit(word, n)]
    if len(near_names) == 1:
        return near_names[0]
    if near_names or len(word) < 3:
        return word
    near = [w for w in CORRECTABLE if _one_edit(word, w)]
    return near[0] if len(near) == 1 else word


@lru_cache(maxsize=4096)
def _lexicon_correction(word: str) -> str:
    """The one lexicon word one edit away from ``word``, or ""."""
    near = [w for w in CORRECTABLE if _one_edit(word, w)]
    return near[0] if len(near) == 1 else ""


def is_near_known(word: str) -> bool:
    """Whether ``word`` is one edit from several lexicon words (a typo that cannot be resolved)."""
    return any(_one_edit(word, w) for w in CORRECTABLE)


def read(text: str, scene: Scene) -> Reading:
    """The tokens of ``text``: lower case, contractions spelt out, typos corrected (see the module doc)."""
    clean = text.lower().replace("’", "'").replace("—", ",").replace("–", ",")
    for pattern, replacement in _CONTRACTIONS:
        clean = re.sub(pattern, replacement, clean)
    objects, zones = scene_words(scene)
    names = objects | zones
    tokens, corrections = [], []
    found = _TOKEN.findall(clean)
    for i, token in enumerate(found):
        fixed = _correct(token, names)
        if fixed in names and fixed != token and found[i + 1 : i + 2] in (["the"], ["a"], ["an"]):
            # A name is not followed by "the"; "form the" is "from the", not "fork the".
            fixed = _lexicon_correction(token) or fixed
        if fixed != token:
            corrections.append((token, fixed))
        tokens.append(fixed)
    return Reading(tuple(tokens), tuple(corrections))


def drop_phrases(tokens: Sequence[str], phrases: Sequence[tuple[str, ...]]) -> tuple[list[str], bool]:
    """``tokens`` without any of ``phrases``, and whether one was found."""
    out: list[str] = []
    found = False
    i = 0
    while i < len(tokens):
        for phrase in phrases:
            if tuple(tokens[i : i + len(phrase)]) == phrase:
                i += len(phrase)
                found = True
                break
        else:
            out.append(tokens[i])
            i += 1
    return out, found


def location_references(tokens: Sequence[str], scene: Scene) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, zone)`` of ``tokens`` that name an object by the zone it lies in.

    "the thing in the red zone", "whatever is on the blue area", "the object from the green spot",
    "the red zone's item" (read as "red zone item"), "what is in the yellow zone".
    """
    zones = set(scene.zone_names)
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(tokens):
        word = tokens[i]
        if word in REFERENCE_NOUNS:
            j = i + 1
            while (
                j < len(tokens) and tokens[j] in REFERENCE_LINKS and tokens[j] not in REFERENCE_PREPOSITIONS
            ):
                j += 1
            if j < len(tokens) and tokens[j] in REFERENCE_PREPOSITIONS:
                k = j + 1
                if k < len(tokens) and tokens[k] in ("the", "that"):
                    k += 1
                if k < len(tokens) and tokens[k] in zones:
                    end = k + 1
                    if end < len(tokens) and tokens[end] in ZONE_WORDS:
                        end += 1
                    start = i - 1 if i > 0 and tokens[i - 1] in DETERMINERS else i
                    spans.append((start, end, tokens[k]))
                    i = end
                    continue
        if word in zones and i + 1 < len(tokens):
            k = i + 1
            if tokens[k] in ZONE_WORDS and tokens[k] not in ("place",):
                k += 1
            if k < len(tokens) and tokens[k] in REFERENCE_NOUNS - {"one", "what"} and k > i + 1:
                start = i - 1 if i > 0 and tokens[i - 1] in DETERMINERS else i
                spans.append((start, k + 1, word))
                i = k + 1
                continue
        i += 1
    return spans


#: Verbs of rearranging that keep their meaning when inflected ("swapping the bowl and the cup").
_REARRANGING = frozenset({"pick", "swap", "switch", "exchange", "trade", "gather", "collect", "group"})
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
    objects, zones = scene_words(scene)
    names = objects | zones
    start = _indirect_request(tokens, names)
    out = list(tokens[start:])
    i = 0
    while i < len(out):
        if out[i] in _SUBORDINATORS and (i == 0 or not out[i - 1].isalnum() or out[i - 1] in CONNECTORS):
            j = i + 1
            while j < len(out) and out[j].isalnum() and out[j] not in names and out[j] not in DETERMINERS:
                if verb_stem(out[j]) in MOVE_VERBS and _names_object_next(out, j, names):
                    break
                j += 1
            if set(out[i + 1 : j]) & _ASIDE_PRONOUNS:
                del out[i:j]
                continue
        i += 1
    stretches: list[list[int]] = [[]]
    for n, token in enumerate(out):
        if token.isalnum():
            stretches[-1].append(n)
        else:
            stretches.append([])
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


def canonical(text: str, scene: Scene, where: Mapping[str, str] | None = None) -> str:  # noqa: PLR0912
    """The instruction as galley's planner network reads it (see the module docstring).

    Args:
        where: zone -> the object that lies in it (from the image); resolves location references
            ("the thing in the red zone" -> "the apple"). Without it they stay as written.
    """
    objects, zones = scene_words(scene)
    tokens, _ = drop_phrases(read(text, scene).tokens, REQUEST_PHRASES)
    tokens, _ = drop_asides(tokens, scene)
    if where:
        for start, end, zone in reversed(location_references(tokens, scene)):
            if zone in where:
                tokens[start:end] = ["the", where[zone]]
    out: list[str] = []
    skip_to = False
    for i, token in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        before = out[-1] if out else ""
        if token in ("->", "=>", "→"):
            out.append("to")
        elif token in ("&", "+", "/"):
            out.append("and")
        elif token == "?" or token in FILLER:
            continue
        elif not token.isalnum():
            if before != "sep" and out:
                out.append("sep")
        elif token in NEXT_TO or (token == "by" and before == "over") or (token == "close" and after == "to"):
            if before == "over":
                out.pop()
            out += ["next", "to"]
            if after == "to":
                skip_to = True
        elif token == "to" and skip_to:
            skip_to = False
        elif (
            before == "zone"
            and len(out) > 1
            and out[-2] in zones
            and (token in ZONE_WORDS or not is_known(token))
        ):
            continue  # "green area" -> "green zone"; "the green strip": a word galley lacks names the zone
        elif token in zones:
            if after in objects:
                continue  # "the red apple": the object's colour, not a zone
            if before in objects:
                out.append("to")  # telegraphic "bowl green": the zone is where the object goes
            out += [token, "zone"]
        elif token in ("one", "ones") and before == "zone" and len(out) > 1 and out[-2] in zones:
            continue  # "the yellow one", once a zone was named: the zone
        elif verb_stem(token) in MOVE_VERBS and not (token == "place" and before in zones):
            out.append("move")
        elif verb_stem(token) != token:
            out.append(verb_stem(token))  # "swapping" -> "swap"
        else:
            out.append(token)
    while out and out[-1] == "sep":
        out.pop()
    pairs = relocation_pairs(out, scene)
    return relocation_text(pairs) if pairs else " ".join(out)
