"""The perception node in the embedded host against the real simulator: perceived/<name> frames and
/perception/objects from the robot's camera, and never the simulator's ground truth."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from galley_nodes.nodes.perception import PerceptionNode
from galley_nodes.registry import load_node_class
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS

#: Episode 101's base pose looking at the table: the apple and the bowl in view (bench/perception.py).
SEED, VIEW = 101, (-0.90, 0.71, -1.02)


def test_perception_declares_no_ground_truth_input():
    topics = [s.topic for s in PerceptionNode.subscribes]
    assert topics and not any(t.lstrip("/").startswith("sim/") for t in topics)
    assert all(t.startswith("/camera/base/") for t in topics)


def run_view(
    parameters: dict[str, Any], *, colour_after_depth: bool = False
) -> tuple[EmbeddedHost, Any, list[Any], list[str]]:
    """The simulator and perception (with ``parameters``), the base teleported to VIEW, 0.35 s run.

    ``colour_after_depth``: each colour image reaches perception just after its depth image (as
    DDS may deliver them), through a relay. Returns the host, the sim node, the /perception/objects
    messages and every frame perception looked up in TF.
    """
    host = EmbeddedHost()
    sim = host.add_node(
        load_node_class("sim"), parameters={"seed": SEED, "image_width": 160, "image_height": 120}
    )
    remap = {"/camera/base/image_raw": "/relayed/image_raw"} if colour_after_depth else {}
    node = host.add_node(PerceptionNode, parameters=parameters, remappings=remap)
    if colour_after_depth:
        relay = host.participant("relay")
        colour: list[Any] = []
        out = relay.create_publisher("/relayed/image_raw", "sensor_msgs/msg/Image", QoS())
        relay.create_subscription("/camera/base/image_raw", "sensor_msgs/msg/Image", colour.append, QoS())
        relay.create_subscription(
            "/camera/base/depth/image_raw", "sensor_msgs/msg/Image", lambda _: out.publish(colour[-1]), QoS()
        )
    looked_up: list[str] = []
    lookup = node.host.lookup_transform

    def recording(target: str, source: str, time_ns: Any = None) -> Any:
        looked_up.extend([target, source])
        return lookup(target, source, time_ns)

    node.host.lookup_transform = recording  # type: ignore[method-assign]
    received: list[Any] = []
    probe = host.participant("probe")
    probe.create_subscription(
        "/perception/objects", "galley_msgs/msg/PerceivedObjects", received.append, QoS()
    )
    x, y, yaw = VIEW
    probe.create_publisher("/sim/teleport", "geometry_msgs/msg/PoseStamped", QoS()).publish(
        messages.new(
            "geometry_msgs/msg/PoseStamped",
            header={"frame_id": "base_link"},
            pose={
                "position": {"x": x, "y": y},
                "orientation": {"z": math.sin(yaw / 2), "w": math.cos(yaw / 2)},
            },
        )
    )
    host.run_for(0.35)
    return host, sim, received, looked_up


@pytest.mark.parametrize(
    ("colour_weight", "colour_after_depth"),
    [(1.0, False), (0.0, False), (1.0, True)],
    ids=["shape and colour", "shape alone", "colour image after the depth image"],
)
def test_the_node_publishes_perceived_frames_near_the_truth_without_looking_up_object_frames(
    colour_weight, colour_after_depth
):
    host, sim, received, looked_up = run_view(
        {"colour_weight": colour_weight}, colour_after_depth=colour_after_depth
    )
    truth = sim.sim.object_poses()
    latest = received[-1]
    assert latest.header.frame_id == "map"
    seen = {o.name: o for o in latest.objects if o.age == 0.0}
    assert {"apple", "bowl"} <= set(seen)
    for name in ("apple", "bowl"):
        estimate, _ = host.tf.lookup("map", f"perceived/{name}", None)
        assert np.linalg.norm(estimate.translation - truth[name].translation) < 0.015
        assert 0.0 < seen[name].confidence <= 1.0
        assert seen[name].shape == sim.scene.object(name).shape
    assert looked_up and not any(frame.startswith("object/") for frame in looked_up)
    node = host.node("perception")
    assert len(node.frame_seconds) == 3  # every frame processed (3 frames in 0.35 s at 10 Hz), none dropped
    host.shutdown()
