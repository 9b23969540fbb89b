"""A bag's metadata.yaml as rosbag2 Jazzy reads it (``ros2 bag info``, ``ros2 bag play``).

rosbag2 decodes metadata.yaml (version 9) field by field with yaml-cpp and refuses the whole file
when one field has the wrong YAML kind: ``custom_data: null``, which rosbags writes for a bag
without custom data, stopped ``ros2 bag info`` with "bad conversion". The checks below are the
kinds rosbag2_storage's ``yaml.hpp`` and ``qos.cpp`` (jazzy) decode; the topics' type hashes are
compared with the ones rosidl generated for the ROS 2 message packages installed beside galley.
The same checks hold for a bag rosbag2's own writer (rosbag2_py, the recorder's under ROS 2) wrote;
those tests skip where rosbag2_py is not importable (CI: PyPI's wheels have no rosbag2).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from rosbags.rosbag2 import Reader

from galley_runtime import messages
from galley_runtime.qos import QoS
from galley_runtime.recording.metadata_file import load_metadata, update_custom_data
from galley_runtime.recording.open_writer import open_bag_writer
from galley_runtime.recording.rosbags_writer import RosbagsWriter
from galley_runtime.recording.writer import BagWriterError
from galley_runtime.rosbags_messages import RosbagsMessages, serialize, typestore

MSG = RosbagsMessages()
STRING = "std_msgs/msg/String"
NO_ROSBAG2 = (
    "rosbag2_py is not importable: rosbag2 is C++ and not among PyPI's wheels (build it from source "
    "as docs/tutorials/ros2.md's 'Checking it without a ROS 2 install' says, or source a ROS 2 install)"
)
_POLICIES = {
    "history": {"keep_last", "keep_all", "system_default", "unknown"},
    "reliability": {"reliable", "best_effort", "system_default", "best_available", "unknown"},
    "durability": {"volatile", "transient_local", "system_default", "best_available", "unknown"},
    "liveliness": {"automatic", "manual_by_topic", "system_default", "best_available", "unknown"},
}


def check_jazzy_metadata(bag: Path) -> dict[str, Any]:
    """The bag's metadata, after checking each field has the YAML kind rosbag2 Jazzy decodes."""
    info = load_metadata(bag)
    assert info is not None
    assert info["version"] == 9
    for key in ("storage_identifier", "compression_format", "compression_mode", "ros_distro"):
        assert isinstance(info[key], str), key
    assert isinstance(info["duration"]["nanoseconds"], int)
    assert isinstance(info["starting_time"]["nanoseconds_since_epoch"], int)
    assert isinstance(info["message_count"], int)
    assert isinstance(info["custom_data"], dict), "custom_data must be a mapping ({} when empty)"
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in info["custom_data"].items())
    assert all((bag / path).is_file() for path in info["relative_file_paths"])
    for f in info["files"]:
        assert isinstance(f["path"], str) and isinstance(f["message_count"], int)
        assert isinstance(f["starting_time"]["nanoseconds_since_epoch"], int)
        assert isinstance(f["duration"]["nanoseconds"], int)
    for entry in info["topics_with_message_count"]:
        topic = entry["topic_metadata"]
        assert isinstance(entry["message_count"], int)
        for key in ("name", "type", "serialization_format", "type_description_hash"):
            assert isinstance(topic[key], str), key
        assert isinstance(topic["offered_qos_profiles"], list)  # version 9: a list, not a string
        for qos in topic["offered_qos_profiles"]:
            for policy, names in _POLICIES.items():
                assert qos[policy] in names, (policy, qos[policy])
            assert isinstance(qos["depth"], int)
            assert isinstance(qos["avoid_ros_namespace_conventions"], bool)
            for duration in ("deadline", "lifespan", "liveliness_lease_duration"):
                assert {type(qos[duration]["sec"]), type(qos[duration]["nsec"])} == {int}
    return info


