"""A bag's metadata.yaml as rosbag2 Jazzy reads it (``ros2 bag info``, ``ros2 bag play``).

rosbag2 decodes metadata.yaml (version 9) field by field with yaml-cpp and refuses the whole file
when one field has the wrong YAML kind: ``custom_data: null``, which rosbags writes for a bag
without custom data, stopped ``ros2 bag info`` with "bad conversion". The checks below are the
kinds rosbag2_storage's ``yaml.hpp`` and ``qos.cpp`` (jazzy) decode; the topics' type hashes are
compared with the ones rosidl generated for the ROS 2 message packages installed beside galley.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from rosbags.rosbag2 import Reader

from galley_runtime.embedded.rosbags_messages import RosbagsMessages, serialize, typestore
from galley_runtime.qos import QoS
from galley_runtime.recording.metadata_file import load_metadata, update_custom_data
from galley_runtime.recording.rosbags_writer import RosbagsWriter

MSG = RosbagsMessages()
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
