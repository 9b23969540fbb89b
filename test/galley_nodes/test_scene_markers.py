from __future__ import annotations

from typing import Any

from galley_nodes.registry import load_node_class
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_runtime.rosbags_messages import serialize


def test_the_kitchen_and_the_robot_are_published_as_latched_markers():
    host = EmbeddedHost()
    host.add_node(load_node_class("scene_markers"))
    late: list[Any] = []
    host.participant("rviz").create_subscription(
        "/markers", "visualization_msgs/msg/MarkerArray", late.append, QoS.latched()
    )
    host.run_for(0.1)
    markers = late[0].markers
    namespaces = {m.ns for m in markers}
    assert namespaces == {"furniture", "zones", "zone_names", "robot"}
    assert sorted(m.text for m in markers if m.ns == "zone_names") == [
        "blue",
        "green",
        "purple",
        "red",
        "yellow",
    ]
    assert {m.header.frame_id for m in markers if m.ns == "robot"} >= {
        "base_link",
        "shoulder_link",
        "gripper_link",
    }
    assert len({m.id for m in markers}) == len(markers)
    assert serialize(late[0])  # a valid message, as rviz will receive it
