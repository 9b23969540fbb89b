"""Message classes of the embedded host: ROS defaults, conversions, CDR and rosbag2 (mcap)."""

from __future__ import annotations

import array
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import Reader, StoragePlugin, Writer

from galley_runtime import messages, msg_constants, rosbags_messages
from galley_runtime.messages import MessageError


def test_every_jazzy_and_galley_type_has_defaults_that_survive_cdr():
    store = rosbags_messages.typestore()
    for type_name in sorted(store.fielddefs):
        msg = messages.new(type_name)
        raw = rosbags_messages.serialize(msg)
        back = rosbags_messages.deserialize(raw, type_name)
        assert rosbags_messages.serialize(back) == raw, type_name


def test_galley_msgs_are_registered_from_the_msg_files():
    names = list(rosbags_messages.iter_galley_types())
    assert {"galley_msgs/msg/ArmGoal", "galley_msgs/msg/TaskPlan", "galley_msgs/msg/ActionStatus"} <= set(
        names
    )
    goal_cls = messages.backend().get_class("galley_msgs/msg/ArmGoal")
    assert goal_cls.PLACE == 1  # constants come from the .msg file


def test_new_fills_nested_fields_from_dicts_and_converts_sequences():
    scan = messages.new(
        "sensor_msgs/msg/LaserScan",
        header={"frame_id": "laser", "stamp": {"sec": 3, "nanosec": 5}},
        ranges=[1.0, 2.5],
        intensities=array.array("f", [0.5, 0.25]),
    )
    assert scan.header.frame_id == "laser" and scan.header.stamp.sec == 3
    assert isinstance(scan.ranges, np.ndarray) and scan.ranges.dtype == np.float32
    np.testing.assert_array_equal(scan.intensities, [0.5, 0.25])
    image = messages.new("sensor_msgs/msg/Image", data=b"\x01\x02\x03")
    assert image.data.dtype == np.uint8 and image.data.tolist() == [1, 2, 3]
    info = messages.new("sensor_msgs/msg/CameraInfo")
    assert info.k.shape == (9,)
    with pytest.raises(MessageError, match=r"needs shape \(9,\)"):
        messages.new("sensor_msgs/msg/CameraInfo", k=[1.0, 2.0])


def test_unknown_types_and_fields_are_named():
    with pytest.raises(MessageError, match=r"unknown message type 'geometry_msgs/msg/Twst'.*Twist"):
        messages.new("geometry_msgs/msg/Twst")
    with pytest.raises(MessageError, match=r"no field 'linar'.*linear"):
        messages.new("geometry_msgs/msg/Twist", linar={"x": 1.0})


def test_a_list_assigned_after_construction_is_found():
    scan = messages.new("sensor_msgs/msg/LaserScan")
    assert rosbags_messages.find_unconverted_sequence(scan) is None
    scan.ranges = [1.0]
    assert rosbags_messages.find_unconverted_sequence(scan) == "ranges"
    path = messages.new("nav_msgs/msg/Path", poses=[{"header": {"frame_id": "map"}}])
    assert rosbags_messages.find_unconverted_sequence(path) is None


def sample_messages():
    plan = messages.new(
        "galley_msgs/msg/TaskPlan",
        header={"frame_id": "map", "stamp": messages.time_msg(1_500_000_000)},
        instruction="Move the bowl to the green zone",
        steps=["move to the blue zone", "pick the bowl", "move to the green zone", "place the bowl"],
    )
    goal = messages.new(
        "galley_msgs/msg/ArmGoal",
        action=1,
        object_name="bowl",
        target_pose={"header": {"frame_id": "map"}, "pose": {"position": {"x": 1.0, "y": -0.5, "z": 0.9}}},
    )
    twist = messages.new("geometry_msgs/msg/Twist", linear={"x": 0.18}, angular={"z": -0.7})
    scan = messages.new("sensor_msgs/msg/LaserScan", ranges=np.linspace(0.1, 5.0, 360, dtype=np.float32))
    return [
        ("/task/plan", "galley_msgs/msg/TaskPlan", plan),
        ("/arm/goal", "galley_msgs/msg/ArmGoal", goal),
        ("/cmd_vel", "geometry_msgs/msg/Twist", twist),
        ("/scan", "sensor_msgs/msg/LaserScan", scan),
    ]


