"""Reading instructions as people write them: words, typos, synonyms, references, and refusal.

Every planner backend gets an instruction through :func:`galley_core.tasks.planning.check_instruction`,
which asks :func:`refusal` whether the scene can ground it at all. What a person types is read as

* **words** (:func:`read`): lower case, contractions spelt out ("don't" -> "do not"), punctuation kept
  as its own token, and every word that is not in galley's lexicon corrected to the one lexicon word
  (or scene name) one edit away (Damerau-Levenshtein: one character inserted, deleted, replaced, or
  two swapped), so "bwol" reads "bowl" and "gren" reads "green";
* **location references** (:func:`location_references`): "the thing in the red zone", "whatever is on
  the blue area", "the red zone's item" name an object by the zone it lies in; which object that is
  only the image can say, so the planner resolves them (:func:`canonical` with ``where``).

:func:`refusal` says why an instruction gets no plan (kind ``out_of_scope`` or ``unknown_name``):
negations and requests for nothing, questions, actions other than moving objects between zones,
names the scene lacks, nothing named to move, or nowhere named to move it. It is a reader of
words, not a model: it refuses only what it recognises, so that in-scope requests in unfamiliar
wording go through.

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

__all__ = [
    "LEXICON",
    "Reading",
    "canonical",
    "location_references",
    "read",
    "refusal",
]

#: Words that say "zone" after a zone's name.
ZONE_WORDS = frozenset(
    {"zone", "zones", "area", "areas", "spot", "region", "place", "section", "location", "patch", "corner",
     "square", "station", "bay", "field", "sector", "pad", "part", "side", "mat", "space"}
)  # fmt: skip
#: Verbs that ask for an object to be carried somewhere (canonically "move").
MOVE_VERBS = frozenset(
    {"move", "put", "take", "bring", "carry", "place", "set", "shift", "transfer", "relocate", "deliver",
     "drop", "get", "grab", "fetch", "haul", "transport", "send", "position", "stick", "pop", "slide",
     "stash", "lay", "lug", "ferry", "tote", "shove", "push", "dump", "park", "shuttle", "convey", "hand",
     "pass", "give", "return", "rehome", "reposition", "plonk", "deposit", "load", "leave",
     "store", "keep", "schlep", "hoist", "lift", "nudge", "toss", "drag", "chuck"}
)  # fmt: skip
#: Verbs of rearranging that keep their own meaning (pick up, swap, gather, ...).
OTHER_VERBS = frozenset(
    {"pick", "swap", "switch", "exchange", "trade", "replace", "gather", "collect", "clear", "remove",
     "have", "want", "need", "like", "arrange", "rearrange", "group", "unite", "join", "go", "head", "make",
     "ensure", "belongs", "belong", "goes", "ends", "end", "should", "must", "needs", "sits", "sit",
     "moved", "placed", "put", "taken", "brought", "carried"}
)  # fmt: skip
#: Actions galley cannot do: an instruction whose clause starts with one is out of scope.
UNSUPPORTED_VERBS = frozenset(
    {"wash", "clean", "wipe", "rinse", "dry", "scrub", "eat", "drink", "cook", "heat", "boil", "bake",
     "fry", "microwave", "cut", "chop", "slice", "peel", "pour", "fill", "empty", "open", "close", "shut",
     "turn", "break", "smash", "kick", "hide", "find", "look", "search", "see", "watch", "show",
     "tell", "say", "sing", "dance", "play", "count", "read", "write", "draw", "paint", "fold", "stir",
     "mix", "shake", "serve", "feed", "water", "charge", "sleep", "jump", "run", "call", "order", "buy",
     "sell", "build", "spin", "flip", "bend", "lick", "smell", "taste", "juggle", "describe", "explain",
     "repair", "fix", "polish", "sweep", "mop", "vacuum", "tidy", "dust", "stack", "balance", "squeeze",
     "crush", "throw", "destroy", "burn", "freeze", "chill", "warm", "toast", "blend", "grate", "weigh",
     "measure", "identify", "recognise", "recognize", "name", "list", "photograph", "scan", "sort",
     "laugh", "wave", "hug", "kiss", "bite", "chew", "touch", "hold", "tap", "knock", "ring",
     "shout", "whisper", "report", "check", "inspect", "unlock", "lock", "plug", "unplug", "drive",
     "walk", "fly", "swim", "climb", "sit", "stand", "wait", "rest", "think", "remember", "forget"}
)  # fmt: skip
_NEGATIONS = frozenset({"not", "never", "nothing", "none", "nobody", "neither", "nor", "cancel", "stop",
                        "halt", "nevermind", "abort", "no", "undo"})  # fmt: skip
_NEGATION_PHRASES = (
    ("as", "it", "is"), ("as", "they", "are"), ("where", "it", "is"), ("where", "they", "are"),
    ("leave", "everything"), ("leave", "it", "all"), ("leave", "things"), ("keep", "everything"),
    ("stay", "put"), ("forget", "it"), ("never", "mind"), ("all", "done"), ("as", "is"),
)  # fmt: skip
#: Phrases that make a request polite; dropped before reading (so "can you" is no question).
_REQUEST_PHRASES = (
    ("if", "you", "do", "not", "mind"), ("if", "you", "would", "not", "mind"), ("why", "do", "not", "you"),
    ("why", "not"), ("would", "you", "mind"), ("do", "you", "mind"), ("how", "about"),
    ("would", "it", "be", "possible", "to"), ("is", "it", "possible", "to"),
    ("i", "would", "like", "you", "to"),
    ("i", "want", "you", "to"), ("i", "need", "you", "to"), ("be", "so", "kind", "as", "to"),
    ("would", "you", "be", "so", "kind", "as", "to"), ("could", "you"), ("can", "you"), ("would", "you"),
    ("will", "you"), ("could", "u"), ("can", "u"), ("would", "u"), ("you", "should"), ("you", "must"),
    ("you", "need", "to"), ("you", "have", "to"), ("i", "would", "like", "to"), ("let", "us"),
    ("i", "would", "appreciate", "it", "if", "you", "would"), ("i", "would", "appreciate", "it", "if", "you"),
    ("if", "possible"), ("if", "you", "can"), ("when", "you", "can"), ("when", "you", "get", "a", "chance"),
    ("thank", "you"), ("thanks", "a", "lot"), ("for", "me"), ("go", "ahead", "and"), ("try", "to"),
    ("i", "was", "wondering", "if", "you", "could"), ("i", "wonder", "if", "you", "could"),
    ("do", "you", "think", "you", "could"), ("could", "i", "ask", "you", "to"),
    ("can", "i", "ask", "you", "to"), ("would", "you", "please"), ("will", "you", "please"),
    ("do", "not", "forget", "to"), ("no", "rush"), ("no", "hurry"), ("when", "you", "have", "a", "moment"),
    ("is", "it", "ok", "if", "you"), ("is", "it", "okay", "if", "you"), ("see", "to", "it", "that"),
    ("see", "that"), ("make", "sure", "that"), ("hi", "there"), ("hello", "there"), ("hey", "there"),
    ("be", "a", "dear", "and"), ("do", "me", "a", "favour", "and"), ("do", "me", "a", "favor", "and"),
)  # fmt: skip
#: Words of politeness and filler, dropped from the planner's reading.
FILLER = frozenset(
    {"please", "pls", "plz", "kindly", "hey", "hi", "hello", "ok", "okay", "um", "uh", "er", "erm", "hmm",
     "just", "quickly", "now", "thanks", "thank", "cheers", "robot", "buddy", "mate", "galley",
     "actually", "basically", "maybe", "alright", "yo", "oh", "gently", "carefully",
     "slowly", "soon", "asap", "immediately", "real", "really", "friend", "dear", "sir", "oops", "also",
     "perhaps", "possibly", "simply", "again", "today", "currently"}
)  # fmt: skip
_WH = frozenset({"what", "where", "which", "who", "whom", "whose", "why", "how", "when"})
_MODALS = frozenset({"can", "could", "would", "will", "shall", "may", "might"})
_AUX = frozenset({"is", "are", "am", "was", "were", "does", "did", "do", "has", "have", "should", "shall",
                  "may", "might", "must", "can", "could", "would", "will"})  # fmt: skip
COLOURS = frozenset(
    {"red", "green", "blue", "yellow", "purple", "orange", "pink", "white", "black", "brown", "grey",
     "gray", "cyan", "teal", "violet", "magenta", "gold", "golden", "silver", "beige", "maroon", "navy",
     "lime", "turquoise", "indigo", "lilac", "crimson", "scarlet", "olive", "tan", "amber", "lavender"}
)  # fmt: skip
_DETERMINERS = frozenset({"the", "a", "an", "that", "this", "these", "those", "my", "your", "our", "some",
                          "its", "their", "his", "her", "each", "every", "any", "another"})  # fmt: skip
#: Nouns that may follow a determiner without naming an object or a zone.
GENERIC = frozenset(
    {"zone", "area", "same", "other", "robot", "one", "ones", "first", "second", "two", "kitchen", "thing",
     "things", "object", "objects", "item", "items", "stuff", "something", "everything", "whole", "rest",
     "left", "right", "end", "way", "moment", "meantime", "following", "latter", "former", "colour",
     "color", "top", "middle", "floor", "table", "counter", "shelf", "fridge", "sink", "side", "target",
     "destination", "goal", "next", "last", "final", "both", "favour", "favor", "chance", "task",
     "job", "spot", "place", "region", "section", "location", "position", "corner", "patch", "start",
     "beginning", "time", "room", "lot", "bit", "current", "original", "new", "empty", "starting",
     "surface", "counters", "tables", "piece", "order", "pair", "trip", "third", "rim"}
)  # fmt: skip
#: Adjectives that may stand between a determiner and a name ("the little bowl").
_ADJECTIVES = frozenset(
    {"little", "small", "big", "large", "tiny", "white", "clean", "dirty", "empty", "full", "round", "shiny",
     "metal", "silver", "ceramic", "red", "green", "blue", "yellow", "purple", "old", "new", "nice",
     "single", "lone", "only", "whole", "fresh", "ripe", "flat", "deep", "tall", "short", "grey", "gray",
     "plastic", "wooden", "glass", "other", "same", "very", "pretty", "dinner", "cereal", "soup", "coffee",
     "tea", "salad", "dessert", "silverware", "kitchen", "dear", "lovely", "favourite", "favorite"}
)  # fmt: skip
_CONNECTORS = frozenset({"and", "then", "also", "next", "afterwards", "afterward", "after", "plus",
                         "finally", "lastly", "first", "firstly", "second", "secondly", "later",
                         "subsequently", "thereafter", "following", "before", "while", "once"})  # fmt: skip
_REFERENCE_NOUNS = frozenset({"thing", "object", "item", "stuff", "one", "whatever", "something", "what",
                              "piece", "contents", "objects", "items"})  # fmt: skip
_REFERENCE_LINKS = frozenset({"that", "which", "is", "sitting", "lying", "resting", "placed", "currently",
                              "now", "located", "standing", "sits", "lies", "rests", "there", "right",
                              "found", "kept", "stored", "at", "present", "on", "in"})  # fmt: skip
_REFERENCE_PREPOSITIONS = frozenset({"in", "on", "at", "from", "inside", "within", "off", "upon", "of"})
_RELATIONS = frozenset({"where", "next", "beside", "besides", "near", "nearby", "alongside", "swap",
                        "switch", "exchange", "trade", "replace", "together", "join", "same", "with",
                        "by", "adjacent", "close", "around", "holds", "hold", "contains", "containing",
                        "has", "zone", "area", "region", "spot", "swapped", "switched",
                        "exchanged"})  # fmt: skip
#: Words for "next to", read as "next to" by the planner network.
_NEXT_TO = frozenset({"beside", "besides", "alongside", "near", "nearby", "adjacent"})
_TO = frozenset({"to", "into", "onto", "toward", "towards", "in", "on", "at", "by", "over", "beside",
                 "near", "next", "with", "unto", "until", "till"})  # fmt: skip

_FUNCTION_WORDS = (
    "a about above across after afterwards afterward again all along also am an and another any are "
    "around as at away back be because been before being below beside besides between both but by "
    "can could did do does doing done down during each either else even ever every everything for from "
    "had has have having he her here hers him his how i if in inside instead into is it its itself just "
    "last let like me mine more most much must my myself need next no nor not now of off on once one "
    "only onto or other our out over own quite rather same shall she should since so some something "
    "such than that the their them then there these they this those though through thus till to too "
    "toward towards under until up upon us very was we were what whatever when where whether which while "
    "who whom whose why will with within without would yes yet you your yours u ur sure thing things "
    "object objects item items stuff time want wants goes go going gets get got make sure end ends up "
    "belongs belong sits lies lying sitting resting located standing should needs needed current "
    "currently present kept stored found possible appreciate mind chance favour favor kind dear ahead "
    "try let us over together both pair two first second third finally lastly later subsequently "
    "thereafter following followed once well ok okay oh please thanks thank cheers hey hi hello robot "
    "also plus sep whoever anything nothing none never cancel stop halt abort undo where it they them "
    "there here fine good great hold hand"
)
#: Every word galley reads as itself (besides the scene's names).
LEXICON = frozenset(
    set(_FUNCTION_WORDS.split()) | ZONE_WORDS | MOVE_VERBS | OTHER_VERBS | UNSUPPORTED_VERBS | _NEGATIONS
    | FILLER | _WH | _AUX | COLOURS | _DETERMINERS | GENERIC | _ADJECTIVES | _CONNECTORS | _REFERENCE_NOUNS
    | _REFERENCE_LINKS | _REFERENCE_PREPOSITIONS | _RELATIONS | _TO
)  # fmt: skip

#: The words a typo is corrected towards (besides the scene's names). Short words are left out, but
#: for a few common ones: "cap" must not become "can", nor "spoon" "soon".
CORRECTABLE = frozenset(
    {w for w in LEXICON if len(w) >= 4} - {"soon", "real"}
    | {"the", "and", "put", "get", "set", "places", "zones"}
)

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


def _scene_words(scene: Scene) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(scene.object_names), frozenset(scene.zone_names)


def _known(word: str) -> bool:
    """A lexicon word, or its plural."""
    return word in LEXICON or (word.endswith("s") and word[:-1] in LEXICON)


@lru_cache(maxsize=4096)
def _correct(word: str, names: frozenset[str]) -> str:
    """``word``, or the one scene name / lexicon word one edit away (names win a tie)."""
    if word in names or _known(word) or not word.isalpha():
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


def _near_known(word: str) -> bool:
    """Whether ``word`` is one edit from several lexicon words (a typo that cannot be resolved)."""
    return any(_one_edit(word, w) for w in CORRECTABLE)


def read(text: str, scene: Scene) -> Reading:
    """The tokens of ``text``: lower case, contractions spelt out, typos corrected (see the module doc)."""
    clean = text.lower().replace("’", "'").replace("—", ",").replace("–", ",")
    for pattern, replacement in _CONTRACTIONS:
        clean = re.sub(pattern, replacement, clean)
    objects, zones = _scene_words(scene)
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


def _drop_phrases(tokens: Sequence[str], phrases: Sequence[tuple[str, ...]]) -> tuple[list[str], bool]:
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
        if word in _REFERENCE_NOUNS:
            j = i + 1
            while (
                j < len(tokens) and tokens[j] in _REFERENCE_LINKS and tokens[j] not in _REFERENCE_PREPOSITIONS
            ):
                j += 1
            if j < len(tokens) and tokens[j] in _REFERENCE_PREPOSITIONS:
                k = j + 1
                if k < len(tokens) and tokens[k] in ("the", "that"):
                    k += 1
                if k < len(tokens) and tokens[k] in zones:
                    end = k + 1
                    if end < len(tokens) and tokens[end] in ZONE_WORDS:
                        end += 1
                    start = i - 1 if i > 0 and tokens[i - 1] in _DETERMINERS else i
                    spans.append((start, end, tokens[k]))
                    i = end
                    continue
        if word in zones and i + 1 < len(tokens):
            k = i + 1
            if tokens[k] in ZONE_WORDS and tokens[k] not in ("place",):
                k += 1
            if k < len(tokens) and tokens[k] in _REFERENCE_NOUNS - {"one", "what"} and k > i + 1:
                start = i - 1 if i > 0 and tokens[i - 1] in _DETERMINERS else i
                spans.append((start, k + 1, word))
                i = k + 1
                continue
        i += 1
    return spans


def _content(tokens: Sequence[str]) -> list[str]:
    """Tokens without politeness, filler and punctuation."""
    words, _ = _drop_phrases(tokens, _REQUEST_PHRASES)
    return [t for t in words if t.isalpha() and t not in FILLER]


def _clauses(tokens: Sequence[str]) -> list[list[str]]:
    """Tokens split at punctuation and connectors, each clause without leading filler."""
    clauses: list[list[str]] = [[]]
    for token in tokens:
        if not token.isalnum() or token in _CONNECTORS:
            clauses.append([])
        elif token not in FILLER or clauses[-1]:
            clauses[-1].append(token)
    return [c for c in clauses if c]


def refusal(text: str, scene: Scene) -> tuple[str, str] | None:  # noqa: PLR0912 -- one rule each
    """Why the scene cannot ground ``text``: (kind, reason), or None when it is in scope.

    Kinds: ``out_of_scope`` (a negation or a request for nothing, a question, an action other
    than moving objects between zones, nothing named to move, nowhere named to move it) and
    ``unknown_name`` (an object or zone the scene lacks). Reasons name the input and say what
    galley can do instead.
    """
    objects, zones = _scene_words(scene)
    reading = read(text, scene)
    tokens, request = _drop_phrases(reading.tokens, _REQUEST_PHRASES)
    quoted = f"{' '.join(text.split())!r}"
    example = "e.g. 'Move the bowl to the green zone.'"
    can = f"galley moves the scene's objects ({', '.join(scene.object_names)}) between its zones"
    names = f"objects: {', '.join(scene.object_names)}; zones: {', '.join(scene.zone_names)}"
    words = [t for t in tokens if t.isalpha()]
    negation = next((w for w in words if w in _NEGATIONS), None)
    phrase = next(
        (p for p in _NEGATION_PHRASES for i in range(len(words)) if tuple(words[i : i + len(p)]) == p), None
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
    modal = first in _MODALS and any(_verb_stem(w) in MOVE_VERBS | OTHER_VERBS for w in content[1:])
    request = request or (modal and any(w in zones for w in content))
    spans = location_references(tokens, scene)
    subject = bool(spans) and not ends_with_question and spans[0][0] <= tokens.index(first)
    if (
        not request
        and not subject
        and (first in _WH or first in _AUX - {"have", "do"} or (ends_with_question and not action_first))
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
            and word not in zones
            and (after in ZONE_WORDS or after in ("", "and", "then") or before in ("to", "into", "onto"))
        ):
            return "unknown_name", f"{quoted}: scene {scene.name!r} has no {word!r} zone; {names}"
        if after in ("zone", "area", "region") and word not in zones | LEXICON:
            return "unknown_name", f"{quoted}: scene {scene.name!r} has no {word!r} zone; {names}"
        if word in _DETERMINERS:
            j = i + 1
            while j < len(words) and words[j] in _ADJECTIVES and words[j] not in objects | zones:
                if j + 1 < len(words) and words[j + 1] in ZONE_WORDS:
                    break  # "the red zone": the colour names the zone
                j += 1
            noun = words[j] if j < len(words) else ""
            if noun and noun not in objects | zones and not _known(noun) and not _near_known(noun):
                return "unknown_name", f"{quoted}: scene {scene.name!r} has no object {noun!r}; {names}"
    for clause in _clauses(tokens):
        head = clause[0]
        targeted = any(w in _TO for w in clause) and any(w in zones for w in clause)
        if head in UNSUPPORTED_VERBS:
            return "out_of_scope", f"{quoted}: galley cannot {head!r}; {can}, {example}"
        unknown = not _known(head) and head not in objects | zones and not _near_known(head)
        if unknown and len(clause) > 1 and not targeted:
            return "out_of_scope", f"{quoted}: galley does not know the action {head!r}; {can}, {example}"
    mentioned = [w for w in words if w in objects]
    if not mentioned and not spans:
        return "out_of_scope", f"{quoted} names none of the scene's objects; {can} ({names}), {example}"
    target = any(w in zones for w in words) or any(w in _RELATIONS for w in words)
    target = target or any(
        w in objects and (words[i - 1] in _TO or (words[i - 1] == "the" and i > 1 and words[i - 2] in _TO))
        for i, w in enumerate(words)
        if i > 0
    )
    if not target:
        return "out_of_scope", (
            f"{quoted} says nowhere to put {mentioned[0] if mentioned else 'it'}: name a zone "
            f"({', '.join(scene.zone_names)}) or another object to put it beside, {example}"
        )
    return None


def _verb_stem(word: str) -> str:
    """The verb of an inflected form ("moving", "placed", "puts" -> "move", "place", "put"), or ``word``."""
    if word == "places":
        return word  # "swap places"
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            for candidate in (stem, stem + "e", stem[:-1]):
                if candidate in MOVE_VERBS:
                    return candidate
    return word


def canonical(text: str, scene: Scene, where: Mapping[str, str] | None = None) -> str:  # noqa: PLR0912
    """The instruction as galley's planner network reads it (see the module docstring).

    Args:
        where: zone -> the object that lies in it (from the image); resolves location references
            ("the thing in the red zone" -> "the apple"). Without it they stay as written.
    """
    objects, zones = _scene_words(scene)
    tokens, _ = _drop_phrases(read(text, scene).tokens, _REQUEST_PHRASES)
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
        elif (
            token in _NEXT_TO or (token == "by" and before == "over") or (token == "close" and after == "to")
        ):
            if before == "over":
                out.pop()
            out += ["next", "to"]
            if after == "to":
                skip_to = True
        elif token == "to" and skip_to:
            skip_to = False
        elif token in ZONE_WORDS and before == "zone":
            continue  # "green area" -> "green zone"
        elif token in zones:
            if after in objects:
                continue  # "the red apple": the object's colour, not a zone
            if before in objects:
                out.append("to")  # telegraphic "bowl green": the zone is where the object goes
            out += [token, "zone"]
        elif _verb_stem(token) in MOVE_VERBS and not (token == "place" and before in zones):
            out.append("move")
        else:
            out.append(token)
    while out and out[-1] == "sep":
        out.pop()
    return " ".join(out)
