r"""ROS message classes for the process: rosbags classes (embedded host) or rclpy classes (ROS 2 host).

Nodes build messages with :func:`new`; which classes it returns depends on the backend the host
installed with :func:`use_backend`. The default is the embedded backend,
:class:`galley_runtime.rosbags_messages.RosbagsMessages` (the ``rosbags`` type store with
galley_msgs registered); the ROS 2 host installs :class:`galley_runtime.ros2.messages.RclpyMessages`.
Under ROS 2, rosbags is therefore not needed to run nodes.

Two differences between rosbags and rclpy classes are bridged by the backends, once:

* rosbags classes are dataclasses without field defaults (``Twist()`` raises); ``new`` fills
  every field with its ROS default, recursively, like an rclpy constructor does;
* numeric sequences are numpy arrays in rosbags and ``array.array`` (unbounded) or numpy (fixed
  size) in rclpy; ``new`` converts what it is given (lists, arrays, numpy scalars) to the backend's form.

A third difference is in what nodes *read*: a ``byte`` field (``octet`` in IDL; among the types
galley's nodes use, only ``diagnostic_msgs/msg/DiagnosticStatus.level``) is a one-byte ``bytes``
in rclpy (``b'\x02'``) and an ``int`` in rosbags. rclpy's setters accept only ``bytes`` there, so a
received message cannot be rewritten into ints; nodes read such fields with :func:`byte_value`,
which gives the ``int`` in both hosts (``int(b'\x02')`` raises). ``new`` takes either form.
"""

from __future__ import annotations

from typing import Any

from galley_runtime.message_backend import MessageBackend, MessageError, byte_value, type_name_of

__all__ = [
    "MessageBackend",
    "MessageError",
    "backend",
    "byte_value",
    "duration_msg",
    "message_class",
    "new",
    "stamp_ns_of",
    "time_msg",
    "time_ns_from_msg",
    "type_name_of",
    "use_backend",
]


_backend: MessageBackend | None = None
_classes: dict[str, type] = {}


def backend() -> MessageBackend:
    """The process's message backend (the embedded one unless a host installed another)."""
    global _backend
    if _backend is None:
        # optional: rosbags (the embedded backend); under ROS 2 the host installs rclpy's first.
        from galley_runtime.rosbags_messages import RosbagsMessages  # noqa: PLC0415 (optional: rosbags)

        _backend = RosbagsMessages()
    return _backend


def use_backend(new_backend: MessageBackend | None) -> MessageBackend | None:
    """Install the message classes of a host (the ROS 2 host installs rclpy's); returns the previous.

    None goes back to the default, the embedded backend.
    """
    global _backend
    previous, _backend = _backend, new_backend
    _classes.clear()
    return previous


def new(type_name: str, /, **fields: Any) -> Any:
    """A new message of ``type_name`` (``pkg/msg/Name``) from the current backend."""
    return backend().new(type_name, **fields)


def message_class(type_name: str) -> type:
    """The current backend's class of ``type_name``, cached.

    For code that builds messages by the thousand: calling the class with every field given as a
    keyword skips :func:`new`'s defaults and conversions, and works with both backends' classes.
    """
    cls = _classes.get(type_name)
    if cls is None:
        cls = _classes[type_name] = backend().get_class(type_name)
    return cls


def time_msg(time_ns: int) -> Any:
    """``builtin_interfaces/msg/Time`` for integer nanoseconds."""
    sec, nanosec = divmod(int(time_ns), 1_000_000_000)
    return message_class("builtin_interfaces/msg/Time")(sec=sec, nanosec=nanosec)


def duration_msg(duration_ns: int) -> Any:
    """``builtin_interfaces/msg/Duration`` for integer nanoseconds."""
    sec, nanosec = divmod(int(duration_ns), 1_000_000_000)
    return message_class("builtin_interfaces/msg/Duration")(sec=sec, nanosec=nanosec)


def time_ns_from_msg(stamp: Any) -> int:
    """Integer nanoseconds of a ``builtin_interfaces/msg/Time``."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def stamp_ns_of(msg: Any) -> int:
    """A message's header stamp in nanoseconds (a TFMessage: its first transform's); 0 if it has none."""
    header = getattr(msg, "header", None)
    if header is None:
        transforms = getattr(msg, "transforms", None)
        header = transforms[0].header if transforms else None
    return 0 if header is None else time_ns_from_msg(header.stamp)
