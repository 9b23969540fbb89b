"""Conversions between galley_core types and ROS messages: the one place nodes translate.

Works with the message classes of either host (see :mod:`galley_nodes.messages`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from galley_core.geometry import Pose2D, Transform
from galley_nodes import messages

__all__ = [
    "pose2d_from_pose_msg",
    "pose_msg",
    "transform_from_msg",
    "transform_stamped_msg",
]


def transform_stamped_msg(transform: Transform, parent: str, child: str, stamp_ns: int) -> Any:
    """``geometry_msgs/msg/TransformStamped`` of ``T_parent_child`` at ``stamp_ns``."""
    t, q = transform.translation, transform.rotation
    return messages.new(
        "geometry_msgs/msg/TransformStamped",
        header=messages.new("std_msgs/msg/Header", stamp=messages.time_msg(stamp_ns), frame_id=parent),
        child_frame_id=child,
        transform=messages.new(
            "geometry_msgs/msg/Transform",
            translation=messages.new(
                "geometry_msgs/msg/Vector3", x=float(t[0]), y=float(t[1]), z=float(t[2])
            ),
            rotation=messages.new(
                "geometry_msgs/msg/Quaternion", x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3])
            ),
        ),
    )


def transform_from_msg(msg: Any) -> Transform:
    """:class:`Transform` of a ``geometry_msgs/msg/Transform`` (or the ``.transform`` of a stamped one).

    Raises:
        ValueError: a non-finite value or a zero quaternion.
    """
    tf = getattr(msg, "transform", msg)
    t, q = tf.translation, tf.rotation
    return Transform(np.array([t.x, t.y, t.z]), np.array([q.x, q.y, q.z, q.w]))


def pose_msg(pose: Pose2D) -> Any:
    """``geometry_msgs/msg/Pose`` of a planar pose (z = 0)."""
    q = pose.to_transform().rotation
    return messages.new(
        "geometry_msgs/msg/Pose",
        position=messages.new("geometry_msgs/msg/Point", x=pose.x, y=pose.y, z=0.0),
        orientation=messages.new(
            "geometry_msgs/msg/Quaternion", x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3])
        ),
    )


def pose2d_from_pose_msg(msg: Any) -> Pose2D:
    """Planar pose (x, y, yaw) of a ``geometry_msgs/msg/Pose``."""
    p, q = msg.position, msg.orientation
    return Transform(np.array([p.x, p.y, p.z]), np.array([q.x, q.y, q.z, q.w])).to_pose2d()
