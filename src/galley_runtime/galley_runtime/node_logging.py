"""The logger a node is given: what it may call, and the wrapper that keeps rclpy's logger safe."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["Logger", "PerSeverityLogger"]


class Logger(Protocol):
    """The logging calls a node may make (both ``logging.Logger`` and rclpy's logger have them).

    Pass one formatted string: rclpy's logger takes no %-style arguments.
    """

    def debug(self, message: str) -> Any: ...
    def info(self, message: str) -> Any: ...
    def warning(self, message: str) -> Any: ...
    def error(self, message: str) -> Any: ...


class PerSeverityLogger:
    """A logger that makes each severity's calls from a call site of its own.

    rclpy's logger keys its state on the line that calls it and raises ``ValueError: Logger
    severity cannot be changed between calls`` when one line logs at two severities
    (``(log.info if ok else log.warning)(text)``). The ROS 2 host wraps rclpy's logger in this
    class, so every node is safe from that rule: rclpy sees the four lines below, one per severity.
    """

    def __init__(self, logger: Logger) -> None:
        self._logger = logger

    def debug(self, message: str) -> None:
        self._logger.debug(message)

    def info(self, message: str) -> None:
        self._logger.info(message)

    def warning(self, message: str) -> None:
        self._logger.warning(message)

    def error(self, message: str) -> None:
        self._logger.error(message)
