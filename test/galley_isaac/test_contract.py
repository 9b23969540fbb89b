"""The Isaac Sim graphs publish and subscribe exactly the MuJoCo simulator node's topics and frames.

The simulator side is read from SimNode's declaration (topics, types, QoS) and from what it really
publishes when it runs in the embedded host (header frames, TF edges on /tf and /tf_static).
"""

from __future__ import annotations

from typing import Any

import pytest

from galley_isaac.config import load_bridge_config
from galley_isaac.contract import (
    MUJOCO_ONLY,
    MUJOCO_ONLY_SUBSCRIPTIONS,
    TfEdge,
    endpoints,
    resolve_topic,
    tf_edges,
)
from galley_isaac.graphs import bridge_graphs
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_sim.sim_node import SimNode

TF_TOPICS = {"/tf": "tf2_msgs/msg/TFMessage", "/tf_static": "tf2_msgs/msg/TFMessage"}


@pytest.fixture(scope="module")
def graphs(request):
    return bridge_graphs(load_bridge_config(request.config.rootpath / "config" / "isaac" / "kitchen.yaml"))


@pytest.fixture(scope="module")
def mujoco() -> dict[str, Any]:
    """What the MuJoCo sim node publishes in 0.2 s: first message per topic, TF edges."""
    host = EmbeddedHost(publish_clock=False)
    probe = host.participant("probe")
    first: dict[str, Any] = {}
    edges: set[TfEdge] = set()
    for p in SimNode.publishes:
        topic = resolve_topic(p.topic, "")
        probe.create_subscription(topic, p.type, lambda m, t=topic: first.setdefault(t, m), p.qos)

    def tf(static: bool):
        def take(msg: Any) -> None:
            for t in msg.transforms:
                edges.add(TfEdge(t.header.frame_id, t.child_frame_id, static))

        return take

    probe.create_subscription("/tf", "tf2_msgs/msg/TFMessage", tf(False), QoS(depth=1000))
    probe.create_subscription("/tf_static", "tf2_msgs/msg/TFMessage", tf(True), QoS.latched(depth=100))
    params = {"publish_clock": True, "image_width": 32, "image_height": 24}
    host.add_node(SimNode, parameters=params)
    host.run_for(0.2)
    host.shutdown()
    return {"first": first, "edges": edges}


def declared(kind: str) -> dict[str, str]:
    entries = SimNode.publishes if kind == "publishes" else SimNode.subscribes
    return {resolve_topic(e.topic, ""): e.type for e in entries}


def test_the_graphs_publish_the_simulators_topics_with_its_types_except_the_evaluation_extras(graphs):
    published = {(e.topic, e.type) for e in endpoints(graphs) if e.publishes}
    expected = {(t, ty) for t, ty in declared("publishes").items() if t not in MUJOCO_ONLY}
    assert published == expected | set(TF_TOPICS.items())
    # The extras are named explicitly, with the reason and the Isaac Sim substitute.
    assert set(MUJOCO_ONLY) == {"/sim/ground_truth/base_pose", "/sim/contacts", "/sim/preflight"}
    assert set(MUJOCO_ONLY) <= set(declared("publishes"))
    assert "TF map -> odom -> base_link" in MUJOCO_ONLY["/sim/ground_truth/base_pose"]


def test_each_topic_has_one_publisher_except_tf(graphs):
    topics = [e.topic for e in endpoints(graphs) if e.publishes and e.topic not in TF_TOPICS]
    assert sorted(topics) == sorted(set(topics))


def test_the_graphs_subscribe_to_the_simulators_command_topics(graphs):
    subscribed = {e.topic: e.type for e in endpoints(graphs) if not e.publishes}
    commands = {t: ty for t, ty in declared("subscribes").items() if t not in MUJOCO_ONLY_SUBSCRIPTIONS}
    extras = {"/sim/teleport", "/sim/render_top_down"}
    assert set(MUJOCO_ONLY_SUBSCRIPTIONS) == extras <= set(declared("subscribes"))
    assert (
        subscribed
        == commands
        == {
            "/cmd_vel": "geometry_msgs/msg/Twist",
            "/arm/joint_command": "sensor_msgs/msg/JointState",
        }
    )


def test_latched_topics_match(graphs):
    latched = {e.topic for e in endpoints(graphs) if e.latched and e.topic not in TF_TOPICS}
    expected = {
        resolve_topic(p.topic, "")
        for p in SimNode.publishes
        if p.qos.durability == "transient_local" and resolve_topic(p.topic, "") not in MUJOCO_ONLY
    }
    assert latched == expected == {"/camera/top_down/image_raw"}
    assert all(e.latched == (e.topic == "/tf_static") for e in endpoints(graphs) if e.topic in TF_TOPICS)


def test_message_frames_are_the_ones_the_simulator_stamps(graphs, mujoco):
    first = mujoco["first"]
    checked = 0
    for e in endpoints(graphs):
        if not e.publishes or e.topic in TF_TOPICS:
            continue
        msg = first[e.topic]  # the simulator published it within 0.2 s
        if e.frame is None:
            assert not hasattr(msg, "header"), e.topic
        else:
            assert msg.header.frame_id == e.frame, e.topic
            checked += 1
        if e.child_frame is not None:
            assert msg.child_frame_id == e.child_frame
    assert checked == 10  # odom, joint_states, scan, imu, 4 images, 2 camera_infos


def test_tf_edges_are_the_simulators_exactly(graphs, mujoco):
    ours = tf_edges(graphs)
    theirs = mujoco["edges"]
    only_ours, only_theirs = sorted(map(str, ours - theirs)), sorted(map(str, theirs - ours))
    assert ours == theirs, f"only in the graphs: {only_ours}; only in MuJoCo: {only_theirs}"
    children = [e.child for e in ours]
    assert sorted(children) == sorted(set(children))  # a tree: one parent per frame
    assert {e.child for e in ours if e.parent == "map"} >= {
        f"object/{n}" for n in ("apple", "bowl", "cup", "fork", "plate")
    }


def test_a_namespace_moves_relative_topics_but_not_clock(request):
    import dataclasses

    config = load_bridge_config(request.config.rootpath / "config" / "isaac" / "kitchen.yaml")
    topics = {e.topic for e in endpoints(bridge_graphs(dataclasses.replace(config, namespace="robot1")))}
    assert "/robot1/odom" in topics and "/robot1/cmd_vel" in topics and "/clock" in topics
    assert "/odom" not in topics