def record(path: Path, custom: dict[str, str] | None) -> None:
    writer = RosbagsWriter(path, split_period_s=0.05)
    writer.add_topic("/chatter", "std_msgs/msg/String", QoS())
    writer.add_topic("/status", "std_msgs/msg/String", QoS.latched())
    for i in range(10):
        data = serialize(MSG.new("std_msgs/msg/String", data=f"message {i}"))
        writer.write("/status" if i == 0 else "/chatter", data, 10_000_000 * (i + 1))
    if custom is not None:
        writer.set_custom_data(custom)
    writer.close()


def test_a_bag_without_custom_data_writes_an_empty_mapping_not_null(tmp_path):
    record(tmp_path / "bag", None)
    text = (tmp_path / "bag" / "metadata.yaml").read_text()
    assert "custom_data: {}" in text and "custom_data: null" not in text
    info = check_jazzy_metadata(tmp_path / "bag")
    assert len(info["relative_file_paths"]) > 1  # split files, merged
    assert info["custom_data"] == {}
    with Reader(tmp_path / "bag") as reader:
        assert sum(1 for _ in reader.messages()) == 10


def test_custom_data_set_and_then_emptied_stays_a_mapping(tmp_path):
    record(tmp_path / "bag", {"galley.scene": "kitchen"})
    info = check_jazzy_metadata(tmp_path / "bag")
    assert info["custom_data"] == {"galley.scene": "kitchen"}
    assert {t["topic_metadata"]["name"]: t["message_count"] for t in info["topics_with_message_count"]} == {
        "/status": 1,
        "/chatter": 9,
    }
    # a bag that rosbags wrote directly (or an older galley) holds null: any rewrite repairs it
    path = tmp_path / "bag" / "metadata.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["rosbag2_bagfile_information"]["custom_data"] = None
    path.write_text(yaml.safe_dump(raw))
    update_custom_data(path, {})
    assert check_jazzy_metadata(tmp_path / "bag")["custom_data"] == {}


def rosidl_type_hashes() -> dict[str, str]:
    """RIHS01 hashes from the type description JSON files of the installed ROS 2 message packages."""
    hashes: dict[str, str] = {}
    share = Path(sys.prefix) / "share"
    for pkg in ("std_msgs", "geometry_msgs", "sensor_msgs", "nav_msgs", "rosgraph_msgs", "diagnostic_msgs"):
        for path in sorted((share / pkg / "msg").glob("*.json")):
            for entry in json.loads(path.read_text())["type_hashes"]:
                hashes[entry["type_name"]] = entry["hash_string"]
    return hashes


def test_recorded_type_hashes_are_rosidls():
    expected = rosidl_type_hashes()
    if not expected:
        pytest.skip(f"no rosidl type descriptions under {Path(sys.prefix) / 'share'} (no ROS 2 wheels)")
    store = typestore()
    # rosbags hashes a ``char`` field as uint8, rosidl as char: std_msgs/Char is the one type that
    # differs, and no galley message has a char field.
    known = {n: d for n, d in expected.items() if n in store.fielddefs and n != "std_msgs/msg/Char"}
    assert len(known) > 50
    assert {name: store.hash_rihs01(name) for name in known} == known


# -- rosbag2's own writer (rosbag2_py), the recorder's under ROS 2 ----------------------------------


def record_with_rosbag2_py(bag: Path) -> Any:
    """Ten messages over 2.7 s on two topics, split every second; returns the closed writer."""
    pytest.importorskip("rosbag2_py", reason=NO_ROSBAG2)
    from galley_runtime.recording.rosbag2_writer import Rosbag2PyWriter

    writer = Rosbag2PyWriter(bag, split_period_s=1.0)
    writer.add_topic("/chatter", STRING, QoS(depth=7), type_hash=typestore().hash_rihs01(STRING))
    writer.add_topic("/status", STRING, QoS.latched())  # a hash the host could not tell
    for i in range(10):
        data = serialize(MSG.new(STRING, data=f"message {i}"))
        writer.write("/status" if i == 0 else "/chatter", data, 1_000_000_000 + 300_000_000 * i)
    writer.set_custom_data({"galley.scene": "kitchen"})  # after open: rosbag2_py cannot take it then
    writer.close()
    return writer


