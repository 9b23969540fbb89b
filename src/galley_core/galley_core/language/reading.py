"""Reading instructions as people write them: words, typos, synonyms and location references.

What a person types is read as

* **words** (:func:`read`): lower case, contractions spelt out ("don't" -> "do not"), punctuation kept
  as its own token, and every word that is not in galley's lexicon corrected to the one lexicon word
  (or scene name) one edit away (Damerau-Levenshtein: one character inserted, deleted, replaced, or
  two swapped), so "bwol" reads "bowl" and "gren" reads "green" (or, failing that, to the one scene
  name it abbreviates: "grn", "ylw");
* **location references** (:func:`location_references`): "the thing in the red zone", "whatever is on
  the blue area", "the red zone's item" name an object by the zone it lies in; which object that is
  only the image can say, so the planner resolves them (:func:`canonical` with ``where``).

:func:`canonical` is the text galley's own planner network reads: the words above with politeness,
filler and asides about the listener dropped (:mod:`galley_core.language.asides`), "area" / "spot" /
"region" / "place" (or a word galley lacks) after a zone's name read as "zone", a bare zone name
given its "zone", verbs of carrying read as "move", punctuation as ``sep``; and a plain relocation
request, in whatever word order, read as the suite's templates say it
(:mod:`galley_core.language.structure`). Pure Python.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from galley_core.language.asides import drop_asides, verb_stem, wishes_as_requests
from galley_core.language.lexicon import (
    CORRECTABLE,
    DETERMINERS,
    FILLER,
    LEXICON,
    MOVE_VERBS,
    NEXT_TO,
    REFERENCE_LINKS,
    REFERENCE_NOUNS,
    REFERENCE_PREPOSITIONS,
    REQUEST_PHRASES,
    ZONE_WORDS,
    is_word,
)
from galley_core.language.relations import relations, resolve
from galley_core.language.structure import relocation_pairs, relocation_text
from galley_core.scene import Scene

__all__ = [
    "Reading",
    "canonical",
    "canonical_tokens",
    "drop_phrases",
    "is_known",
    "is_near_known",
    "location_references",
    "read",
    "related_relocations",
    "scene_words",
]

_TOKEN = re.compile(r"[a-z]+|[0-9]+|<->|<=>|<>|[↔⇄⇆]|->|=>|→|>|[,;:.!?&+/@]")
_CONTRACTIONS = (
    (r"\bcan't\b", "can not"), (r"\bwon't\b", "will not"), (r"\bshan't\b", "shall not"), (r"n't\b", " not"),
    (r"\b(what|that|it|there|here|where|who|how)'s\b", r"\1 is"), (r"\blet's\b", "let us"),
    (r"'d\b", " would"), (r"'m\b", " am"), (r"'ll\b", " will"), (r"'re\b", " are"), (r"'ve\b", " have"),
    (r"'s\b", ""), (r"s'(?=\s|$)", "s"),
)  # fmt: skip


#: Words before "place" that make it a noun ("in place of the cup", "each other's place").
_PLACE_NOUN = DETERMINERS | {"in", "of", "other", "same", "own", "original"}


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
    """The scene's object names and zone names (a name of several words, "left counter", is one)."""
    return frozenset(scene.object_names), frozenset(scene.zone_names)


def _merge_names(tokens: Sequence[str], names: frozenset[str]) -> list[str]:
    """``tokens`` with each run of words that spells a name of several words as one token, longest first.

    "the left counter zone" reads ["the", "left counter", "zone"] in a scene with a "left counter"
    zone, so that every rule downstream sees a name as one word, whatever the scene calls its zones.
    """
    long = sorted((tuple(n.split()) for n in names if " " in n), key=len, reverse=True)
    if not long:
        return list(tokens)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        match = next((n for n in long if tuple(tokens[i : i + len(n)]) == n), None)
        out.append(" ".join(match) if match else tokens[i])
        i += len(match) if match else 1
    return out


def is_known(word: str) -> bool:
    """A lexicon word, or its plural."""
    return word in LEXICON or (word.endswith("s") and word[:-1] in LEXICON)


