"""The ``openai`` backend: any OpenAI-compatible chat-completions server (vLLM, llama.cpp, Ollama, hosted).

The prompt (:func:`galley_core.language.planning.build_prompt`) goes to ``POST {base_url}/chat/completions``
with temperature 0, the top-down image as a PNG data URL where ``vision`` is on, and the scene's
constraint in the form the server takes (``structured``):

* ``json_schema``: ``response_format = {"type": "json_schema", ...}`` (OpenAI, vLLM, llama.cpp, Ollama);
* ``json_object``: ``response_format = {"type": "json_object", "schema": ...}`` (llama-cpp-python's server);
* ``vllm``: vLLM's ``structured_outputs`` / ``guided_json`` fields;
* ``llama_cpp``: llama.cpp's ``grammar`` field with the GBNF grammar;
* ``auto`` (default): the forms in that order until the server takes one (any HTTP error moves on to
  the next form); the form that worked is kept for later requests.

Connection errors, timeouts, HTTP 429 and 5xx are retried with exponential back-off; then planning
fails with ``unavailable`` or ``timeout``. The base URL, the model and the API key come from the
configuration or, where empty, from ``GALLEY_OPENAI_BASE_URL`` / ``OPENAI_BASE_URL``,
``GALLEY_OPENAI_MODEL`` / ``OPENAI_MODEL`` and the variable named by ``api_key_env``.
"""

from __future__ import annotations

import base64
import io
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

from galley_core.config import Config, param
from galley_core.language.planning import PlanningError, Prompt, PromptConfig, TextPlanner
from galley_core.tasks.suite import SuiteEntry

__all__ = ["OpenAIConfig", "OpenAIPlanner", "image_data_url"]

_FORMS = ("json_schema", "json_object", "vllm", "llama_cpp", "none")


@dataclass(frozen=True)
class OpenAIConfig(Config):
    """Where the server is and how to talk to it."""

    base_url: str = param(
        "",
        "server URL ending in /v1; empty: $GALLEY_OPENAI_BASE_URL, $OPENAI_BASE_URL, http://127.0.0.1:8000/v1",
    )
    model: str = param(
        "", "model name; empty: $GALLEY_OPENAI_MODEL, $OPENAI_MODEL, else the server's first model"
    )
    api_key: str = param("", "API key; empty: the variable named by api_key_env (none is sent if unset)")
    api_key_env: str = param("OPENAI_API_KEY", "environment variable holding the API key")
    timeout_s: float = param(60.0, "time limit of one request", unit="s", gt=0.0)
    retries: int = param(2, "extra tries after a connection error, a timeout, HTTP 429 or 5xx", ge=0, le=10)
    backoff_s: float = param(0.5, "wait before the first retry; doubles each retry", unit="s", ge=0.0)
    structured: str = param(
        "auto", "how the constraint is sent (see the module docstring)", choices=("auto", *_FORMS)
    )
    vision: bool = param(True, "send the top-down image (off for text-only models)")
    max_tokens: int = param(300, "most tokens in an answer", ge=16)  # fmt: skip


