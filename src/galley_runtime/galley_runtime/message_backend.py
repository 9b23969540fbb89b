"""What both hosts' message backends share: the backend interface, its error, and field readers.

:mod:`galley_runtime.messages` chooses the backend; the backends
(:mod:`galley_runtime.rosbags_messages`, :mod:`galley_runtime.ros2.messages`) import this
module, not that one, so that neither imports the module that imports it.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["MessageBackend", "MessageError", "UnknownMessageTypeError", "byte_value", "type_name_of"]


class MessageError(TypeError):
    """A message type or field that does not exist, or a value of the wrong kind."""


class UnknownMessageTypeError(MessageError):
    """A message type whose package this host cannot load (under ROS 2: not built or not sourced)."""


class MessageBackend(Protocol):
    """Message classes of one host."""

    def new(self, type_name: str, /, **fields: Any) -> Any:
        """A message with ROS defaults and ``fields`` (nested messages may be given as dicts)."""
        ...

    def get_class(self, type_name: str) -> type:
        """The message class of ``pkg/msg/Name``."""
        ...


def type_name_of(msg: Any) -> str:
    """``pkg/msg/Name`` of a message object of either backend."""
    name = getattr(msg, "__msgtype__", None)
    if name is not None:
        return str(name)
    module = type(msg).__module__.split(".")  # rclpy: geometry_msgs.msg._twist
    return f"{module[0]}/msg/{type(msg).__name__}"


def byte_value(value: Any) -> int:
    """The integer of a ``byte`` field: rclpy gives a one-byte ``bytes``, rosbags an ``int``.

    Raises:
        MessageError: ``value`` is neither an integer in 0..255 nor a single byte.
    """
    if isinstance(value, (bytes, bytearray)):
        if len(value) != 1:
            raise MessageError(f"a byte field holds one byte, got {bytes(value)!r}")
        return value[0]
    number = int(value)
    if not 0 <= number <= 255:
        raise MessageError(f"a byte field holds 0..255, got {number}")
    return number