def test_cdr_round_trip_of_standard_and_galley_messages():
    for _, type_name, msg in sample_messages():
        back = rosbags_messages.deserialize(rosbags_messages.serialize(msg), type_name)
        assert messages.type_name_of(back) == type_name
        assert rosbags_messages.serialize(back) == rosbags_messages.serialize(msg)
    plan = rosbags_messages.deserialize(
        rosbags_messages.serialize(sample_messages()[0][2]), "galley_msgs/msg/TaskPlan"
    )
    assert plan.steps[1] == "pick the bowl" and plan.header.stamp.nanosec == 500_000_000


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3])
def test_rosbag2_write_and_read(tmp_path, storage):
    bag = tmp_path / "bag"
    store = rosbags_messages.typestore()
    samples = sample_messages()
    with Writer(bag, version=Writer.VERSION_LATEST, storage_plugin=storage) as writer:
        connections = {
            topic: writer.add_connection(topic, type_name, typestore=store) for topic, type_name, _ in samples
        }
        for i, (topic, _, msg) in enumerate(samples):
            writer.write(connections[topic], 1_000 + i, rosbags_messages.serialize(msg))
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["storage_identifier"] == ("mcap" if storage == StoragePlugin.MCAP else "sqlite3")
    assert info["message_count"] == len(samples)
    with Reader(bag) as reader:
        read = [
            (c.topic, c.msgtype, t, store.deserialize_cdr(raw, c.msgtype)) for c, t, raw in reader.messages()
        ]
    assert [(topic, t) for topic, _, t, _ in read] == [(s[0], 1_000 + i) for i, s in enumerate(samples)]
    for (_, type_name, msg), (_, msgtype, _, back) in zip(samples, read, strict=True):
        assert msgtype == type_name
        assert rosbags_messages.serialize(back) == rosbags_messages.serialize(msg)
    assert read[1][3].object_name == "bowl" and read[1][3].target_pose.pose.position.z == 0.9


def test_defaults_other_than_zero_are_filled_as_rclpy_does():
    q = messages.new("geometry_msgs/msg/Quaternion")
    assert (q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 1.0)
    pose = messages.new("geometry_msgs/msg/Pose", position={"x": 1.0})
    assert pose.orientation.w == 1.0
    assert messages.new("geometry_msgs/msg/Quaternion", w=0.5).w == 0.5


@pytest.mark.parametrize(
    ("msg_file", "prefix", "names"),
    [
        ("EpisodeEvent.msg", "", ("STEP_STARTED", "STEP_SUCCEEDED", "STEP_FAILED", "ABORT", "EPISODE_DONE")),
        ("ActionStatus.msg", "ACTION_", ("IDLE", "ACTIVE", "SUCCEEDED", "FAILED", "CANCELED")),
        ("ArmGoal.msg", "ARM_", ("PICK", "PLACE", "STOP")),
    ],
)
def test_msg_constants_are_the_msg_files_constants(msg_file, prefix, names):
    text = (Path("src/galley_msgs/msg") / msg_file).read_text()
    declared = {m[1]: int(m[2]) for m in re.finditer(r"^uint8 (\w+)=(\d+)", text, re.MULTILINE)}
    assert set(declared) == set(names)
    assert {name: getattr(msg_constants, prefix + name) for name in names} == declared


def test_galley_msgs_come_from_the_source_checkout_when_run_from_it(monkeypatch):
    """An editable install reads the checkout's .msg files, so a new message needs no reinstall."""
    monkeypatch.delenv("GALLEY_MSGS_DIR", raising=False)
    checkout = Path(rosbags_messages.__file__).resolve().parents[2] / "galley_msgs" / "msg"
    assert checkout.is_dir()
    assert rosbags_messages.find_galley_msg_dir() == checkout
