"""TF in the embedded host: static and dynamic transforms between nodes, uses_tf as under ROS 2,
transforms sent as numbers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from galley_core.geometry import Pose2D
from galley_core.tf_tree import TransformError
from galley_nodes.nodes.unicycle_base import UnicycleBaseNode
from galley_runtime import messages, rosbags_messages
from galley_runtime.conversions import (
    transform_from_msg,
    transform_stamped_msg,
    transform_stamped_msgs_from_values,
)
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.node import Node
from galley_runtime.qos import QoS

MS = 1_000_000
TF_MESSAGE = "tf2_msgs/msg/TFMessage"


class StaticFrames(Node):
    """Broadcasts static transforms at start."""

    name = "static_frames"

    def __init__(self, host: Any, config: Any) -> None:
        super().__init__(host, config)
        laser = transform_stamped_msg(Pose2D(0.2, 0.0, 0.0).to_transform(), "base_link", "laser", 0)
        self.send_transforms([laser], static=True)
        camera = transform_stamped_msg(Pose2D(0.1, 0.05, 0.0).to_transform(), "base_link", "camera", 0)
        self.send_transforms([camera], static=True)


class FrameWatcher(Node):
    name = "frame_watcher"
    uses_tf = True


def test_tf_broadcast_and_lookup_between_nodes():
    host = EmbeddedHost()
    host.add_node(UnicycleBaseNode, parameters={"initial_x_m": 1.0})
    host.add_node(StaticFrames)
    watcher = host.add_node(FrameWatcher)
    late: list[Any] = []
    host.participant("late").create_subscription("/tf_static", TF_MESSAGE, late.append, QoS.latched())
    host.run_for(0.1)
    tf = watcher.lookup_transform("odom", "camera")
    assert (tf.transform.translation.x, tf.transform.translation.y) == pytest.approx((1.1, 0.05))
    assert messages.time_ns_from_msg(tf.header.stamp) == 100 * MS
    # A late subscriber to /tf_static gets every static transform in one latched message.
    assert [[t.child_frame_id for t in m.transforms] for m in late] == [["laser", "camera"]]
    with pytest.raises(TransformError, match="'gripper' does not exist"):
        watcher.lookup_transform("odom", "gripper")


class Undeclared(Node):
    """Looks up transforms without declaring uses_tf: under ROS 2 it would have no TF listener."""

    name = "undeclared"


def test_a_node_that_does_not_declare_uses_tf_gets_no_transforms_as_under_ros2():
    # The diffusion policy looked up its goal in TF without declaring it: the embedded host answered,
    # the ROS 2 host raised (caught: the goal read as zeros) and the learned policy drove blind.
    host = EmbeddedHost()
    host.add_node(UnicycleBaseNode, parameters={"initial_x_m": 1.0})
    node = host.add_node(Undeclared)
    host.run_for(0.1)
    with pytest.raises(TransformError, match="does not set uses_tf = True"):
        node.lookup_transform("odom", "base_link")


class ValueBroadcaster(Node):
    """Sends the same transforms as numbers or as messages (``as_numbers``), and looks them up."""

    name = "value_broadcaster"
    uses_tf = True
    as_numbers = True

    def send(self, items: list[Any], stamp_ns: int) -> None:
        stamp = messages.time_msg(stamp_ns)
        if self.as_numbers:
            frames = [(parent, child) for parent, child, _, _ in items]
            self.send_transform_values(frames, np.array([[*t, *q] for _, _, t, q in items]), stamp)
        else:
            self.send_transforms(transform_stamped_msgs_from_values(items, stamp))


def test_transforms_sent_as_numbers_publish_and_look_up_as_the_messages_do(caplog):
    items = [
        ("map", "odom", [1.0, 2.0, 0.0], [0.0, 0.0, 0.3, 0.9]),  # not normalised: the buffer normalises
        ("odom", "base_link", [0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]),
        ("map", "map", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]),  # refused, the others kept
        ("odom", "wheel", [0.0, float("nan"), 0.0], [0.0, 0.0, 0.0, 1.0]),  # refused: not finite
        ("odom", "caster", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]),  # refused: no rotation
    ]
    seen: dict[bool, Any] = {}
    for as_numbers in (True, False):
        host = EmbeddedHost()
        node = host.add_node(ValueBroadcaster)
        node.as_numbers = as_numbers
        tf: list[Any] = []
        host.participant("spy").create_subscription("/tf", TF_MESSAGE, tf.append, QoS(depth=10))
        node.send(items, 7 * MS)
        host.run_for(0.01)
        (msg,) = tf
        looked_up = node.lookup_transform("map", "base_link")
        fast, read_back = node.lookup("map", "base_link"), transform_from_msg(looked_up)
        assert fast.translation.tolist() == read_back.translation.tolist()
        assert fast.rotation.tolist() == read_back.rotation.tolist()
        serialized = (rosbags_messages.serialize(msg), rosbags_messages.serialize(looked_up))
        seen[as_numbers] = (*serialized, fast.translation.tolist(), fast.rotation.tolist())
        assert not host.tf.can_transform("odom", "wheel") and not host.tf.can_transform("odom", "caster")
    assert seen[True] == seen[False]
    for refused in ("map -> map", "odom -> wheel: transform has a non-finite", "odom -> caster"):
        assert caplog.text.count(f"ignored transform {refused}") == 2  # sent as numbers, as messages
