"""Task planner backends behind :class:`galley_core.language.planning.Planner`, imported lazily by name.

``galley`` (the offline default, galley's own model), ``openai`` (OpenAI-compatible servers),
``llama_cpp`` (in-process GGUF under a GBNF grammar) and ``transformers`` (a local Hugging Face
LM or VLM in-process, decoding under the scene's JSON Schema through llguidance). The two backends
that run native model code (``llama_cpp``, ``transformers``) run in a worker process by default
(:mod:`galley_learning.planners.worker`), so that a crash or a hang there fails a plan, not the host.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from galley_core.language.planning import Planner, PromptConfig
from galley_core.tasks.suite import SuiteEntry
from galley_learning.planners.worker import PlannerProcess

__all__ = ["BACKENDS", "NATIVE_BACKENDS", "WORKER_MODES", "make_planner"]

BACKENDS = ("galley", "openai", "llama_cpp", "transformers")
#: Backends whose model code is native (llama.cpp, torch): a worker process by default.
NATIVE_BACKENDS = ("llama_cpp", "transformers")
#: Where a backend runs: ``auto`` (a worker process for :data:`NATIVE_BACKENDS`), ``process``, ``inline``.
WORKER_MODES = ("auto", "process", "inline")


def make_planner(
    backend: str,
    *,
    prompt: PromptConfig | None = None,
    suite: Sequence[SuiteEntry] = (),
    options: dict[str, Any] | None = None,
    worker: str = "auto",
    timeout_s: float = 300.0,
) -> Planner:
    """The planner of ``backend``.

    Args:
        backend: one of :data:`BACKENDS`.
        prompt: prompt parts and constraints (text backends; ``galley`` reads ``constrained`` only).
        suite: suite entries to draw in-context examples from (text backends).
        options: the backend's own settings: ``galley``: ``weights``; ``openai``: the fields of
            :class:`~galley_learning.planners.openai_backend.OpenAIConfig`; ``llama_cpp``: those of
            ``LlamaCppConfig``; ``transformers``: those of ``TransformersConfig``.
        worker: one of :data:`WORKER_MODES`: whether the backend runs in a worker process
            (:class:`~galley_learning.planners.worker.PlannerProcess`) or in this one.
        timeout_s: in a worker process, the longest one plan (or the backend's start) may take, s.

    Raises:
        ValueError: an unknown backend or worker mode, naming the known ones.
        PlanningError: the backend cannot start (``unavailable``, ``timeout``).
    """
    options = dict(options or {})
    prompt = prompt or PromptConfig()
    if worker not in WORKER_MODES:
        raise ValueError(f"no worker mode {worker!r}; modes: {', '.join(WORKER_MODES)}")
    if backend not in BACKENDS:
        raise ValueError(f"no planner backend {backend!r}; backends: {', '.join(BACKENDS)}")
    if worker == "process" or (worker == "auto" and backend in NATIVE_BACKENDS):
        factory = functools.partial(
            make_planner, backend, prompt=prompt, suite=tuple(suite), options=options, worker="inline"
        )
        return PlannerProcess(factory, backend=backend, timeout_s=timeout_s, start_timeout_s=timeout_s)
    # Each backend is imported only when asked for: each needs its own optional dependency.
    if backend == "galley":
        from galley_learning.planners.galley_planner import GalleyPlanner  # noqa: PLC0415 (optional: torch)

        return GalleyPlanner(
            weights=options.get("weights") or None,
            constrained=prompt.constrained,
            grounding=options.get("grounding") or "scene",
        )
    if backend == "openai":
        from galley_learning.planners.openai_backend import OpenAIConfig, OpenAIPlanner  # noqa: PLC0415 (deferred: httpx)

        return OpenAIPlanner(OpenAIConfig(**options), prompt=prompt, suite=suite)
    if backend == "llama_cpp":
        from galley_learning.planners.llama_cpp_backend import LlamaCppConfig, LlamaCppPlanner  # noqa: PLC0415 (optional: llama_cpp)

        return LlamaCppPlanner(LlamaCppConfig(**options), prompt=prompt, suite=suite)
    if backend == "transformers":
        from galley_learning.planners.transformers_backend import TransformersConfig, TransformersPlanner  # noqa: PLC0415 (optional: transformers)

        return TransformersPlanner(TransformersConfig(**options), prompt=prompt, suite=suite)
    raise AssertionError(f"backend {backend!r} is in BACKENDS but not built here")
