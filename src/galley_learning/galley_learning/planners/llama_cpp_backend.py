"""The ``llama_cpp`` backend: a GGUF model in-process through llama-cpp-python, decoding under GBNF.

The scene's GBNF grammar (:func:`galley_core.language.planning.plan_gbnf`) constrains sampling, so
every answer is ``{"plan": [valid steps]}``; temperature 0. Text only: the image is not sent.
llama-cpp-python is optional (``pip install llama-cpp-python``; it builds from source).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from galley_core.config import Config, param
from galley_core.language.planning import PlanningError, Prompt, PromptConfig, TextPlanner
from galley_core.tasks.suite import SuiteEntry

__all__ = ["LlamaCppConfig", "LlamaCppPlanner"]


@dataclass(frozen=True)
class LlamaCppConfig(Config):
    """The GGUF model and how it runs."""

    model_path: str = param("", "GGUF model file")
    context_tokens: int = param(4096, "context window", ge=256)
    threads: int = param(0, "CPU threads (0: llama.cpp's default)", ge=0)
    max_tokens: int = param(300, "most tokens in an answer", ge=16)
    gpu_layers: int = param(0, "layers offloaded to a GPU (-1: all)", ge=-1)


class LlamaCppPlanner(TextPlanner):
    """Plans with a GGUF model in this process.

    Raises:
        PlanningError: ``unavailable`` when llama-cpp-python is missing or the model file cannot be loaded.
    """

    name = "llama_cpp"

    def __init__(
        self, config: LlamaCppConfig, *, prompt: PromptConfig | None = None, suite: Sequence[SuiteEntry] = ()
    ) -> None:
        super().__init__(prompt=prompt, suite=suite)
        self.config = config
        try:
            import llama_cpp  # noqa: PLC0415 (optional: llama_cpp)
        except ImportError:
            raise PlanningError(
                "unavailable", "the llama_cpp backend needs llama-cpp-python: pip install llama-cpp-python"
            ) from None
        if not Path(config.model_path).is_file():
            raise PlanningError(
                "unavailable",
                f"no GGUF model at model_path = {config.model_path!r}; give the model file's path",
            )
        self._llama_cpp = llama_cpp
        self._llm = llama_cpp.Llama(
            model_path=config.model_path,
            n_ctx=config.context_tokens,
            n_threads=config.threads or None,
            n_gpu_layers=config.gpu_layers,
            verbose=False,
        )
        self._grammars: dict[str, Any] = {}

    def generate(self, prompt: Prompt, top_down_image: Any, attempt: int) -> str:
        """The model's answer, sampled under the scene's GBNF grammar when constraints are on."""
        grammar = None
        if prompt.constraints is not None:
            text = prompt.constraints.gbnf
            if text not in self._grammars:
                self._grammars[text] = self._llama_cpp.LlamaGrammar.from_string(text, verbose=False)
            grammar = self._grammars[text]
        result = self._llm.create_chat_completion(
            messages=[{"role": role, "content": text} for role, text in prompt.messages],
            temperature=0.0,
            max_tokens=self.config.max_tokens,
            grammar=grammar,
        )
        return str(result["choices"][0]["message"]["content"] or "")
