from __future__ import annotations

import pytest

from galley_core.scene import load_scene
from galley_core.tasks.grammar import (
    InvalidPlanError,
    Step,
    format_step,
    parse_plan,
    parse_step,
    valid_steps,
    validate_plan,
)


@pytest.fixture(scope="module")
def kitchen(request):
    return load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")


def test_the_paper_example_round_trips():
    text = ["move to the blue zone", "pick the bowl", "move to the green zone", "place the bowl"]
    plan = parse_plan(text)
    assert plan == [Step("move", "blue"), Step("pick", "bowl"), Step("move", "green"), Step("place", "bowl")]
    assert [format_step(s) for s in plan] == text
    assert parse_step("  Move to the  Blue zone ") == Step("move", "blue")


@pytest.mark.parametrize("text", ["go to the blue zone", "pick bowl", "move to blue", "place the", ""])
def test_text_outside_the_grammar_is_rejected_with_the_forms(text):
    with pytest.raises(InvalidPlanError, match="'move to the <zone> zone'"):
        parse_step(text)


def test_validation_names_unknown_zones_and_objects(kitchen):
    validate_plan(parse_plan(["move to the red zone", "pick the cup"]), kitchen)
    with pytest.raises(InvalidPlanError, match=r"step 1 .*no object 'spoon'; objects: apple, bowl, cup"):
        validate_plan(parse_plan(["move to the red zone", "pick the spoon"]), kitchen)
    with pytest.raises(InvalidPlanError, match="no zone 'orange'; zones: red, green, blue, yellow, purple"):
        validate_plan([Step("move", "orange")], kitchen)


def test_valid_steps_cover_every_zone_and_object(kitchen):
    steps = valid_steps(kitchen)
    assert len(steps) == 5 + 5 + 5
    assert "move to the purple zone" in steps and "place the fork" in steps
    assert all(parse_step(s) for s in steps)
