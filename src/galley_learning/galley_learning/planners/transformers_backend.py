"""The ``transformers`` backend: a local Hugging Face (V)LM in-process, decoding under the scene's schema.

The scene's JSON Schema (:func:`galley_core.language.planning.plan_json_schema`, the same constraint the
``openai`` backend sends and ``llama_cpp``'s GBNF encodes) is compiled by llguidance into a token
matcher; at every step of greedy decoding (temperature 0) the tokens the matcher rejects get
logit -inf, so the answer is ``{"plan": [valid steps]}`` with the separators of the in-context
examples (``", "``, ``": "``). :class:`~galley_core.language.planning.TextPlanner` still validates
every answer against the plan grammar.

A model whose configuration has a ``vision_config`` is loaded as a VLM (``AutoProcessor`` and
``AutoModelForImageTextToText``) and gets the top-down image in the last user message through the
processor's chat template; any other model is loaded text-only (``AutoTokenizer`` and
``AutoModelForCausalLM``). ``model_path`` is a local model directory (``config.json`` beside the
weights) or a hub id. transformers (Python 3.11+) and llguidance are optional
(``pip install transformers llguidance``, pinned in requirements.txt).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from galley_core.config import Config, param
from galley_core.language.planning import PlanningError, Prompt, PromptConfig, TextPlanner
from galley_core.tasks.suite import SuiteEntry

__all__ = ["TransformersConfig", "TransformersPlanner", "grammar_for"]

#: JSON layout the constrained answer is held to: that of the prompt's examples (``json.dumps``).
_JSON_LAYOUT = {"item_separator": ", ", "key_separator": ": ", "whitespace_flexible": False}


@dataclass(frozen=True)
class TransformersConfig(Config):
    """The Hugging Face model and how it runs."""

    model_path: str = param("", "local model directory (config.json beside the weights) or hub id")
    device: str = param(
        "auto", "where the model runs (auto: cuda if torch sees a GPU)", choices=("auto", "cpu", "cuda")
    )
    dtype: str = param(
        "auto",
        "weights' dtype (auto: bfloat16 on cuda, float32 on cpu)",
        choices=("auto", "float32", "bfloat16", "float16"),
    )
    vision: bool = param(True, "send the top-down image where the model is a VLM")
    max_tokens: int = param(300, "most tokens in an answer", ge=16)
    local_files_only: bool = param(False, "never download: a local directory or the hub cache only")


def grammar_for(schema: dict[str, Any]) -> str:
    """The llguidance grammar of the JSON Schema ``schema``, in the examples' JSON layout."""
    import llguidance  # noqa: PLC0415 (optional: llguidance)

    return str(llguidance.LLMatcher.grammar_from_json_schema(schema, overrides=_JSON_LAYOUT))  # type: ignore[arg-type]


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:300] if text else ''}"


def _grammar_hooks(matcher: Any, vocab_size: int) -> tuple[Any, Any]:
    """(logits processor, stopping criterion) for ``generate`` that hold decoding to ``matcher``.

    The processor sets the logits (1, V) of the tokens the matcher rejects to -inf (and those past
    the tokenizer's ``vocab_size``, padding rows of the embedding); the criterion feeds the token
    just chosen to the matcher and stops once the grammar is complete.
    """
    import torch  # noqa: PLC0415 (optional: torch)
    import transformers  # noqa: PLC0415 (optional: transformers)

    class GrammarMask(transformers.LogitsProcessor):  # type: ignore[misc]
        def __call__(self, input_ids: Any, scores: Any) -> Any:
            bits = np.frombuffer(matcher.compute_bitmask(), dtype=np.uint8)
            allowed = np.unpackbits(bits, bitorder="little")[:vocab_size].astype(bool)
            keep = torch.zeros(scores.shape[-1], dtype=torch.bool)
            n = min(len(allowed), scores.shape[-1])
            keep[:n] = torch.from_numpy(allowed[:n])
            return scores.masked_fill(~keep.to(scores.device), float("-inf"))

    class GrammarStop(transformers.StoppingCriteria):  # type: ignore[misc]
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            matcher.consume_token(int(input_ids[0, -1]))
            done = bool(matcher.is_stopped() or matcher.is_error())
            return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)

    return GrammarMask(), GrammarStop()


