"""The transformers backend: tiny randomly initialised Hugging Face models with a real BPE tokenizer
trained here on the kitchen's words, so that only the scene's constraint can make their answers plans.

No hub access: the models are built in a temporary directory and loaded from it as a user's would be.
The planners run inline (``worker="inline"``) so that the tests can look at their inputs; one test
runs the backend in its default worker process, as the task_planner node does.
"""

from __future__ import annotations

import json
import shutil
import sys

import numpy as np
import pytest

from galley_core.language.planning import SYSTEM_TEXT, PlanningError, PromptConfig, build_prompt
from galley_core.tasks.grammar import valid_steps
from galley_learning.planners import make_planner
from galley_learning.planners.worker import PlannerProcess

pytest.importorskip("transformers", reason="transformers is not installed (requirements.txt; Python 3.11+)")
pytest.importorskip("llguidance", reason="llguidance is not installed (requirements.txt)")

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
INSTRUCTION = "Move the bowl to the green zone."


def tiny_text_config(tokenizer):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )


@pytest.fixture(scope="module")
def tokenizer(kitchen, suite):
    """A byte-level BPE tokenizer (600 tokens) trained on the prompt's words, with a ChatML template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    texts = [SYSTEM_TEXT, *valid_steps(kitchen)]
    texts += [e.instruction for e in suite] + [json.dumps({"plan": list(e.plan)}) for e in suite]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<|pad|>", "<|im_start|>", "<|im_end|>", "<image>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(texts, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|pad|>")
    tok.chat_template = CHATML
    return tok


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory, tokenizer) -> str:
    """A 2-layer Llama with random weights, saved as a model directory."""
    import torch
    from transformers import LlamaForCausalLM

    out = tmp_path_factory.mktemp("tiny_lm")
    torch.manual_seed(0)
    LlamaForCausalLM(tiny_text_config(tokenizer)).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return str(out)


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory, tokenizer) -> str:
    """A LLaVA (CLIP vision tower, 32x32 px, 8 px patches) with random weights and its processor."""
    import torch
    from transformers import CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    out = tmp_path_factory.mktemp("tiny_vlm")
    images = CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = LlavaProcessor(
        image_processor=images,
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # CLIP's class token, dropped by the "default" strategy
        image_token="<image>",
        chat_template=CHATML,
    )
    vision = CLIPVisionConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=tiny_text_config(tokenizer),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(0)
    LlavaForConditionalGeneration(config).save_pretrained(out)
    processor.save_pretrained(out)
    return str(out)


def test_the_scenes_schema_makes_a_random_model_answer_only_valid_steps(tiny_lm, kitchen):
    bare = PromptConfig(examples=0, retries=0)
    free = make_planner(
        "transformers",
        worker="inline",
        prompt=PromptConfig(examples=0, retries=0, constrained=False),
        options={"model_path": tiny_lm},
    )
    with pytest.raises(PlanningError) as err:  # unconstrained, the random model's text is no plan
        free.plan(INSTRUCTION, None, kitchen)
    assert err.value.kind == "off_grammar" and "nothing is executed" in err.value.reason

    planner = make_planner(
        "transformers", worker="inline", prompt=bare, options={"model_path": tiny_lm, "device": "cpu"}
    )
    assert planner.accepts_image is False
    plan = planner.plan(INSTRUCTION, None, kitchen)
    assert 1 <= len(plan.steps) <= 8 and set(plan.steps) <= set(valid_steps(kitchen))
    assert plan.raw == json.dumps({"plan": list(plan.steps)})  # the examples' exact JSON layout
    assert plan.backend == "transformers" and plan.attempts == 1
    short = make_planner(
        "transformers",
        worker="inline",
        prompt=PromptConfig(examples=0, max_steps=2),
        options={"model_path": tiny_lm},
    )
    assert 1 <= len(short.plan(INSTRUCTION, None, kitchen).steps) <= 2  # maxItems follows max_steps


def test_in_context_examples_and_a_text_only_model_ignore_the_image(tiny_lm, kitchen, suite):
    planner = make_planner(
        "transformers",
        worker="inline",
        prompt=PromptConfig(examples=2),
        suite=suite,
        options={"model_path": tiny_lm},
    )
    image = np.zeros((48, 64, 3), dtype=np.uint8)
    plan = planner.plan("Put the cup and the fork in the red zone.", image, kitchen)
    assert set(plan.steps) <= set(valid_steps(kitchen))


def test_a_vlm_gets_the_image_through_its_processor(tiny_vlm, kitchen):
    planner = make_planner(
        "transformers", worker="inline", prompt=PromptConfig(examples=0), options={"model_path": tiny_vlm}
    )
    assert planner.accepts_image is True
    image = np.random.default_rng(0).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    prompt = build_prompt(INSTRUCTION, kitchen, PromptConfig(examples=0), accepts_image=True)
    inputs = planner.inputs(prompt, image)
    assert tuple(inputs["pixel_values"].shape) == (1, 3, 32, 32)
    image_token = planner.tokenizer.convert_tokens_to_ids("<image>")
    assert int((inputs["input_ids"] == image_token).sum()) == 16  # one per 8 px patch
    plan = planner.plan(INSTRUCTION, image, kitchen)
    assert plan.steps and set(plan.steps) <= set(valid_steps(kitchen))
    blind = make_planner(
        "transformers",
        worker="inline",
        prompt=PromptConfig(examples=0),
        options={"model_path": tiny_vlm, "vision": False},
    )
    assert blind.accepts_image is False


def test_inputs_a_user_can_get_wrong_are_one_clear_line(tmp_path, tiny_lm):
    def reason(options):
        with pytest.raises(PlanningError) as err:
            make_planner("transformers", worker="inline", options=options)
        assert err.value.kind == "unavailable" and "\n" not in err.value.reason
        return err.value.reason

    assert "no model_path" in reason({})
    assert "no model directory" in reason({"model_path": str(tmp_path / "missing")})
    assert "no model directory" in reason({"model_path": "./models/missing"})  # not sent to the hub
    assert "no config.json" in reason({"model_path": str(tmp_path)})
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    assert "llama_cpp backend" in reason({"model_path": str(gguf)})
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "llama"}')
    assert "could not be loaded" in reason({"model_path": str(broken), "local_files_only": True})
    plain = tmp_path / "no_template"
    shutil.copytree(tiny_lm, plain)
    (plain / "chat_template.jinja").unlink()
    assert "no chat template" in reason({"model_path": str(plain)})
    if not __import__("torch").cuda.is_available():
        assert "set device to cpu" in reason({"model_path": tiny_lm, "device": "cuda"})
    with pytest.raises(ValueError, match="dtype"):
        make_planner("transformers", worker="inline", options={"model_path": tiny_lm, "dtype": "int3"})


def test_a_missing_library_is_named_with_the_install_command(monkeypatch, tiny_lm):
    monkeypatch.setitem(sys.modules, "llguidance", None)
    with pytest.raises(PlanningError) as err:
        make_planner("transformers", worker="inline", options={"model_path": tiny_lm})
    assert err.value.kind == "unavailable"
    assert "llguidance is missing" in err.value.reason and "pip install" in err.value.reason


def test_the_backend_plans_in_its_default_worker_process(tiny_lm, kitchen):
    planner = make_planner("transformers", prompt=PromptConfig(examples=0), options={"model_path": tiny_lm})
    try:
        assert isinstance(planner, PlannerProcess) and planner.accepts_image is False
        plan = planner.plan(INSTRUCTION, None, kitchen)
    finally:
        planner.close()
    assert 1 <= len(plan.steps) <= 8 and set(plan.steps) <= set(valid_steps(kitchen))
