"""Swaps and "next to" requests in everyday wording: reading, resolving and (not) refusing them."""

from __future__ import annotations

from pathlib import Path

import pytest

from galley_core.language.planning import PlanningError, check_instruction
from galley_core.language.reading import canonical, canonical_tokens
from galley_core.language.relations import Relation, relations, resolve
from galley_core.scene import load_scene

REPO = Path(__file__).resolve().parents[2]
#: Where each object lies in the examples below.
AT = {"apple": "red", "bowl": "green", "cup": "blue", "fork": "yellow", "plate": "purple"}


@pytest.fixture(scope="module")
def kitchen():
    return load_scene(REPO / "config" / "scenes" / "kitchen.yaml")


def _read(text, scene):
    return relations(canonical_tokens(text, scene), scene)


SWAPS = {
    "verbs of exchange": ["switch the bowl and the cup", "Interchange the bowl and the cup",
                          "reverse the bowl and the cup", "trade the bowl for the cup",
                          "replace the bowl with the cup", "flip the places of the bowl and the cup"],
    "reciprocal forms": ["the bowl and the cup trade places", "could the bowl and the cup change places?",
                         "put the bowl and the cup the other way round",
                         "exchange their spots: the bowl, the cup",
                         "the bowl and the cup should take each other's place",
                         "swap the bowl and the cup around"],
    "symbols": ["swap them: the bowl and the cup", "transpose the bowl and the cup",
                "bowl <-> cup", "bowl <> cup", "bowl ⇄ cup", "bowl/cup swap", "swap bowl cup"],
    "crossed placements": ["the bowl goes where the cup is and vice versa",
                           "move the bowl to where the cup is, and the cup to where the bowl was",
                           "put the bowl in the cup's place and the cup in the bowl's",
                           "move the bowl to the cup's zone and bring the cup back to where the bowl was",
                           "put the bowl in place of the cup and vice versa",
                           "move the bowl to the cup's zone and bring the cup back",
                           "the bowl to the cup's spot and the other way round",
                           "where the cup is, put the bowl, and where the bowl is, put the cup",
                           "the cup's place is for the bowl, and the bowl's for the cup"],
    "zones said with the objects": ["swap the bowl in the green zone with the cup in the blue zone"],
    "word orders": ["with the cup, swap the bowl", "the bowl - switch it with the cup",
                    "the bowl and the cup, could they switch places?", "the bowl? swap it with the cup",
                    "the places of the bowl and the cup: swap them"],
    "typos": ["swithc the bowl and the cup", "the bowl and the cup shoudl change places",
              "the bowl goes where the cup is and vice vera"],
}  # fmt: skip


@pytest.mark.parametrize("text", [t for texts in SWAPS.values() for t in texts])
def test_swaps_are_read_by_verb_reciprocal_symbol_or_crossed_placements_in_any_order(kitchen, text):
    assert _read(text, kitchen) == [Relation("swap", "bowl", "cup")]
    assert check_instruction(text, kitchen)
    assert resolve(_read(text, kitchen), AT) == [("bowl", "blue"), ("cup", "green")]


NEAR = {
    "prepositions of place": ["put the apple by the bowl", "the apple should go with the bowl",
                              "move the apple beside the bowl", "set the apple down near the bowl",
                              "apple @ bowl", "apple -> bowl", "apple > bowl", "apple w/ bowl",
                              "take the apple over to the bowl",
                              "put the apple in with the bowl", "reunite the apple with the bowl"],
    "the other object's zone": ["bring the apple to the bowl's zone",
                                "move the apple to the same spot as the bowl",
                                "the apple to wherever the bowl is",
                                "put the apple where the bowl is sitting",
                                "move the apple to the zone that holds the bowl",
                                "the apple to the zone where the bowl sits"],
    "word orders": ["next to the bowl: the apple", "next to the bowl, put the apple",
                    "to the bowl, bring the apple",
                    "wherever the bowl is, put the apple there too", "the bowl needs the apple next to it",
                    "the bowl: put the apple next to it", "where the bowl is, that's where the apple goes",
                    "the bowl's zone is where the apple should go", "beside the bowl i want the apple"],
    "asked": ["could the apple go next to the bowl?", "would you be able to put the apple with the bowl?"],
    "pronouns and sources": ["pick up the apple and put it next to the bowl",
                             "take the apple out of the red zone and put it beside the bowl"],
}  # fmt: skip