def _abbreviates(short: str, name: str) -> bool:
    """Whether ``short`` abbreviates ``name``: its first letter, then some of its letters in order."""
    if len(short) >= len(name) or short[0] != name[0]:
        return False
    rest = iter(name[1:])
    return all(letter in rest for letter in short[1:])


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
    short = [n for n in names if len(word) >= 3 and _abbreviates(word, n)]
    if len(short) == 1 and not _lexicon_correction(word):
        return short[0]  # "grn", "ylw", "purp": the one name the letters abbreviate
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
    clean = re.sub(r"\s-+\s", " , ", clean)  # a hyphen between spaces is a dash: "bowl to green - cup to red"
    clean = re.sub(r"\bw/", "with ", clean)  # "bowl w/ cup"
    for pattern, replacement in _CONTRACTIONS:
        clean = re.sub(pattern, replacement, clean)
    objects, zones = scene_words(scene)
    names = objects | zones
    # Typos are corrected word by word, towards the words of the scene's names too ("countr").
    words = names | frozenset(w for n in names if " " in n for w in n.split())
    tokens, corrections = [], []
    found = _TOKEN.findall(clean)
    for i, token in enumerate(found):
        fixed = _correct(token, words)
        if fixed in words and fixed != token and found[i + 1 : i + 2] in (["the"], ["a"], ["an"]):
            # A name is not followed by "the"; "form the" is "from the", not "fork the".
            fixed = _lexicon_correction(token) or fixed
        if fixed != token:
            corrections.append((token, fixed))
        tokens.append(fixed)
    return Reading(tuple(_merge_names(tokens, names)), tuple(corrections))


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


def canonical(
    text: str, scene: Scene, where: Mapping[str, str] | None = None, at: Mapping[str, str] | None = None
) -> str:
    """The instruction as galley's planner network reads it (see the module docstring).

    Args:
        where: zone -> the object that lies in it (from the image); resolves location references
            ("the thing in the red zone" -> "the apple"). Without it they stay as written.
        at: object -> the zone it lies in (from the image); turns swaps and "next to" requests
            into plain relocations (:mod:`galley_core.language.relations`). Without it they stay.
    """
    out = canonical_tokens(text, scene, where)
    pairs = related_relocations(out, scene, at) or relocation_pairs(out, scene)
    return relocation_text(pairs) if pairs else " ".join(out)


def related_relocations(
    tokens: Sequence[str], scene: Scene, at: Mapping[str, str] | None
) -> list[tuple[str, str]] | None:
    """The (object, zone) relocations of a swap or "next to" request in canonical ``tokens``.

    Objects start where ``at`` says (:mod:`galley_core.language.relations`); None for other requests.
    """
    found = relations(tokens, scene) if at else None
    return resolve(found, at) if found and at else None


def canonical_tokens(text: str, scene: Scene, where: Mapping[str, str] | None = None) -> list[str]:  # noqa: PLR0912
    """:func:`canonical`'s words before plain relocations and relations are read from them."""
    objects, zones = scene_words(scene)
    tokens, _ = drop_phrases(read(text, scene).tokens, REQUEST_PHRASES)
    tokens, _ = drop_asides(tokens, scene)
    if where:
        for start, end, zone in reversed(location_references(tokens, scene)):
            if zone in where:
                tokens[start:end] = ["the", where[zone]]
    tokens = wishes_as_requests(tokens, objects)
    out: list[str] = []
    skip_to = False
    for i, token in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        before = out[-1] if out else ""
        if token in ("->", "=>", "→", ">", "@"):
            out.append("to" if token != "@" else "at")
        elif token in ("<->", "<=>", "<>", "↔", "⇄", "⇆"):
            out.append("<->")  # "bowl <-> cup": a swap
        elif token in ("&", "+", "/"):
            out.append("and")
        elif token == "?" or token in FILLER:
            continue
        elif not is_word(token):
            if before != "sep" and out:
                out.append("sep")
        elif (
            token in NEXT_TO
            or (token == "by" and (before == "over" or set(tokens[i + 1 : i + 3]) & objects))
            or (token == "close" and after == "to")
        ):
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
            and (
                token in ZONE_WORDS
                or not (is_known(token) or token in objects or not is_word(token) or token.isdigit())
            )
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
        elif verb_stem(token) in MOVE_VERBS and not (
            token == "place" and before in _PLACE_NOUN | zones | objects
        ):
            out.append("move")
        elif verb_stem(token) != token:
            out.append(verb_stem(token))  # "swapping" -> "swap"
        else:
            out.append(token)
    while out and out[-1] == "sep":
        out.pop()
    return out
