"""The embedded host's node logger: ROS 2 console lines on the simulated clock."""

from __future__ import annotations

import logging
from typing import Protocol

__all__ = ["NodeLogger"]


class _Clock(Protocol):
    time_ns: int  # simulated time (the embedded host's)


_NS = 1_000_000_000


class NodeLogger:
    """A logger that prefixes the simulated time and the node name, like ROS 2 console output."""

    def __init__(self, host: _Clock, name: str) -> None:
        self._host = host
        self._name = name
        self._logger = logging.getLogger("galley" + name.replace("/", "."))

    def _log(self, level: int, message: str) -> None:
        if self._logger.isEnabledFor(level):
            self._logger.log(level, f"[{self._host.time_ns / _NS:.3f}] [{self._name}]: {message}")

    def debug(self, message: str) -> None:
        self._log(logging.DEBUG, message)

    def info(self, message: str) -> None:
        self._log(logging.INFO, message)

    def warning(self, message: str) -> None:
        self._log(logging.WARNING, message)

    def error(self, message: str) -> None:
        self._log(logging.ERROR, message)