@pytest.mark.parametrize("text", [t for texts in NEAR.values() for t in texts])
def test_next_to_requests_are_read_by_preposition_zone_of_the_other_object_and_word_order(kitchen, text):
    assert _read(text, kitchen) == [Relation("near", "apple", "bowl")]
    assert check_instruction(text, kitchen)
    assert canonical(text, kitchen, at=AT) == "move the apple to the green zone"


def test_chains_keep_their_order_and_next_to_reads_where_the_other_object_is_by_then(kitchen):
    text = "swap the bowl and the cup, then put the apple next to the bowl and the fork to red"
    found = _read(text, kitchen)
    assert found == [
        Relation("swap", "bowl", "cup"),
        Relation("near", "apple", "bowl"),
        Relation("to", "fork", "red"),
    ]
    # The bowl is in the blue zone once swapped: the apple goes there.
    assert resolve(found, AT) == [("bowl", "blue"), ("cup", "green"), ("apple", "blue"), ("fork", "red")]
    first = _read("move the plate to the yellow zone and switch over the bowl and the apple", kitchen)
    assert first == [Relation("to", "plate", "yellow"), Relation("swap", "bowl", "apple")]
    # A clause with its own target zone is no part of the relation before it.
    last = _read("the bowl to the cup's spot and the other way round and also the fork to red", kitchen)
    assert last == [Relation("swap", "bowl", "cup"), Relation("to", "fork", "red")]


@pytest.mark.parametrize(
    "text",
    ["swap the contents of the green and blue zones", "swap what's in the green area with the blue one"],
)
def test_a_swap_of_two_zones_swaps_the_objects_that_lie_in_them(kitchen, text):
    assert _read(text, kitchen) == [Relation("swap_zones", "green", "blue")]
    assert resolve(_read(text, kitchen), AT) == [("bowl", "blue"), ("cup", "green")]
    assert resolve(_read(text, kitchen), {**AT, "apple": "green"}) is None  # two objects in one zone


def test_a_relation_already_fulfilled_or_an_unknown_position_resolves_to_nothing(kitchen):
    assert resolve([Relation("near", "apple", "bowl")], {**AT, "apple": "green"}) is None
    assert resolve([Relation("swap", "apple", "bowl")], {"apple": "red"}) is None
    assert canonical("put the apple by the bowl", kitchen) == "move the apple next to the bowl"  # no image


@pytest.mark.parametrize(
    "text",
    ["move the bowl to the green zone and the cup to the red zone", "put the bowl and the cup together",
     "put the bowl and the cup in the green zone", "move the bowl to the green zone",
     "take the bowl from the red zone to the green zone"],
)  # fmt: skip
def test_requests_that_relate_no_two_objects_are_left_to_the_other_readers(kitchen, text):
    assert _read(text, kitchen) is None


@pytest.mark.parametrize(
    "text",
    ["is the cup next to the bowl?", "wash the cup next to the bowl", "don't put the bowl next to the cup",
     "where is the cup next to the bowl?", "could you tell me what is next to the cup?",
     "paint the bowl and the cup",
     "don't swap the bowl and the cup", "did you switch the bowl and the cup?"],
)  # fmt: skip
def test_questions_negations_and_other_actions_with_two_objects_stay_refused(kitchen, text):
    with pytest.raises(PlanningError) as err:
        check_instruction(text, kitchen)
    assert err.value.kind == "out_of_scope"
