"""Bags as DDS implementations write them: every message read by the CDR rules, the unreadable skipped.

rclpy's Fast DDS gives a message the length its size calculation reserves, which aligns every
primitive sequence even when it is empty, and leaves the reserved bytes unwritten: a JointState
without efforts is 4 bytes longer than its fields, a ParameterEvent 8 (every ``ros2 launch``
records /parameter_events). The length allowed is computed from the message, not guessed.
"""

from __future__ import annotations

import os

import pytest
from rosbags.rosbag2 import Writer
from rosbags.serde import SerdeError

from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_runtime.recording.player import BagPlayer
from galley_runtime.rosbags_messages import deserialize, fast_dds_length, serialize, typestore


def _parameter_event():
    return messages.new(
        "rcl_interfaces/msg/ParameterEvent",
        node="/monitor",
        new_parameters=[{"name": "use_sim_time", "value": {"type": 1, "bool_value": True}}],
    )


def test_fast_dds_reserves_alignment_for_empty_sequences():
    joint_state = messages.new("sensor_msgs/msg/JointState", name=["waist"], position=[0.5], velocity=[0.1])
    exact = len(serialize(joint_state)) - 4
    assert fast_dds_length(joint_state, "sensor_msgs/msg/JointState") == exact + 4  # effort: aligned to 8
    event = _parameter_event()
    extra = fast_dds_length(event, "rcl_interfaces/msg/ParameterEvent") - (len(serialize(event)) - 4)
    assert extra > 0


@pytest.mark.parametrize("type_name", ["sensor_msgs/msg/JointState", "rcl_interfaces/msg/ParameterEvent"])
def test_a_message_padded_as_fast_dds_pads_it_reads_and_no_longer_one(type_name):
    msg = (
        _parameter_event()
        if type_name.startswith("rcl")
        else messages.new(type_name, name=["a", "b"], position=[1.0, 2.0], velocity=[0.0, 0.0])
    )
    raw = bytes(serialize(msg))
    length = 4 + fast_dds_length(msg, type_name)
    padded = raw + bytes([0xAB]) * (length - len(raw))  # unwritten bytes hold anything
    assert serialize(deserialize(padded, type_name)) == serialize(msg)
    with pytest.raises(SerdeError, match="size mismatch"):
        deserialize(padded + bytes(4), type_name)
    with pytest.raises(SerdeError, match="cannot be read"):
        deserialize(raw[: len(raw) // 2], type_name)


def test_messages_serialised_by_rclpy_with_fast_dds_read_back():
    """The bytes rclpy's rmw (Fast DDS, as PyPI's Jazzy wheels ship it) gives a bag, read back."""
    pytest.importorskip("rclpy", reason="rclpy is not importable: ROS 2 is not installed or not sourced")
    os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    from rcl_interfaces.msg import Parameter, ParameterEvent, ParameterValue
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    joint_state = JointState(name=["waist", "gripper"], position=[0.5, 1.0], velocity=[0.1, 0.0])
    read = deserialize(serialize_message(joint_state), "sensor_msgs/msg/JointState")
    assert list(read.name) == ["waist", "gripper"] and list(read.position) == [0.5, 1.0]
    assert len(read.effort) == 0
    event = ParameterEvent(
        node="/monitor",
        new_parameters=[Parameter(name="use_sim_time", value=ParameterValue(type=1, bool_value=True))],
    )
    read = deserialize(serialize_message(event), "rcl_interfaces/msg/ParameterEvent")
    assert read.node == "/monitor" and read.new_parameters[0].value.bool_value


def test_replay_skips_a_message_it_cannot_read_and_says_which(tmp_path):
    bag = tmp_path / "bag"
    store = typestore()
    with Writer(bag, version=Writer.VERSION_LATEST) as writer:
        topic = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store)
        for i in range(5):
            raw = serialize(messages.new("std_msgs/msg/String", data=f"hello {i}"))
            writer.write(topic, 1_000_000_000 + i * 100_000_000, raw if i != 2 else raw + bytes(16))
    heard = []
    host = EmbeddedHost()
    host.participant("listener").create_subscription(
        "/chatter", "std_msgs/msg/String", lambda m: heard.append(m.data), QoS(depth=10)
    )
    player = BagPlayer(bag)
    counts = player.play(host)
    player.close()
    host.shutdown()
    assert heard == ["hello 0", "hello 1", "hello 3", "hello 4"] and counts == {"/chatter": 4}
    (skipped,) = player.decoder.unreadable
    assert (skipped.topic, skipped.index, skipped.type) == ("/chatter", 2, "std_msgs/msg/String")
    assert "size mismatch" in skipped.reason
    assert player.decoder.summary()[0] == "skipped 1 message(s) that could not be read:"
