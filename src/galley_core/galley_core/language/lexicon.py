"""galley's lexicon: the words its instruction reader knows, by what they do in an instruction.

Word sets for :mod:`galley_core.language.reading` (reading, typo correction, the planner network's
canonical text) and :mod:`galley_core.language.refusal` (what galley refuses). :data:`LEXICON` is every
word galley reads as itself besides the scene's names; :data:`CORRECTABLE` the words a typo is
corrected towards.
"""

from __future__ import annotations

__all__ = [
    "ADJECTIVES",
    "AUX",
    "COLOURS",
    "CONNECTORS",
    "CORRECTABLE",
    "DETERMINERS",
    "FILLER",
    "GENERIC",
    "LEXICON",
    "MODALS",
    "MOVE_VERBS",
    "NEGATIONS",
    "NEGATION_PHRASES",
    "NEXT_TO",
    "OTHER_VERBS",
    "REFERENCE_LINKS",
    "REFERENCE_NOUNS",
    "REFERENCE_PREPOSITIONS",
    "RELATIONS",
    "REQUEST_PHRASES",
    "TO",
    "UNSUPPORTED_VERBS",
    "WH",
    "ZONE_WORDS",
    "is_word",
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
NEGATIONS = frozenset({"not", "never", "nothing", "none", "nobody", "neither", "nor", "cancel", "stop",
                        "halt", "nevermind", "abort", "no", "undo"})  # fmt: skip
NEGATION_PHRASES = (
    ("as", "it", "is"), ("as", "they", "are"), ("where", "it", "is"), ("where", "they", "are"),
    ("leave", "everything"), ("leave", "it", "all"), ("leave", "things"), ("keep", "everything"),
    ("stay", "put"), ("forget", "it"), ("never", "mind"), ("all", "done"), ("as", "is"),
)  # fmt: skip
#: Phrases that make a request polite; dropped before reading (so "can you" is no question).
REQUEST_PHRASES = (
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
WH = frozenset({"what", "where", "which", "who", "whom", "whose", "why", "how", "when"})
MODALS = frozenset({"can", "could", "would", "will", "shall", "may", "might"})
AUX = frozenset({"is", "are", "am", "was", "were", "does", "did", "do", "has", "have", "should", "shall",
                  "may", "might", "must", "can", "could", "would", "will"})  # fmt: skip
COLOURS = frozenset(
    {"red", "green", "blue", "yellow", "purple", "orange", "pink", "white", "black", "brown", "grey",
     "gray", "cyan", "teal", "violet", "magenta", "gold", "golden", "silver", "beige", "maroon", "navy",
     "lime", "turquoise", "indigo", "lilac", "crimson", "scarlet", "olive", "tan", "amber", "lavender"}
)  # fmt: skip
DETERMINERS = frozenset({"the", "a", "an", "that", "this", "these", "those", "my", "your", "our", "some",
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
ADJECTIVES = frozenset(
    {"little", "small", "big", "large", "tiny", "white", "clean", "dirty", "empty", "full", "round", "shiny",
     "metal", "silver", "ceramic", "red", "green", "blue", "yellow", "purple", "old", "new", "nice",
     "single", "lone", "only", "whole", "fresh", "ripe", "flat", "deep", "tall", "short", "grey", "gray",
     "plastic", "wooden", "glass", "other", "same", "very", "pretty", "dinner", "cereal", "soup", "coffee",
     "tea", "salad", "dessert", "silverware", "kitchen", "dear", "lovely", "favourite", "favorite"}
)  # fmt: skip
CONNECTORS = frozenset({"and", "then", "also", "next", "afterwards", "afterward", "after", "plus",
                         "finally", "lastly", "first", "firstly", "second", "secondly", "later",
                         "subsequently", "thereafter", "following", "before", "while", "once"})  # fmt: skip
REFERENCE_NOUNS = frozenset({"thing", "object", "item", "stuff", "one", "whatever", "something", "what",
                              "piece", "contents", "objects", "items"})  # fmt: skip
REFERENCE_LINKS = frozenset({"that", "which", "is", "sitting", "lying", "resting", "placed", "currently",
                              "now", "located", "standing", "sits", "lies", "rests", "there", "right",
                              "found", "kept", "stored", "at", "present", "on", "in"})  # fmt: skip
REFERENCE_PREPOSITIONS = frozenset({"in", "on", "at", "from", "inside", "within", "off", "upon", "of"})
RELATIONS = frozenset({"where", "next", "beside", "besides", "near", "nearby", "alongside", "swap",
                        "switch", "exchange", "trade", "replace", "together", "join", "same", "with",
                        "by", "adjacent", "close", "around", "holds", "hold", "contains", "containing",
                        "has", "zone", "area", "region", "spot", "swapped", "switched",
                        "exchanged"})  # fmt: skip
#: Words for "next to", read as "next to" by the planner network.
NEXT_TO = frozenset({"beside", "besides", "alongside", "near", "nearby", "adjacent"})
TO = frozenset({"to", "into", "onto", "toward", "towards", "in", "on", "at", "by", "over", "beside",
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
    "there here fine good great hold hand able willing wanna free ready wonder wondering think suppose "
    "way love trouble rush hurry worry whenever unless wherever vice versa round interchange reverse change "
    "places spots positions sides transpose invert permute crisscross"
)
#: Every word galley reads as itself (besides the scene's names).
LEXICON = frozenset(
    set(_FUNCTION_WORDS.split()) | ZONE_WORDS | MOVE_VERBS | OTHER_VERBS | UNSUPPORTED_VERBS | NEGATIONS
    | FILLER | WH | AUX | COLOURS | DETERMINERS | GENERIC | ADJECTIVES | CONNECTORS | REFERENCE_NOUNS
    | REFERENCE_LINKS | REFERENCE_PREPOSITIONS | RELATIONS | TO
)  # fmt: skip

#: The words a typo is corrected towards (besides the scene's names). Short words are left out, but
#: for a few common ones: "cap" must not become "can", nor "spoon" "soon".
CORRECTABLE = frozenset(
    {w for w in LEXICON if len(w) >= 4} - {"soon", "real"}
    | {"the", "and", "put", "get", "set", "places", "zones", "spots", "positions"}
)


def is_word(token: str) -> bool:
    """Whether a reading token is a word (not punctuation): a scene name of several words is one token."""
    return token.replace(" ", "").isalnum()
