"""The rosbags writer's splits happen off the writing thread (galley_runtime/recording/rosbags_writer.py).

Under ROS 2 the recorder writes from its subscription callbacks; a split that closed the finished
file there (seconds of YAML in rosbags on a busy machine) held every message that arrived meanwhile
and stamped them all at once: each file began with a gap in every topic, and the monitor replaying
the bag aborted on /scan's rate. Here rosbags' close is held until the test lets it go.
"""

from __future__ import annotations

import threading

import pytest
from rosbags.rosbag2 import Reader, Writer

from galley_runtime.qos import QoS
from galley_runtime.recording.rosbags_writer import RosbagsWriter
from galley_runtime.rosbags_messages import RosbagsMessages, serialize

STRING = "std_msgs/msg/String"
MSG = RosbagsMessages()


def test_writes_go_on_into_the_next_file_while_the_finished_one_is_closed(tmp_path, monkeypatch):
    closing, release = threading.Event(), threading.Event()
    close = Writer.close

    def held_close(self: Writer) -> None:
        closing.set()
        assert release.wait(30), "the test never released the close"
        close(self)

    monkeypatch.setattr(Writer, "close", held_close)
    writer = RosbagsWriter(tmp_path / "bag", split_period_s=1.0)
    writer.add_topic("/chatter", STRING, QoS())
    sent = []
    for i in range(20):  # 100 ms apart: file 0 holds 0.0-0.9 s, file 1 from 1.0 s
        data = serialize(MSG.new(STRING, data=f"message {i}"))
        writer.write("/chatter", data, i * 100_000_000)
        sent.append((i * 100_000_000, data))
    assert closing.wait(30), "file 0 was never closed"
    assert writer.files == []  # still closing, and every write after the split returned meanwhile
    writer.add_topic("/late", STRING, QoS())  # a topic discovered now reaches the open files
    writer.write("/late", serialize(MSG.new(STRING, data="late")), 1_950_000_000)
    release.set()
    writer.close()

    assert writer.files == ["bag_0.mcap", "bag_1.mcap"]
    assert not list((tmp_path / "bag").glob(".writing_*"))  # the file opened ahead is removed
    with Reader(tmp_path / "bag") as reader:
        got = [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]
    assert [(t, d) for topic, t, d in got if topic == "/chatter"] == sent
    assert [t for topic, t, _ in got if topic == "/late"] == [1_950_000_000]


def test_an_error_in_the_worker_is_raised_by_the_next_split_or_close(tmp_path, monkeypatch):
    def failing_close(self: Writer) -> None:
        raise OSError("disk full")

    writer = RosbagsWriter(tmp_path / "bag", split_period_s=1.0)
    writer.add_topic("/chatter", STRING, QoS())
    data = serialize(MSG.new(STRING, data="x"))
    writer.write("/chatter", data, 0)
    monkeypatch.setattr(Writer, "close", failing_close)
    writer.write("/chatter", data, 1_000_000_000)  # file 0 closes in the worker, and fails there
    with pytest.raises(OSError, match="disk full"):
        writer.close()
