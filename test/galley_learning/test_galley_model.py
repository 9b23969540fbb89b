"""galley's own planner: the shipped weights plan the suite from the image, decode under the grammar,
fail clearly, and retraining writes loadable weights reproducibly."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from galley_core.episode import sample_episode
from galley_core.tasks.grammar import valid_steps
from galley_core.tasks.planning import PlanningError
from galley_core.tasks.suite import plan_for_instruction
from galley_learning.planners.evaluate import evaluate_planner
from galley_learning.planners.galley_model import (
    DEFAULT_WEIGHTS,
    GalleyPlanner,
    greedy_decode,
    image_inputs,
    load_model,
    to_tensors,
)
from galley_learning.planners.galley_train import TrainConfig, train_planner


@pytest.fixture(scope="module")
def planner():
    return GalleyPlanner()


def test_shipped_weights_are_small_and_say_how_they_were_trained():
    assert DEFAULT_WEIGHTS.stat().st_size < 4_000_000
    record = json.loads(DEFAULT_WEIGHTS.with_suffix(".json").read_text())
    assert record["training"]["config"]["seed"] == 0 and record["vocabulary"]["scene"] == "kitchen"


def test_em_on_held_out_instructions_is_at_least_095_and_drops_when_the_image_is_blanked(
    planner, kitchen, suite, renderer
):
    seen = evaluate_planner(planner, kitchen, suite, splits=("test", "unseen"), renderer=renderer)
    assert seen["test"].count == 98 and seen["test"].em >= 0.95
    assert 0.0 < seen["unseen"].em <= 1.0  # held-out templates: reported, not promised
    blind = evaluate_planner(planner, kitchen, suite, splits=("test",), renderer=renderer, blank_image=True)
    assert blind["test"].em < seen["test"].em - 0.15  # without the image it cannot know where objects are


def test_the_plan_follows_the_objects_that_the_image_shows(planner, kitchen, renderer):
    instruction = "Move the cup to the zone that holds the plate."
    plans = set()
    for seed in (11, 12, 13):
        plan = planner.plan(instruction, renderer.render(seed), kitchen)
        _, gold = plan_for_instruction(instruction, kitchen, sample_episode(kitchen, seed))
        assert plan.steps == tuple(str(s) for s in gold)
        plans.add(plan.steps)
    assert len(plans) > 1  # different episodes, different plans: read from the image


def test_decoding_is_masked_to_the_allowed_steps(planner, kitchen, renderer):
    net, vocab = planner.net, planner.vocab
    image = renderer.render(5)
    gold = planner.plan("Move the bowl to the red zone.", image, kitchen).steps
    banned = gold[0]  # forbid the step the model wants most at the first position
    allowed = torch.tensor([s != banned for s in vocab.steps])
    glimpses, view = image_inputs(kitchen, image, net.config)
    g, v = to_tensors(glimpses[None], view[None])
    words = torch.tensor([vocab.encode("Move the bowl to the red zone.", net.config.max_words)])
    with torch.no_grad():
        memory, pad, _ = net.encode(words, g, v)
    steps = [vocab.steps[i] for i in greedy_decode(net, memory, pad, allowed)[0]]
    assert banned not in steps and steps and set(steps) <= set(valid_steps(kitchen))
    assert 1 <= len(steps) <= net.config.max_steps


@pytest.mark.parametrize(
    ("instruction", "image", "kind"),
    [
        ("", True, "empty_instruction"),
        ("Move the spoon to the red zone.", True, "unknown_name"),
        ("Move the cup to the orange zone.", True, "unknown_name"),
        ("Move the cup to the red zone.", False, "no_image"),
    ],
)
def test_bad_input_gives_a_reason_and_no_plan(planner, kitchen, renderer, instruction, image, kind):  # noqa: PLR0917
    with pytest.raises(PlanningError) as err:
        planner.plan(instruction, renderer.render(1) if image else None, kitchen)
    assert err.value.kind == kind


def test_a_scene_the_model_was_not_trained_on_is_refused(planner, kitchen, renderer):
    other = replace(kitchen, name="galley2", zones=kitchen.zones[:4])
    with pytest.raises(PlanningError) as err:
        planner.plan("Move the cup to the red zone.", renderer.render(1), other)
    assert err.value.kind == "model" and "galley train-planner --scene galley2" in err.value.reason


def test_training_writes_loadable_weights_and_is_reproducible(kitchen, suite, tmp_path):
    tiny = TrainConfig(episodes=12, instructions=48, epochs=1, batch_size=16, validation=16)
    lines: list[str] = []
    first = train_planner(kitchen, suite, config=tiny, out=tmp_path / "a.pt", progress=lines.append)
    train_planner(kitchen, suite, config=tiny, out=tmp_path / "b.pt", progress=lambda _: None)
    assert any("epoch 1/1" in line for line in lines) and any("rendered 12/12" in line for line in lines)
    assert first["samples"] == 48 and first["episodes"] <= 12
    a, b = torch.load(tmp_path / "a.pt"), torch.load(tmp_path / "b.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)
    _, vocab, record = load_model(tmp_path / "a.pt")
    assert record["config"]["instructions"] == 48 and vocab.steps[-1] == "<end>"
    blank = np.zeros((480, 640, 3), dtype=np.uint8)
    plan = GalleyPlanner(weights=tmp_path / "a.pt").plan("Move the cup to the red zone.", blank, kitchen)
    assert set(plan.steps) <= set(valid_steps(kitchen))
