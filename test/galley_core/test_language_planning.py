"""The planner interface's pure parts: prompts, input-dependent constraints, answer validation, retries."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from galley_core.language.planning import (
    PlanningError,
    Prompt,
    PromptConfig,
    TextPlanner,
    build_prompt,
    check_instruction,
    parse_answer,
    plan_gbnf,
    plan_json_schema,
    plan_regex,
    scene_description,
    select_examples,
)
from galley_core.scene import load_scene
from galley_core.tasks.grammar import InvalidPlanError, valid_steps
from galley_core.tasks.suite import load_suite

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kitchen():
    return load_scene(REPO / "config" / "scenes" / "kitchen.yaml")


@pytest.fixture(scope="module")
def suite():
    return load_suite(REPO / "config" / "suites" / "kitchen_v1.yaml")[1]


def test_json_schema_enumerates_exactly_the_scenes_valid_steps(kitchen):
    schema = plan_json_schema(kitchen, 6)
    items = schema["properties"]["plan"]
    assert items["items"]["enum"] == valid_steps(kitchen)
    assert (items["minItems"], items["maxItems"]) == (1, 6)
    assert schema["required"] == ["plan"] and schema["additionalProperties"] is False
    assert (
        "move to the purple zone" in items["items"]["enum"] and "pick the spoon" not in items["items"]["enum"]
    )


def test_regex_accepts_valid_plans_and_rejects_the_rest(kitchen):
    pattern = re.compile(plan_regex(kitchen, 4))
    ok = {"plan": ["move to the blue zone", "pick the bowl", "move to the green zone", "place the bowl"]}
    assert pattern.fullmatch(json.dumps(ok))
    assert pattern.fullmatch('{"plan":["pick the cup"]}')
    assert not pattern.fullmatch(json.dumps({"plan": ok["plan"] + ["pick the cup"]}))  # 5 > max 4
    assert not pattern.fullmatch(json.dumps({"plan": ["move to the orange zone"]}))
    assert not pattern.fullmatch(json.dumps({"plan": []}))


def test_gbnf_lists_every_valid_step_as_a_json_string_and_bounds_the_length(kitchen):
    grammar = plan_gbnf(kitchen, 3)
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines())
    assert set(rules) == {"root", "step", "ws"}
    alternatives = [json.loads(json.loads(a)) for a in rules["step"].split(" | ")]
    assert alternatives == valid_steps(kitchen)
    assert rules["root"].count("step") == 3


def test_answers_are_parsed_as_json_or_lines_and_validated_never_evaluated(kitchen):
    steps = ("move to the blue zone", "pick the bowl")
    assert (
        parse_answer('Sure! ```json\n{"plan": ["move to the blue zone", "pick the bowl"]}\n```', kitchen)
        == steps
    )
    assert parse_answer("1. Move to the blue zone\n2) pick the bowl,", kitchen) == steps
    with pytest.raises(InvalidPlanError, match="spoon"):
        parse_answer('{"plan": ["pick the spoon"]}', kitchen)
    with pytest.raises(InvalidPlanError, match="not a step"):
        parse_answer('__import__("os").system("true")', kitchen)
    with pytest.raises(InvalidPlanError, match="no steps"):
        parse_answer('{"plan": []}', kitchen)
    with pytest.raises(InvalidPlanError, match="more than max_steps"):
        parse_answer(json.dumps({"plan": ["pick the cup"] * 9}), kitchen, max_steps=8)


@pytest.mark.parametrize(
    ("instruction", "kind", "name"),
    [
        ("", "empty_instruction", ""),
        ("   ", "empty_instruction", ""),
        ("Move the spoon to the red zone.", "unknown_name", "spoon"),
        ("Put the cup in the orange zone.", "unknown_name", "orange"),
        ("Carry the kettle to red zone", "unknown_name", "kettle"),
    ],
)
def test_bad_instructions_fail_before_any_backend_with_the_valid_names(kitchen, instruction, kind, name):
    with pytest.raises(PlanningError) as err:
        check_instruction(instruction, kitchen)
    assert err.value.kind == kind and name in err.value.reason
    if kind == "unknown_name":
        assert "objects: apple, bowl, cup, fork, plate" in err.value.reason


def test_every_suite_instruction_passes_the_instruction_check(kitchen, suite):
    for entry in suite:
        assert check_instruction(entry.instruction, kitchen) == entry.instruction


def test_examples_come_from_the_train_split_with_their_scene_described(kitchen, suite):
    config = PromptConfig(examples=4)
    examples = select_examples("Move the bowl to the green zone.", suite, kitchen, config)
    train = {(e.instruction, e.plan) for e in suite if e.split == "train"}
    assert len(examples) == 4 and all((x.instruction, x.plan) in train for x in examples)
    assert len({x.instruction.split()[0] for x in examples}) >= 1
    first = next(e for e in suite if e.instruction == examples[0].instruction and e.split == "train")
    assert examples[0].description == scene_description(kitchen, first.seed)
    assert examples[0].description.count(" zone") == len(kitchen.objects)
    randomly = select_examples(
        "x", suite, kitchen, replace(config, example_selection="random", example_seed=3)
    )
    assert randomly == select_examples(
        "y", suite, kitchen, replace(config, example_selection="random", example_seed=3)
    )


def test_every_prompt_part_switches_off_for_the_table_ii_ablation(kitchen, suite):
    full = PromptConfig(examples=2)
    examples = select_examples("Move the bowl to the green zone.", suite, kitchen, full)
    prompt = build_prompt(
        "Move the bowl to the green zone.", kitchen, full, examples=examples, accepts_image=True
    )
    roles = [r for r, _ in prompt.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "move to the purple zone" in prompt.messages[-1][1] and prompt.image and prompt.constraints
    vanilla = replace(full, system_text=False, valid_steps=False, examples=0, image=False, constrained=False)
    bare = build_prompt(
        "Move the bowl to the green zone.", kitchen, vanilla, examples=examples, accepts_image=True
    )
    assert bare.messages == (("user", "Instruction: Move the bowl to the green zone."),)
    assert not bare.image and bare.constraints is None
    assert not build_prompt("x", kitchen, full, accepts_image=False).image


class Scripted(TextPlanner):
    """A text backend answering from a list (the validation loop is what is under test)."""

    name = "scripted"

    def __init__(self, answers: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.answers = answers
        self.prompts: list[Prompt] = []

    def generate(self, prompt: Prompt, top_down_image: Any, attempt: int) -> str:
        self.prompts.append(prompt)
        return self.answers[min(attempt, len(self.answers) - 1)]


def test_an_answer_off_the_grammar_is_retried_then_reported_with_no_plan(kitchen):
    good = json.dumps({"plan": ["move to the red zone", "pick the apple"]})
    planner = Scripted(["I would move the apple", good], prompt=PromptConfig(examples=0, retries=1))
    plan = planner.plan("Move the apple to the red zone.", None, kitchen)
    assert plan.steps == ("move to the red zone", "pick the apple") and plan.attempts == 2
    stubborn = Scripted(["pick the spoon"], prompt=PromptConfig(examples=0, retries=2))
    with pytest.raises(PlanningError) as err:
        stubborn.plan("Move the apple to the red zone.", None, kitchen)
    assert err.value.kind == "off_grammar" and "spoon" in err.value.reason and len(stubborn.prompts) == 3
