"""The second phrase grammar's data: its kinds, its vocabulary, and every word it can produce.

Read by :mod:`galley_core.language.wording` (which words requests with it), :mod:`galley_core.language.typos`
(a typo must not yield one of :data:`GRAMMAR_WORDS`) and :mod:`galley_core.language.out_of_scope`;
:mod:`galley_core.language.phrasings` says what the grammar is for.
"""

from __future__ import annotations

__all__ = [
    "CLAUSE_CONNECTORS",
    "DROP_PHRASES",
    "ELIDING",
    "EPISODE_SEED_BASE",
    "GERUNDS",
    "GRAMMAR_WORDS",
    "LOCATION_REFS",
    "NEAR",
    "OUT_OF_SCOPE_KINDS",
    "PHRASING_KINDS",
    "PICK_VERBS",
    "PLAIN_VERBS",
    "POLITE_CLOSERS",
    "POLITE_MIND",
    "POLITE_OPENERS",
    "RELOCATION_KINDS",
    "SWAPS",
    "SYNONYM_VERBS",
    "SYNONYM_ZONE_WORDS",
    "TERSE_ARROWS",
    "TERSE_ZONE_WORDS",
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
PLAIN_VERBS: dict[str, tuple[str, ...]] = {
    "move": ("to", "over to", "into"),
    "put": ("in", "on", "into", "onto"),
    "take": ("to", "over to"),
    "bring": ("to", "over to"),
    "place": ("in", "on"),
    "set": ("on", "down in", "down on"),
    "carry": ("to", "over to"),
}
#: Less usual verbs for the same thing.
SYNONYM_VERBS: dict[str, tuple[str, ...]] = {
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
GERUNDS = {
    "move": "moving", "put": "putting", "take": "taking", "bring": "bringing", "place": "placing",
    "set": "setting", "carry": "carrying", "relocate": "relocating", "shift": "shifting",
    "transfer": "transferring", "haul": "hauling", "drop": "dropping", "stick": "sticking",
    "pop": "popping", "park": "parking", "shove": "shoving", "slide": "sliding", "lug": "lugging",
    "get": "getting", "deliver": "delivering", "stash": "stashing", "plonk": "plonking",
    "transport": "transporting", "reposition": "repositioning", "send": "sending", "leave": "leaving",
    "swap": "swapping", "switch": "switching", "exchange": "exchanging", "trade": "trading",
    "have": "having", "interchange": "interchanging", "let": "letting", "flip": "flipping",
}  # fmt: skip
SYNONYM_ZONE_WORDS = ("area", "spot", "region", "place", "section", "square", "patch", "space", "part")
#: Picking up, then putting down "it": one relocation told as two actions.
PICK_VERBS = ("pick up", "grab", "take", "lift", "fetch", "collect", "go get", "get hold of")
DROP_PHRASES: dict[str, tuple[str, ...]] = {
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
SWAPS = (
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
NEAR = ("next to {b}", "beside {b}", "where {b} is", "over by {b}", "alongside {b}", "near {b}")
#: References by location; {c} is the zone's colour, {w} a word for zone.
LOCATION_REFS = (
    "the thing in the {c} {w}",
    "whatever is on the {c} {w}",
    "the object sitting in the {c} {w}",
    "the item on the {c} {w}",
    "whatever's lying in the {c} {w}",
    "the one in the {c} {w}",
    "what's in the {c} {w}",
    "the stuff on the {c} {w}",
)

CLAUSE_CONNECTORS = (
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
ELIDING = frozenset({" and ", ", then ", " and then ", ", plus ", ", followed by ", " as well as ", " then "})

POLITE_OPENERS = (
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
POLITE_MIND = ("would you mind", "hey, would you mind", "um, do you mind", "robot, would you mind")
POLITE_CLOSERS = (
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

TERSE_ARROWS = (" -> ", " → ", " => ", " >> ", " --> ", " to ", " into ")
TERSE_ZONE_WORDS = ("", "", " zone", " area", " spot")


def _grammar_words() -> frozenset[str]:
    """Every word the grammar can produce: a typo must not turn one word into another of them."""
    texts = [
        *PLAIN_VERBS,
        *SYNONYM_VERBS,
        *GERUNDS.values(),
        *SYNONYM_ZONE_WORDS,
        *PICK_VERBS,
        *DROP_PHRASES,
        *SWAPS,
        *NEAR,
        *LOCATION_REFS,
        *CLAUSE_CONNECTORS,
        *POLITE_OPENERS,
        *POLITE_MIND,
        *POLITE_CLOSERS,
        "zone to into onto in on over down the a and then too as well also where was is it of",
    ]
    return frozenset(
        w for text in texts for w in "".join(c if c.isalpha() else " " for c in text.lower()).split()
    )


GRAMMAR_WORDS = _grammar_words()
