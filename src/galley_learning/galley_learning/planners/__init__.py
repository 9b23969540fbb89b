"""Task planner backends behind :class:`galley_core.tasks.planning.Planner`, imported lazily by name.

``galley`` (the offline default, galley's own model), ``openai`` (OpenAI-compatible servers),
``llama_cpp`` (in-process GGUF under a GBNF grammar) and ``transformers`` (a local Hugging Face
LM or VLM in-process, decoding under the scene's JSON Schema through llguidance).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from galley_core.tasks.planning import Planner, PromptConfig
from galley_core.tasks.suite import SuiteEntry

__all__ = ["BACKENDS", "make_planner"]

BACKENDS = ("galley", "openai", "llama_cpp", "transformers")


def make_planner(
    backend: str,
    *,
    prompt: PromptConfig | None = None,
    suite: Sequence[SuiteEntry] = (),
    options: dict[str, Any] | None = None,
) -> Planner:
    """The planner of ``backend``.

    Args:
        backend: one of :data:`BACKENDS`.
        prompt: prompt parts and constraints (text backends; ``galley`` reads ``constrained`` only).
        suite: suite entries to draw in-context examples from (text backends).
        options: the backend's own settings: ``galley``: ``weights``; ``openai``: the fields of
            :class:`~galley_learning.planners.openai_backend.OpenAIConfig`; ``llama_cpp``: those of
            ``LlamaCppConfig``; ``transformers``: those of ``TransformersConfig``.

    Raises:
        ValueError: an unknown backend, naming the known ones.
    """
    options = dict(options or {})
    prompt = prompt or PromptConfig()
    if backend == "galley":
        from galley_learning.planners.galley_model import DEFAULT_WEIGHTS, GalleyPlanner

        return GalleyPlanner(
            weights=options.get("weights") or DEFAULT_WEIGHTS, constrained=prompt.constrained
        )
    if backend == "openai":
        from galley_learning.planners.openai_backend import OpenAIConfig, OpenAIPlanner

        return OpenAIPlanner(OpenAIConfig(**options), prompt=prompt, suite=suite)
    if backend == "llama_cpp":
        from galley_learning.planners.llama_cpp_backend import LlamaCppConfig, LlamaCppPlanner

        return LlamaCppPlanner(LlamaCppConfig(**options), prompt=prompt, suite=suite)
    if backend == "transformers":
        from galley_learning.planners.transformers_backend import TransformersConfig, TransformersPlanner

        return TransformersPlanner(TransformersConfig(**options), prompt=prompt, suite=suite)
    raise ValueError(f"no planner backend {backend!r}; backends: {', '.join(BACKENDS)}")
