"""The recorder with the real simulator: bag and HDF5 agree, a SIGKILL loses at most one split,
metadata lands in the bag and the sidecar, and a nearly full disk is refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
from rosbags.rosbag2 import Reader

from galley_nodes.nodes.recorder import DiskSpaceError, RecorderConfig, RecorderNode
from galley_nodes.registry import NODES, load_node_class
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.recording.metadata_file import read_custom_data
from galley_runtime.rosbags_messages import deserialize
from galley_sim.sim_node import SimNode


def read_bag(path: Path) -> dict[str, list[tuple[int, bytes]]]:
    out: dict[str, list[tuple[int, bytes]]] = {}
    with Reader(path) as reader:
        for connection, t, raw in reader.messages():
            out.setdefault(connection.topic, []).append((t, bytes(raw)))
    return out


def test_bag_and_hdf5_of_an_episode_hold_the_same_messages(tmp_path):
    host = EmbeddedHost()
    recorder = host.add_node(
        RecorderNode,
        parameters={"output_dir": str(tmp_path), "bag_name": "ep", "hdf5": True, "split_period_s": 0.5},
    )
    host.add_node(SimNode, parameters={"seed": 3, "image_width": 64, "image_height": 48})
    host.run_for(1.2)
    host.shutdown()
    bag = read_bag(tmp_path / "ep")
    assert {"/tf", "/odom", "/camera/base/image_raw", "/camera/base/depth/image_raw", "/tf_static"} <= set(
        bag
    )
    assert len(bag["/odom"]) >= 50 and len(bag["/camera/top_down/image_raw"]) == 1  # latched, before start
    with h5py.File(tmp_path / "ep" / "episode.h5") as h5:
        assert set(bag) == {name for name in _topics(h5["topics"])}
        for topic, messages in bag.items():
            group = h5["topics/" + topic.strip("/")]
            assert list(group["timestamp_ns"][:]) == [t for t, _ in messages], topic
            if "image" in group:
                for (_, raw), image in zip(messages, group["image"], strict=True):
                    msg = deserialize(raw, "sensor_msgs/msg/Image")
                    assert np.array_equal(image.reshape(-1).view(np.uint8), msg.data), topic
                assert group["image"].compression == "lzf" and group["image"].chunks[0] == 1
            else:
                assert [bytes(c) for c in group["cdr"]] == [raw for _, raw in messages], topic
        episode = json.loads(h5.attrs["episode"])
    assert episode["scene"] == "kitchen" and episode["seed"] == 3 and episode["recording"]["complete"]
    assert recorder.counts["/odom"] == len(bag["/odom"])
    custom = read_custom_data(tmp_path / "ep")
    sidecar = json.loads((tmp_path / "ep" / "episode.json").read_text())
    assert custom["galley.scene"] == "kitchen" and json.loads(custom["galley.seed"]) == 3
    assert sidecar["software_version"].startswith("galley_nodes ") and sidecar["success"] is False


def _topics(group: Any, prefix: str = "") -> list[str]:
    found = []
    for name, item in group.items():
        if isinstance(item, h5py.Group):
            if "timestamp_ns" in item:
                found.append(f"{prefix}/{name}")
            found += _topics(item, f"{prefix}/{name}")
    return found


_CHILD = textwrap.dedent(
    """
    import sys
    from galley_runtime.embedded import EmbeddedHost
    from galley_nodes.nodes.recorder import RecorderNode
    from galley_sim.sim_node import SimNode

    host = EmbeddedHost()
    host.add_node(RecorderNode, parameters={"output_dir": sys.argv[1], "bag_name": "killed",
                                            "split_period_s": 0.5, "storage": sys.argv[2]})
    host.add_node(SimNode, parameters={"seed": 1, "cameras_enabled": False})
    while True:
        host.run_for(0.1)
        print(f"t={host.now_s:.3f}", flush=True)
    """
)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_recorder_killed_mid_episode_leaves_a_bag_readable_up_to_the_kill(tmp_path, storage):
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path), storage], stdout=subprocess.PIPE, text=True
    )
    last = 0.0
    assert child.stdout is not None
    for line in child.stdout:
        last = float(line.strip().removeprefix("t="))
        if last >= 3.0:
            break
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    bag = tmp_path / "killed"
    assert any(p.name.startswith(".writing_") for p in bag.iterdir())  # the split it was writing
    with Reader(bag) as reader:
        stamps = []
        for connection, t, raw in reader.messages():
            deserialize(raw, connection.msgtype)  # every message is whole
            stamps.append(t)
        custom = reader.storage.metadata.custom
    assert stamps == sorted(stamps) and stamps[0] < 0.5e9
    # Lost: the file being written, and (mcap) the one the writer's worker was still closing;
    # galley bag repair recovers both up to their last whole chunk.
    lost = 0.5 if storage == "sqlite3" else 2 * 0.5
    assert stamps[-1] >= (last - lost - 0.1) * 1e9, "more than the file being written (and closed) lost"
    assert custom["galley.scene"] == "kitchen" and json.loads(custom["galley.recording"])["complete"] is False


def test_the_recorder_refuses_to_start_on_a_nearly_full_disk(tmp_path):
    host = EmbeddedHost()
    with pytest.raises(DiskSpaceError, match=r"refuses to start: only \d+ MB free .*min_free_disk_mb"):
        host.add_node(RecorderNode, parameters={"output_dir": str(tmp_path), "min_free_disk_mb": 1e12})
    assert list(tmp_path.iterdir()) == []  # no bag folder started


def test_every_topic_a_galley_node_latches_is_recorded_latched():
    """Under DDS a recorder that subscribes volatile to a latched topic misses what was sent before it."""
    latched = {
        "/" + p.topic.lstrip("/")
        for name in NODES
        for p in load_node_class(name).publishes
        if p.qos.durability == "transient_local"
    }
    assert latched <= set(RecorderConfig().latched_topics), latched - set(RecorderConfig().latched_topics)


def test_a_launch_session_records_one_bag_per_instruction_and_marks_the_failed(tmp_path):
    """per_instruction: three instructions, the second aborted, give three finished, readable bags."""
    from galley_runtime.qos import QoS

    host = EmbeddedHost()
    recorder = host.add_node(
        RecorderNode,
        parameters={"output_dir": str(tmp_path), "bag_name": "session", "per_instruction": True},
    )
    talk = host.participant("user")
    static = talk.create_publisher("/tf_static", "tf2_msgs/msg/TFMessage", QoS.latched())
    instruction = talk.create_publisher("/task/instruction", "std_msgs/msg/String", QoS(depth=10))
    plan = talk.create_publisher("/task/plan", "galley_msgs/msg/TaskPlan", QoS.latched())
    events = talk.create_publisher("/episode/events", "galley_msgs/msg/EpisodeEvent", QoS(depth=10))
    static.publish(messages.new("tf2_msgs/msg/TFMessage", transforms=[{"child_frame_id": "odom"}]))
    host.run_for(0.5)
    for i, outcome in enumerate(("done", "abort", "done")):
        text = f"instruction {i}"
        instruction.publish(messages.new("std_msgs/msg/String", data=text))
        host.run_for(0.3)
        plan.publish(messages.new("galley_msgs/msg/TaskPlan", instruction=text, steps=["pick the bowl"]))
        host.run_for(0.3)
        for kind in (0, 1 if outcome == "done" else 3, 4):  # started, succeeded or ABORT, done
            events.publish(
                messages.new("galley_msgs/msg/EpisodeEvent", kind=kind, step_index=0, step="pick the bowl")
            )
            host.run_for(0.2)
        host.run_for(1.0)  # after an ABORT nothing is recorded until the next instruction
    host.shutdown()
    assert [p.name for p in recorder.bags] == ["session_1", "session_2_failed", "session_3"]
    for i, path in enumerate(recorder.bags):
        bag = read_bag(path)
        assert len(bag["/tf_static"]) == 1  # each bag read on its own
        assert len(bag["/task/instruction"]) == 1 and len(bag["/task/plan"]) == 1
        info = json.loads((path / "episode.json").read_text())
        assert info["instruction"] == f"instruction {i}" and info["recording"]["complete"]
        assert info["success"] == (i != 1)
    assert (
        "aborted by the monitor"
        in json.loads((recorder.bags[1] / "episode.json").read_text())["recording"]["stop_reason"]
    )
