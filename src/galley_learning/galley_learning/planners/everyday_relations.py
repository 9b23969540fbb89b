"""Everyday swaps and "next to" requests: a dev set of requests that relate two objects.

Written apart from galley's training grammar (``phrasing.py``) and from :mod:`.everyday`, from
how people ask a household robot to exchange two things ("switch the bowl and the cup", "the cup
goes where the bowl is and vice versa", "bowl <-> cup", "could the fork and the plate change
places?") and to put one thing by another ("put the apple by the bowl", "the fork should go with
the plate", "wherever the cup is, put the spoon there too", "next to the bowl: the apple"): plain,
terse, polite, misspelt, the other object first, and in chains with a plain relocation. Dev data
only: nothing trains on it.

:func:`relations_set` draws one request per episode seed; an entry's template is ``style/kind``
with kind ``replace`` (a swap) or ``to_object`` (next to another object).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from galley_core.scene import Scene
from galley_core.tasks.suite import SuiteEntry
from galley_learning.planners.everyday import dev_entries, misspell

KINDS = ("replace", "to_object")
STYLES = ("plain", "polite", "terse", "other_first", "typo", "chain")

_SWAP = {
    "plain": ("switch {A} and {B}", "swap {A} and {B} around", "{A} and {B} trade places",
              "exchange the spots of {A} and {B}", "{A} goes where {B} is and vice versa",
              "put {A} and {B} the other way round", "swap the positions of {A} and {B}",
              "{A} and {B} should change places", "move {A} to where {B} is, and {B} to where {A} was",
              "trade {A} for {B}", "reverse {A} and {B}", "flip the places of {A} and {B}",
              "interchange {A} and {B}", "{A} and {B} need to swap spots", "switch over {A} and {B}",
              "put {A} in {B}'s place and {B} in {A}'s", "move {A} to {B}'s zone and bring {B} back",
              "{A} to {B}'s spot and the other way round", "transpose {A} and {B}"),
    "polite": ("could {A} and {B} change places?", "would you mind switching {A} and {B} round?",
               "can you swap {A} with {B} for me please", "please exchange {A} and {B}, thanks",
               "i'd like {A} and {B} to swap places if that's ok",
               "could you trade the places of {A} and {B}?",
               "would you be able to switch {A} and {B}?", "mind swapping over {A} and {B}?",
               "could you put {A} and {B} the other way around please?"),
    "terse": ("{a} <-> {b}", "swap {a} {b}", "{a}/{b} swap", "switch {a}, {b}", "{a} <> {b}",
              "swap: {a} & {b}", "{a} and {b}: swap", "{a} for {b}, swap", "{a} ⇄ {b}",
              "swap {a}+{b} pls", "exchange {a} {b}"),
    "other_first": ("with {B}, swap {A}", "{A} and {B}, could they switch places?",
                    "the places of {A} and {B}: swap them", "{A}? swap it with {B}",
                    "where {B} is, put {A}, and {B} where {A} was", "{A} - switch it with {B}",
                    "{A} and {B}, switch them round", "where {B} is, put {A}, and where {A} is, put {B}",
                    "swap them: {A} and {B}", "{B}'s place is for {A}, and {A}'s for {B}"),
}  # fmt: skip
_NEAR = {
    "plain": ("put {A} by {B}", "{A} should go with {B}", "wherever {B} is, put {A} there too",
              "next to {B}: {A}", "move {A} beside {B}", "{A} goes next to {B}", "set {A} down near {B}",
              "put {A} alongside {B}", "take {A} over to {B}", "place {A} with {B}",
              "bring {A} to {B}'s zone", "move {A} to the same spot as {B}", "{A} belongs with {B}",
              "put {A} in with {B}", "move {A} over to where {B} is", "group {A} with {B}",
              "put {A} together with {B}", "keep {A} next to {B}", "stick {A} by {B}",
              "put {A} close to {B}", "{A} should sit beside {B}", "move {A} to {B}",
              "put {A} where {B} is sitting", "{A} to wherever {B} is"),
    "polite": ("could you put {A} next to {B}?", "would you mind moving {A} by {B}?",
               "i'd like {A} near {B}, please", "can you bring {A} over to {B} for me?",
               "please put {A} beside {B}, thanks", "could {A} go next to {B}?",
               "would you be able to put {A} with {B}?", "could you move {A} so it's next to {B}?"),
    "terse": ("{a} by {b}", "{a} next to {b}", "{a} -> {b}", "{a} beside {b} pls", "{a} near {b}!",
              "{a} with {b}", "{a} => next to {b}", "{a} to {b}", "{a}: next to {b}", "{a} @ {b}"),
    "other_first": ("next to {B}, put {A}", "by {B}: {A} please", "beside {B} i want {A}",
                    "where {B} is, that's where {A} goes", "{B} needs {A} next to it",
                    "near {B}, place {A}", "to {B}, bring {A}", "wherever {B} is, {A} goes there too",
                    "{B}'s zone is where {A} should go", "{B}: put {A} next to it"),
}  # fmt: skip
_ZONE = ("{z}", "the {z} zone", "the {z} area", "the {z} spot")
_CHAIN = ("{R}, then {C}", "{C} and then {R}", "first {R}. after that {C}", "{R}; {C}", "{C}, and {R}",
          "{R} and also {C}")  # fmt: skip


def relation_request(
    start: dict[str, str], zones: Sequence[str], rng: random.Random, style: str, kind: str
) -> tuple[str, list[tuple[str, str]]]:
    """A request in ``style`` of ``kind``: (text, relocations, in order)."""
    a, b, c = rng.sample(sorted(start), 3)
    pool = _SWAP if kind == "replace" else _NEAR
    form = style if style in pool else "plain"
    template = rng.choice(pool[form])
    text = template.format(A=f"the {a}", B=f"the {b}", a=a, b=b)
    relocations = [(a, start[b]), (b, start[a])] if kind == "replace" else [(a, start[b])]
    if style == "typo":
        text = misspell(text, rng, all_edits=True)
    if style == "chain":
        free = [z for z in zones if z != start[c]]
        zone = rng.choice(free)
        chain = rng.choice(_CHAIN)
        other = f"{rng.choice(('put', 'move', 'take'))} the {c} to {rng.choice(_ZONE).format(z=zone)}"
        text = chain.format(R=text, C=other)
        first_other = chain.index("{C}") < chain.index("{R}")
        relocations = [(c, zone), *relocations] if first_other else [*relocations, (c, zone)]
    return text, relocations


def relations_set(scene: Scene, seeds: Sequence[int], *, seed: int) -> list[SuiteEntry]:
    """One swap or next-to request per episode seed; the entry's template is ``style/kind``."""
    return dev_entries(
        scene, seeds, seed=seed, prefix="relations", styles=STYLES, kinds=KINDS, request=relation_request
    )