def test_rosbag2_py_closes_the_bag_at_close_with_offered_qos_type_hashes_and_custom_data(tmp_path):
    writer = record_with_rosbag2_py(tmp_path / "bag")  # still referenced: closed by close(), not by gc
    info = check_jazzy_metadata(tmp_path / "bag")
    assert len(info["relative_file_paths"]) == 3  # split every second of the messages' time
    assert info["custom_data"] == {"galley.scene": "kitchen"}
    topics = {t["topic_metadata"]["name"]: t for t in info["topics_with_message_count"]}
    assert {name: t["message_count"] for name, t in topics.items()} == {"/status": 1, "/chatter": 9}
    chatter, status = topics["/chatter"]["topic_metadata"], topics["/status"]["topic_metadata"]
    assert chatter["type_description_hash"] == typestore().hash_rihs01(STRING)
    assert status["type_description_hash"] == ""
    [offered] = chatter["offered_qos_profiles"]
    assert (offered["history"], offered["depth"], offered["reliability"], offered["durability"]) == (
        "keep_last",
        7,
        "reliable",
        "volatile",
    )
    [offered] = status["offered_qos_profiles"]
    assert (offered["depth"], offered["durability"]) == (1, "transient_local")
    with Reader(tmp_path / "bag") as reader:
        texts = [typestore().deserialize_cdr(raw, c.msgtype).data for c, _, raw in reader.messages()]
    assert texts == [f"message {i}" for i in range(10)]
    with pytest.raises(BagWriterError, match="not added"):
        writer.write("/chatter", b"", 0)
    writer.close()  # a second close does nothing


def test_ros2_bag_info_reads_a_bag_rosbag2_py_wrote(tmp_path):
    record_with_rosbag2_py(tmp_path / "bag")
    ros2 = shutil.which("ros2")
    if ros2 is None or importlib.util.find_spec("ros2bag") is None:
        pytest.skip("ros2 bag is not installed (ros2cli and rosbag2's ros2bag)")
    info = subprocess.run(
        [ros2, "bag", "info", str(tmp_path / "bag")], check=False, capture_output=True, text=True, timeout=60
    )
    assert info.returncode == 0, info.stderr
    assert "Messages:          10" in info.stdout
    assert "Topic: /chatter | Type: std_msgs/msg/String | Count: 9" in info.stdout


def test_auto_writes_with_rosbags_under_rclpy_too(tmp_path):
    rclpy_messages = pytest.importorskip("galley_runtime.ros2.messages", reason="rclpy is not importable")
    previous = messages.use_backend(rclpy_messages.RclpyMessages())
    try:
        writer = open_bag_writer(tmp_path / "bag")
    finally:
        messages.use_backend(previous)
    assert isinstance(writer, RosbagsWriter)
    writer.close()


def test_rosbags_refuses_a_bag_where_rosbag2_py_left_an_action_topic_undefined(tmp_path):
    """Why ``auto`` prefers rosbags: Jazzy's rosbag2 cannot look up action types' definitions."""
    pytest.importorskip("rosbag2_py", reason=NO_ROSBAG2)
    from galley_runtime.recording.rosbag2_writer import Rosbag2PyWriter

    feedback = "nav2_msgs/action/NavigateToPose_FeedbackMessage"
    writer = Rosbag2PyWriter(tmp_path / "bag")
    writer.add_topic("/navigate_to_pose/_action/feedback", feedback, QoS())
    writer.write("/navigate_to_pose/_action/feedback", serialize(MSG.new(feedback)), 1)
    writer.close()
    assert check_jazzy_metadata(tmp_path / "bag")["message_count"] == 1
    with pytest.raises(KeyError, match="unknown"), Reader(tmp_path / "bag"):
        pass


def test_rosbag2_py_without_the_storage_plugin_is_a_clear_error(tmp_path, monkeypatch):
    rosbag2_py = pytest.importorskip("rosbag2_py", reason=NO_ROSBAG2)
    monkeypatch.setattr(rosbag2_py, "get_registered_writers", lambda: {"mcap"})  # no sqlite3 plugin
    with pytest.raises(BagWriterError, match="no 'sqlite3' storage plugin"):
        open_bag_writer(tmp_path / "bag", storage="sqlite3", implementation="rosbag2_py")
    assert not (tmp_path / "bag").exists()
