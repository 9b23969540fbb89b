"""The runner interface of galley_episodes.cluster: what an episode asks for, and local processes.

:class:`EpisodeRunner` runs functions of whole episodes and returns their futures;
:class:`LocalRunner` is this machine's spawned processes (``--workers``), and
galley_episodes.cluster_ray's ``RayRunner`` a Ray cluster's tasks (``--cluster``). Every result that is
a dict gains ``ran_on``, where it ran (:func:`located`).
"""

from __future__ import annotations

import os
import socket
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from galley_episodes.pool import episode_pool

__all__ = ["EpisodeResources", "EpisodeRunner", "LocalRunner", "located"]


@dataclass(frozen=True)
class EpisodeResources:
    """What one episode asks of a cluster node (Ray's logical resources; local processes ignore it)."""

    cpus: float = 1.0  # the simulator and every node run in one process on one core
    memory_bytes: int = 2 * 1024**3  # an episode with cameras and a bag peaks near 1 GiB
    gpus: float = 0.0  # a learned policy on a GPU (diffusion_policy.device cuda): 1


class EpisodeRunner(ABC):
    """Runs functions of whole episodes somewhere; returns their futures."""

    #: units of work worth keeping in flight at once (the caller's submission window)
    slots: int = 1

    @abstractmethod
    def submit(
        self,
        fn: Callable[..., Any],
        /,
        *,
        output: str | None = None,
        files: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> Future[Any]:
        """Run ``fn(**kwargs)``; its future (a dict result gains ``ran_on``).

        ``output`` names the keyword argument that is the episode's folder on this machine: the
        folder holds the episode's files, complete, when the future is done. ``files`` names the
        keyword arguments that are paths on this machine (str, Path, or lists of them) that the
        episode reads: a cluster node gets them from here.
        """

    def describe(self) -> str:
        """One line on where episodes run, shown when a command starts."""
        return f"{self.slots} local process(es)"

    @abstractmethod
    def close(self) -> None:
        """Stop the workers (waiting for none that are still running)."""

    def __enter__(self) -> EpisodeRunner:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def located(result: Any, where: str | None = None) -> Any:
    """``result`` with ``ran_on`` (this process: ``host pid N``) when it is a dict."""
    if isinstance(result, dict):
        result["ran_on"] = where or f"{socket.gethostname()} pid {os.getpid()}"
    return result


def _run_located(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    return located(fn(**kwargs))


class LocalRunner(EpisodeRunner):
    """``workers`` spawned processes of this machine (episodes write into the output folder directly)."""

    def __init__(self, workers: int) -> None:
        self.slots = workers
        self._pool = episode_pool(workers)

    def submit(
        self,
        fn: Callable[..., Any],
        /,
        *,
        output: str | None = None,
        files: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> Future[Any]:
        return self._pool.submit(_run_located, fn, kwargs)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
