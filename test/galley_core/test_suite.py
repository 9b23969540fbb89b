"""The instruction suite: 58 templates, >= 563 instructions, plans of 4 to 8 valid steps."""

from __future__ import annotations

from collections import Counter

import pytest

from galley_core.episode import sample_episode
from galley_core.scene import load_scene
from galley_core.tasks.grammar import InvalidPlanError, Step, parse_plan, validate_plan
from galley_core.tasks.suite import TEMPLATES, generate_suite, gold_plan, load_suite, plan_for_instruction


@pytest.fixture(scope="module")
def kitchen(request):
    return load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")


def test_gold_plans_skip_moves_to_where_the_robot_already_is():
    start = {"cup": "red", "bowl": "blue"}
    # Kitchen-R's example: remove the cup from red onto blue and put the bowl (on blue) there instead.
    plan = gold_plan([("cup", "blue"), ("bowl", "red")], start)
    assert plan == [
        Step("move", "red"),
        Step("pick", "cup"),
        Step("move", "blue"),
        Step("place", "cup"),
        Step("pick", "bowl"),
        Step("move", "red"),
        Step("place", "bowl"),
    ]


def test_the_committed_suite_is_what_the_generator_makes(request, kitchen):
    scene_name, entries = load_suite(request.config.rootpath / "config" / "suites" / "kitchen_v1.yaml")
    assert scene_name == "kitchen"
    assert entries == generate_suite(kitchen), "config/suites/kitchen_v1.yaml is stale: run `galley suite`"


def test_the_suite_matches_kitchen_rs_shape_and_every_plan_is_executable(kitchen):
    entries = generate_suite(kitchen)
    assert len(TEMPLATES) == 58 and len({t.id for t in TEMPLATES}) == 58
    assert len(entries) >= 563
    assert {len(e.plan) for e in entries} <= set(range(4, 9))
    splits = Counter(e.split for e in entries)
    assert splits["train"] > splits["test"] > 0 and splits["unseen"] > 0
    unseen_templates = {e.template for e in entries if e.split == "unseen"}
    assert not unseen_templates & {e.template for e in entries if e.split != "unseen"}
    for entry in entries:
        plan = parse_plan(entry.plan)
        validate_plan(plan, kitchen)
        episode = sample_episode(kitchen, entry.seed)
        where = {p.name: p.zone for p in episode.objects}
        holding, at = None, None
        for step in plan:  # the plan is physically consistent with the episode
            if step.action == "move":
                at = step.target
            elif step.action == "pick":
                assert holding is None and where[step.target] == at, entry.id
                holding = step.target
            else:
                assert holding == step.target, entry.id
                where[step.target], holding = at, None


def test_every_suite_instruction_is_understood_back_into_its_gold_plan(kitchen):
    for entry in generate_suite(kitchen):
        _, plan = plan_for_instruction(entry.instruction, kitchen, sample_episode(kitchen, entry.seed))
        assert [str(s) for s in plan] == list(entry.plan), entry.id


def test_the_readme_instruction_has_a_plan_in_episode_0(kitchen):
    episode = sample_episode(kitchen, 0)
    bowl = episode.placement("bowl").zone
    _, plan = plan_for_instruction("Move the bowl to the green zone", kitchen, episode)
    assert [str(s) for s in plan] == [
        f"move to the {bowl} zone",
        "pick the bowl",
        "move to the green zone",
        "place the bowl",
    ]


def test_instructions_outside_the_templates_or_the_episode_are_explained(kitchen):
    episode = sample_episode(kitchen, 0)
    with pytest.raises(InvalidPlanError, match="follows none of the suite's 58 templates"):
        plan_for_instruction("Dance in the kitchen.", kitchen, episode)
    with pytest.raises(InvalidPlanError, match="no object 'spoon'"):
        plan_for_instruction("Move the spoon to the red zone.", kitchen, episode)
    cup = episode.placement("cup").zone
    wrong = next(z for z in kitchen.zone_names if z != cup)
    with pytest.raises(InvalidPlanError, match=f"the cup is in the {cup} zone, not the {wrong} zone"):
        plan_for_instruction(f"Move the cup from the {wrong} zone to the {cup} zone.", kitchen, episode)
    with pytest.raises(InvalidPlanError, match="nothing to do"):
        plan_for_instruction(f"Move the cup to the {cup} zone.", kitchen, episode)
