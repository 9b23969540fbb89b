"""CDR bytes of a message of either host: rosbags classes (embedded) or rclpy classes (ROS 2)."""

from __future__ import annotations

from typing import Any

__all__ = ["serialize"]


def serialize(msg: Any) -> bytes:
    """The CDR bytes rosbag2 stores for ``msg`` (little-endian, with the encapsulation header)."""
    if hasattr(msg, "__msgtype__"):
        from galley_runtime.rosbags_messages import (  # noqa: PLC0415 (optional: rosbags)
            serialize as rosbags_serialize,
        )

        return rosbags_serialize(msg)
    from rclpy.serialization import serialize_message  # noqa: PLC0415 (optional: rclpy)

    return bytes(serialize_message(msg))