def _check_model_path(source: str) -> None:
    """PlanningError naming ``source`` when it is not a model directory (nor can be a hub id)."""
    path = Path(source).expanduser()
    if not source:
        raise PlanningError(
            "unavailable",
            "the transformers backend has no model_path; give a local model directory or a hub id",
        )
    if path.is_file():
        hint = "; GGUF files run on the llama_cpp backend" if path.suffix == ".gguf" else ""
        raise PlanningError(
            "unavailable",
            f"model_path = {source!r} is a file; give the model's directory (config.json, weights, "
            f"tokenizer) or a hub id{hint}",
        )
    if path.is_dir() and not (path / "config.json").is_file():
        raise PlanningError(
            "unavailable",
            f"model_path = {source!r} has no config.json; give a Hugging Face model directory "
            "(config.json, weights, tokenizer) or a hub id",
        )
    looks_local = source.startswith(("/", ".", "~")) or source.count("/") > 1
    if looks_local and not path.exists():
        raise PlanningError(
            "unavailable", f"no model directory at model_path = {source!r}; give a local model directory"
        )


class TransformersPlanner(TextPlanner):
    """Plans with a local Hugging Face model in this process.

    Args:
        config: the model and how it runs.
        prompt: prompt parts and constraints (Table II switches).
        suite: entries to draw in-context examples from.

    Raises:
        PlanningError: ``unavailable`` when transformers or llguidance is missing, ``model_path`` is
            empty, the device is absent or the model cannot be loaded.
    """

    name = "transformers"
    #: The model's processor (VLMs only), tokenizer and model, as transformers loaded them.
    processor: Any
    tokenizer: Any
    model: Any

    def __init__(
        self,
        config: TransformersConfig,
        *,
        prompt: PromptConfig | None = None,
        suite: Sequence[SuiteEntry] = (),
    ) -> None:
        super().__init__(prompt=prompt, suite=suite)
        self.config = config
        try:
            import llguidance  # noqa: PLC0415 (optional: llguidance)
            import llguidance.hf  # noqa: PLC0415 (optional: llguidance)
            import torch  # noqa: PLC0415 (optional: torch)
            import transformers  # noqa: PLC0415 (optional: transformers)
        except ImportError as err:
            raise PlanningError(
                "unavailable",
                f"the transformers backend needs transformers and llguidance ({err.name} is missing): "
                "pip install transformers llguidance (pinned in requirements.txt; Python 3.11+)",
            ) from None
        source = config.model_path
        _check_model_path(source)
        gpu = torch.cuda.is_available()
        if config.device == "cuda" and not gpu:
            raise PlanningError(
                "unavailable", "device = 'cuda' but torch sees no CUDA GPU; set device to cpu or auto"
            )
        self.device = "cuda" if config.device == "cuda" or (config.device == "auto" and gpu) else "cpu"
        dtype = config.dtype if config.dtype != "auto" else "bfloat16" if self.device == "cuda" else "float32"
        self.dtype = getattr(torch, dtype)
        self._torch = torch
        self._llguidance = llguidance
        self._load(transformers, source)
        template = self.processor if self.processor is not None else self.tokenizer
        if not getattr(template, "chat_template", None):
            raise PlanningError(
                "unavailable",
                f"model_path = {source!r} has no chat template; give an instruction-tuned (chat) model "
                "or add chat_template to its tokenizer_config.json",
            )
        self.model.to(self.device).eval()
        self.accepts_image = self.is_vlm and config.vision
        generation = self.model.generation_config
        eos = generation.eos_token_id if generation is not None else None
        eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
        if self.tokenizer.eos_token_id is not None and self.tokenizer.eos_token_id not in eos_ids:
            eos_ids.append(self.tokenizer.eos_token_id)
        self._eos_ids = eos_ids
        try:
            self._ll_tokenizer = llguidance.hf.from_tokenizer(self.tokenizer, eos_token=eos_ids or None)
        except ValueError as err:
            raise PlanningError(
                "unavailable",
                f"model_path = {source!r}: llguidance cannot use its tokenizer ({_first_line(err)}); "
                "the transformers backend needs a model with a fast (tokenizer.json) tokenizer",
            ) from None
        self._grammars: dict[str, str] = {}

    def _load(self, transformers: Any, source: str) -> None:
        """Load ``processor`` (VLMs), ``tokenizer`` and ``model`` from ``source``, or raise PlanningError."""
        load = {"local_files_only": self.config.local_files_only}
        try:
            model_config = transformers.AutoConfig.from_pretrained(source, **load)
            self.is_vlm = getattr(model_config, "vision_config", None) is not None
            if self.is_vlm:
                self.processor = transformers.AutoProcessor.from_pretrained(source, **load)
                self.tokenizer = self.processor.tokenizer
                model_class = transformers.AutoModelForImageTextToText
            else:
                self.processor = None
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(source, **load)
                model_class = transformers.AutoModelForCausalLM
            self.model = model_class.from_pretrained(source, dtype=self.dtype, **load)
        except (OSError, ValueError, KeyError, ImportError, RuntimeError) as err:
            where = "the directory's files" if Path(source).is_dir() else "the hub id and the network"
            raise PlanningError(
                "unavailable",
                f"model_path = {source!r} could not be loaded as a Hugging Face model ({_first_line(err)}); "
                f"check {where}",
            ) from None

    def _matcher(self, prompt: Prompt) -> Any:
        """A fresh llguidance matcher of the prompt's JSON Schema (compiled once per schema)."""
        assert prompt.constraints is not None
        key = json.dumps(prompt.constraints.json_schema, sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = grammar_for(prompt.constraints.json_schema)
        matcher = self._llguidance.LLMatcher(self._ll_tokenizer, self._grammars[key], log_level=0)
        if matcher.is_error():
            raise PlanningError(
                "model", f"llguidance rejected the scene's JSON Schema: {matcher.get_error()}"
            )
        return matcher

    def inputs(self, prompt: Prompt, top_down_image: Any) -> dict[str, Any]:
        """The model's inputs (``input_ids``, ``attention_mask``, ``pixel_values``, ...) for ``prompt``."""
        if self.processor is None:
            messages: list[dict[str, Any]] = [{"role": r, "content": t} for r, t in prompt.messages]
            encoded = self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
            )
        else:
            from PIL import Image  # noqa: PLC0415 (optional: PIL)

            messages = [{"role": r, "content": [{"type": "text", "text": t}]} for r, t in prompt.messages]
            if top_down_image is not None and prompt.image:
                image = Image.fromarray(np.asarray(top_down_image, dtype=np.uint8)[..., :3])
                messages[-1]["content"].insert(0, {"type": "image", "image": image})
            encoded = self.processor.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
            )
        return {k: v.to(self.device) if hasattr(v, "to") else v for k, v in dict(encoded).items()}

    def generate(self, prompt: Prompt, top_down_image: Any, attempt: int) -> str:
        """The model's greedy answer, decoded under the scene's JSON Schema when constraints are on."""
        import transformers  # noqa: PLC0415 (optional: transformers)

        inputs = self.inputs(prompt, top_down_image)
        if "pixel_values" in inputs and hasattr(inputs["pixel_values"], "to"):
            inputs["pixel_values"] = inputs["pixel_values"].to(self.dtype)
        extra: dict[str, Any] = {}
        if prompt.constraints is not None:
            mask, stop = _grammar_hooks(self._matcher(prompt), self._ll_tokenizer.vocab_size)
            extra["logits_processor"] = transformers.LogitsProcessorList([mask])
            extra["stopping_criteria"] = transformers.StoppingCriteriaList([stop])
        with self._torch.inference_mode():
            output = self.model.generate(
                **inputs,
                do_sample=False,
                max_new_tokens=self.config.max_tokens,
                eos_token_id=self._eos_ids or None,
                pad_token_id=self.tokenizer.pad_token_id
                if self.tokenizer.pad_token_id is not None
                else (self._eos_ids or [None])[0],
                **extra,
            )
        new = output[0, inputs["input_ids"].shape[1] :]
        return str(self.tokenizer.decode(new, skip_special_tokens=True))