def image_data_url(image: Any) -> str:
    """A ``data:image/png;base64,...`` URL of an (H, W, 3) uint8 image."""
    from PIL import Image  # noqa: PLC0415 (optional: PIL)

    buffer = io.BytesIO()
    Image.fromarray(np.asarray(image, dtype=np.uint8)[..., :3]).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class OpenAIPlanner(TextPlanner):
    """Plans through an OpenAI-compatible chat-completions server.

    Args:
        config: server and request settings.
        prompt: prompt parts and constraints (Table II switches).
        suite: entries to draw in-context examples from.
        transport: an httpx transport (tests); default: a real connection.
    """

    name = "openai"

    def __init__(
        self,
        config: OpenAIConfig | None = None,
        *,
        prompt: PromptConfig | None = None,
        suite: Sequence[SuiteEntry] = (),
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(prompt=prompt, suite=suite)
        self.config = config or OpenAIConfig()
        c = self.config
        self.base_url = (
            c.base_url
            or os.environ.get("GALLEY_OPENAI_BASE_URL")
            or os.environ.get("OPENAI_BASE_URL")
            or "http://127.0.0.1:8000/v1"
        ).rstrip("/")
        self.model = c.model or os.environ.get("GALLEY_OPENAI_MODEL") or os.environ.get("OPENAI_MODEL") or ""
        key = c.api_key or os.environ.get(c.api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.accepts_image = c.vision
        self._client = httpx.Client(headers=headers, timeout=c.timeout_s, transport=transport)
        self._form: str | None = None if c.structured == "auto" else c.structured

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    # -- requests ------------------------------------------------------------------------------

    def _post(self, path: str, body: dict[str, Any] | None, *, probe: bool = False) -> httpx.Response:
        """POST (or GET when ``body`` is None) with retries; PlanningError when the server cannot answer.

        ``probe``: return HTTP error responses at once (a request form the server may not take).
        """
        c = self.config
        url = f"{self.base_url}{path}"
        last = ""
        for attempt in range(c.retries + 1):
            if attempt:
                time.sleep(c.backoff_s * 2 ** (attempt - 1))
            try:
                response = self._client.get(url) if body is None else self._client.post(url, json=body)
            except httpx.TimeoutException:
                last = "timeout"
                continue
            except httpx.TransportError as err:
                last = f"unavailable: {type(err).__name__}: {err}"
                continue
            if not probe and (response.status_code == 429 or response.status_code >= 500):
                last = f"unavailable: HTTP {response.status_code}: {response.text[:200]}"
                continue
            return response
        if last == "timeout":
            raise PlanningError(
                "timeout",
                f"{url} did not answer within timeout_s = {c.timeout_s:g} s ({c.retries + 1} tries); "
                "check the server's load or raise timeout_s",
            )
        raise PlanningError(
            "unavailable",
            f"no answer from the OpenAI-compatible server at {self.base_url} after {c.retries + 1} tries "
            f"({last.removeprefix('unavailable: ')}); start the server or set base_url",
        )

    def _model_name(self) -> str:
        if not self.model:
            response = self._post("/models", None)
            try:
                self.model = str(response.json()["data"][0]["id"])
            except (ValueError, KeyError, IndexError, TypeError):
                raise PlanningError(
                    "unavailable", f"{self.base_url}/models lists no model; set model in the configuration"
                ) from None
        return self.model

    def request_body(self, prompt: Prompt, top_down_image: Any, form: str) -> dict[str, Any]:
        """The chat-completions request for ``prompt`` with the constraint in ``form``."""
        messages: list[dict[str, Any]] = [{"role": role, "content": text} for role, text in prompt.messages]
        if top_down_image is not None and prompt.image:
            text = messages[-1]["content"]
            messages[-1]["content"] = [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": image_data_url(top_down_image)}},
            ]
        body: dict[str, Any] = {
            "model": self._model_name(),
            "messages": messages,
            "temperature": 0.0,
            "max_tokens": self.config.max_tokens,
        }
        constraints = prompt.constraints
        if constraints is not None:
            if form == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "plan", "schema": constraints.json_schema, "strict": True},
                }
            elif form == "json_object":
                body["response_format"] = {"type": "json_object", "schema": constraints.json_schema}
            elif form == "vllm":
                body["structured_outputs"] = {"json": constraints.json_schema}
                body["guided_json"] = constraints.json_schema
            elif form == "llama_cpp":
                body["grammar"] = constraints.gbnf
        return body

    def generate(self, prompt: Prompt, top_down_image: Any, attempt: int) -> str:
        """The server's answer text; tries the constraint forms in turn while ``structured`` is auto."""
        forms = [self._form] if self._form is not None else list(_FORMS)
        if prompt.constraints is None:
            forms = ["none"]
        rejected = ""
        probing = len(forms) > 1
        for form in forms:
            body = self.request_body(prompt, top_down_image, form)
            response = self._post("/chat/completions", body, probe=probing and form != forms[-1])
            if probing and response.status_code != 200 and form != forms[-1]:
                rejected = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code != 200:
                hint = "; set vision: false for text-only models" if prompt.image else ""
                raise PlanningError(
                    "unavailable",
                    f"{self.base_url}/chat/completions rejected the request (HTTP {response.status_code}: "
                    f"{response.text[:300]}){hint}",
                )
            if prompt.constraints is not None:
                self._form = form
            try:
                return str(response.json()["choices"][0]["message"]["content"] or "")
            except (ValueError, KeyError, IndexError, TypeError):
                return response.text
        raise PlanningError("unavailable", f"the server took no constrained request form ({rejected})")
