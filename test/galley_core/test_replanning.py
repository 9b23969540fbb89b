"""Replanning's context, scene-graph text and remaining plan (galley_core.tasks.replanning), no simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from galley_core.language.planning import PromptConfig, TextPlanner, build_prompt
from galley_core.scene import load_scene
from galley_core.tasks.replanning import (
    HELD,
    NOWHERE,
    EpisodeReplans,
    PlanContext,
    StepOutcome,
    goal_zones,
    locate_objects,
    remaining_plan,
    scene_graph_text,
)

REPO = Path(__file__).resolve().parents[2]
BOWL_TO_GREEN = ("move to the blue zone", "pick the bowl", "move to the green zone", "place the bowl")
TWO = (*BOWL_TO_GREEN, "move to the red zone", "pick the cup", "move to the yellow zone", "place the cup")


@pytest.fixture(scope="module")
def scene():
    return load_scene(REPO / "config" / "scenes" / "kitchen.yaml")


def context(scene, robot_zone="", **where):
    objects = {name: "purple" for name in scene.object_names} | where
    held = next((o for o, w in objects.items() if w == HELD), "")
    return PlanContext(
        "Move the bowl to the green zone", tuple(objects.items()), held=held, robot_zone=robot_zone
    )


def test_goal_zones_are_where_each_object_is_placed_last():
    assert goal_zones(TWO) == {"bowl": "green", "cup": "yellow"}


def test_an_object_knocked_back_into_its_zone_is_fetched_again(scene):
    steps = remaining_plan(BOWL_TO_GREEN, context(scene, robot_zone="green", bowl="blue"), scene)
    assert steps == BOWL_TO_GREEN


def test_a_held_object_is_only_carried_to_its_target(scene):
    steps = remaining_plan(BOWL_TO_GREEN, context(scene, robot_zone="blue", bowl=HELD), scene)
    assert steps == ("move to the green zone", "place the bowl")


def test_objects_already_at_their_target_need_nothing(scene):
    assert remaining_plan(BOWL_TO_GREEN, context(scene, bowl="green"), scene) == ()
    steps = remaining_plan(TWO, context(scene, robot_zone="green", bowl="green", cup="red"), scene)
    assert steps == ("move to the red zone", "pick the cup", "move to the yellow zone", "place the cup")


def test_a_moved_object_is_picked_from_where_it_is_now_and_the_robot_skips_a_drive_to_where_it_stands(scene):
    steps = remaining_plan(BOWL_TO_GREEN, context(scene, robot_zone="blue", bowl="yellow"), scene)
    assert steps == ("move to the yellow zone", "pick the bowl", "move to the green zone", "place the bowl")
    steps = remaining_plan(BOWL_TO_GREEN, context(scene, robot_zone="yellow", bowl="yellow"), scene)
    assert steps == ("pick the bowl", "move to the green zone", "place the bowl")


def test_the_held_object_goes_first_then_the_others(scene):
    steps = remaining_plan(TWO, context(scene, cup=HELD, bowl="blue"), scene)
    assert steps == ("move to the yellow zone", "place the cup", *BOWL_TO_GREEN)


def test_an_object_in_no_zone_or_an_unasked_held_one_cannot_be_planned(scene):
    with pytest.raises(ValueError, match="bowl lies in no zone"):
        remaining_plan(BOWL_TO_GREEN, context(scene, bowl=NOWHERE), scene)
    with pytest.raises(ValueError, match="holds the fork"):
        remaining_plan(BOWL_TO_GREEN, context(scene, fork=HELD), scene)


def test_locate_objects_reads_zones_from_positions(scene):
    blue = scene.zone("blue")
    positions = {
        "bowl": (blue.center[0] + 0.05, blue.center[1], blue.z),  # resting on the blue patch
        "cup": (blue.center[0], blue.center[1], blue.z + 0.2),  # above it: not resting
        "apple": (0.0, 0.0, 0.0),  # on the floor
    }
    where = dict(locate_objects(scene, positions, held="fork"))
    assert where == {"apple": NOWHERE, "bowl": "blue", "cup": NOWHERE, "fork": HELD, "plate": NOWHERE}


def test_the_context_survives_json_and_bad_json_names_the_fix(scene):
    c = PlanContext(
        "Move the bowl to the green zone",
        (("bowl", "blue"), ("cup", HELD)),
        held="cup",
        robot_zone="green",
        steps=(StepOutcome("move to the blue zone", True), StepOutcome("pick the bowl", False, "slipped")),
        failure="slipped",
        plan=BOWL_TO_GREEN,
        replan=1,
    )
    assert PlanContext.from_json(c.to_json()) == c
    with pytest.raises(ValueError, match=r"PlanContext\.to_json"):
        PlanContext.from_json('{"objects": {}}')


def test_the_scene_graph_text_lists_zones_robot_history_and_failure(scene):
    c = PlanContext(
        "Move the bowl to the green zone",
        (*((n, "red") for n in scene.object_names if n != "bowl"), ("bowl", NOWHERE)),
        robot_zone="green",
        steps=(StepOutcome("move to the blue zone", True), StepOutcome("pick the bowl", False, "not lifted")),
        failure="the bowl is not lifted",
        plan=BOWL_TO_GREEN,
    )
    text = scene_graph_text(c, scene)
    assert "- red zone: apple, cup, fork, plate" in text and "- green zone: (nothing)" in text
    assert "- in no zone: bowl" in text and "Robot: at the green zone, holding nothing." in text
    assert "1. move to the blue zone: succeeded" in text and "2. pick the bowl: FAILED (not lifted)" in text
    assert "Last failure: the bowl is not lifted" in text
    prompt = build_prompt(c.instruction, scene, PromptConfig(), context=c)
    assert text in prompt.messages[-1][1]
    assert text not in build_prompt(c.instruction, scene, PromptConfig()).messages[-1][1]


def test_episode_replans_count_and_stop_at_the_limit():
    book = EpisodeReplans(max_replans=1)
    book.start(BOWL_TO_GREEN)
    assert book.request([("move to the blue zone", True, 3.0, ""), ("pick the bowl", False, 1.0, "x")], "x")
    assert book.pending and not book.request([], "again")  # one at a time
    book.answered(BOWL_TO_GREEN)
    assert not book.request([], "again")  # the limit
    ctx = book.context("i", (("bowl", "blue"),), "blue")
    assert [s.step for s in ctx.steps] == ["move to the blue zone", "pick the bowl"] and ctx.failure == "x"
    assert EpisodeReplans(max_replans=0).request([], "x") is False


def test_every_text_backend_gets_the_scene_graph_in_its_prompt_when_replanning(scene):
    """llama_cpp, transformers and openai all plan through TextPlanner: the context reaches generate()."""

    class Capturing(TextPlanner):
        name = "capturing"
        prompts: list = []  # noqa: RUF012 (one test's record)

        def generate(self, prompt, top_down_image, attempt):
            self.prompts.append(prompt)
            return '{"plan": ["move to the green zone", "place the bowl"]}'

    c = context(scene, robot_zone="blue", bowl=HELD)
    planner = Capturing(prompt=PromptConfig(examples=0))
    assert planner.plan(c.instruction, None, scene, c).steps == ("move to the green zone", "place the bowl")
    assert scene_graph_text(c, scene) in planner.prompts[-1].messages[-1][1]
    planner.plan(c.instruction, None, scene)
    assert "Scene graph" not in planner.prompts[-1].messages[-1][1]
