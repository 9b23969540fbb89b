"""A planner backend in a worker process, so that a crash or a hang in native code costs a plan, not the host.

The ``llama_cpp`` and ``transformers`` backends run model code compiled for the CPU (llama.cpp,
torch). A build that does not fit the CPU dies with SIGSEGV or SIGILL, and a model can hang; in the
embedded host that would take the simulator, the recorder and the bag being written down with it,
with no word of why. :class:`PlannerProcess` builds the backend in a child process (``spawn``, so
the child shares no threads or GL contexts with the host) and sends it one request at a time over a
pipe. If the child dies, the request fails with :class:`PlanningError` ``unavailable`` naming the
signal, the library and the fix; if it does not answer within ``timeout_s``, it is killed and the
request fails with ``timeout``. The next request starts a fresh child.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from galley_core.language.planning import Plan, Planner, PlanningError
from galley_core.scene import Scene
from galley_core.tasks.replanning import PlanContext

__all__ = ["NATIVE_LIBRARIES", "PlannerProcess"]

#: The native library behind each backend that runs model code in-process, and how to fix a crash.
NATIVE_LIBRARIES: dict[str, tuple[str, str]] = {
    "llama_cpp": (
        "llama-cpp-python (llama.cpp)",
        "rebuild it for this machine: rm .venv/galley-llama-cpp-build.txt && scripts/setup.sh "
        "(a portable build; docs/tutorials/first-run.md: 'A native llama.cpp build'), or use the "
        "openai backend with a llama.cpp server",
    ),
    "transformers": (
        "torch / transformers",
        "check the model (model_path) and that torch's build fits this machine (scripts/setup.sh "
        "installs the CPU build); or run the model behind an OpenAI-compatible server (openai backend)",
    ),
}

_POLL_S = 0.05


def _serve(connection: Connection, factory: Callable[[], Planner]) -> None:
    """The child: build the planner, then answer ``(instruction, image, scene, context)`` requests."""
    try:
        planner = factory()
    except PlanningError as err:
        connection.send(("error", err.kind, err.reason))
        return
    except Exception as err:  # the child reports whatever broke the backend's start; the parent raises it
        connection.send(("error", "unavailable", f"{type(err).__name__}: {err}"))
        return
    connection.send(("ready", planner.name, planner.accepts_image))
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        try:
            connection.send(("plan", planner.plan(*request)))
        except PlanningError as err:
            connection.send(("error", err.kind, err.reason))
        except Exception as err:  # a backend bug fails this request, not the worker
            connection.send(("error", "model", f"{type(err).__name__}: {err}"))


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name} (signal {-exitcode})"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


class PlannerProcess(Planner):
    """A :class:`Planner` whose backend runs in a child process.

    Args:
        factory: builds the backend in the child; must be picklable (a module-level function or class,
            or a ``functools.partial`` of one), as ``spawn`` sends it to a fresh interpreter.
        backend: the backend's name, for messages (a key of :data:`NATIVE_LIBRARIES` gives the
            library and the fix when the child dies).
        timeout_s: the longest one plan may take, seconds; then the child is killed (``timeout``).
        start_timeout_s: the longest the backend may take to load (imports and model), seconds.

    Raises:
        PlanningError: ``unavailable`` when the backend cannot start (its own reason, or how the child
            died), ``timeout`` when it does not start within ``start_timeout_s``.
    """

    def __init__(
        self,
        factory: Callable[[], Planner],
        *,
        backend: str,
        timeout_s: float = 300.0,
        start_timeout_s: float = 300.0,
    ) -> None:
        if not timeout_s > 0 or not start_timeout_s > 0:
            raise ValueError(f"timeout_s {timeout_s}, start_timeout_s {start_timeout_s}: both must be > 0")
        self.name = backend
        self._factory = factory
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self._process: Any = None
        self._connection: Connection | None = None
        self._start()

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs."""
        return None if self._process is None else int(self._process.pid)

    def plan(
        self, instruction: str, top_down_image: Any, scene: Scene, context: PlanContext | None = None
    ) -> Plan:
        """Plan in the worker; a dead or hung worker fails this request and is restarted for the next."""
        if self._connection is None:
            self._start()
        assert self._connection is not None
        try:
            self._connection.send((instruction, top_down_image, scene, context))
        except (BrokenPipeError, ConnectionResetError, EOFError):
            raise self._died("while receiving the instruction") from None
        answer = self._receive(self.timeout_s, "planning")
        if answer[0] == "plan":
            plan: Plan = answer[1]
            return plan
        raise PlanningError(answer[1], answer[2])

    def close(self) -> None:
        """Stop the worker (idempotent)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._process is not None:
            self._process.join(timeout=2.0)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._process = None

    def __del__(self) -> None:
        self.close()

    # -- the child -----------------------------------------------------------------------------

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        self._process = context.Process(
            target=_serve, args=(child, self._factory), name=f"galley-{self.name}-planner", daemon=True
        )
        self._process.start()
        child.close()  # the parent keeps only its end, so the child's death reads as EOF
        self._connection = parent
        answer = self._receive(self.start_timeout_s, "loading")
        if answer[0] == "error":
            self.close()
            raise PlanningError(answer[1], answer[2])
        self.accepts_image = bool(answer[2])

    def _receive(self, timeout_s: float, doing: str) -> tuple[Any, ...]:
        assert self._connection is not None and self._process is not None
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if self._connection.poll(_POLL_S):
                    answer: tuple[Any, ...] = self._connection.recv()
                    return answer
            except (EOFError, ConnectionResetError):
                raise self._died(f"while {doing}") from None
            if not self._process.is_alive():
                raise self._died(f"while {doing}")
            if time.monotonic() > deadline:
                self._process.kill()
                self.close()
                raise PlanningError(
                    "timeout",
                    f"the {self.name} backend gave no answer within {timeout_s:g} s ({doing}); its worker "
                    "process was stopped. Raise the time limit (timeout_s) or use a smaller model",
                )

    def _died(self, doing: str) -> PlanningError:
        assert self._process is not None
        self._process.join(timeout=5.0)
        death = _death(self._process.exitcode)
        self.close()
        library, fix = NATIVE_LIBRARIES.get(self.name, ("its native code", "check the backend's install"))
        return PlanningError(
            "unavailable",
            f"the {self.name} backend's worker process {death} {doing}, in {library}; fix: {fix}",
        )
