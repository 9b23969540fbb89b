"""``galley bag repair``: a killed recording's unfinished file is recovered up to its last whole chunk.

A real recording process is killed mid-file (mcap and sqlite3); replay refuses the bag with one
line naming the repair, the repair runs through the CLI, and the bag then reads further than its
finished files did. Unit tests cut a real mcap file at chosen bytes, and check that the repair is
idempotent, keeps what the bag had, finishes a repair or an adoption cut short, and leaves a bag
that is being recorded alone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from rosbags.rosbag2 import Reader

from galley_cli.main import main
from galley_learning.policy.dataset import find_bags
from galley_runtime.qos import QoS
from galley_runtime.recording import repair
from galley_runtime.recording.dataset import iter_episodes
from galley_runtime.recording.metadata_file import read_custom_data, update_custom_data
from galley_runtime.recording.repair import RepairError, repair_bag
from galley_runtime.recording.rosbags_writer import RosbagsWriter
from galley_runtime.recording.staging import UnfinishedBagError, check_bag, interrupted_bags
from galley_runtime.rosbags_messages import RosbagsMessages, serialize

try:  # optional, as for galley itself: the repair of .mcap files needs it
    from mcap.reader import make_reader
except ImportError:
    make_reader = None

needs_mcap = pytest.mark.skipif(make_reader is None, reason=f"needs {repair.MCAP_REQUIREMENT}")

MSG = RosbagsMessages()


def read_all(bag: Path) -> list[tuple[str, int, bytes]]:
    with Reader(bag) as reader:
        return [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]


def write_bag(path: Path, count: int, *, t0_ns: int = 0) -> list[tuple[str, int, bytes]]:
    """A finished one-file bag of ``count`` 50 kB messages on two topics, 10 ms apart."""
    writer = RosbagsWriter(path, split_period_s=1e6)
    writer.add_topic("/chatter", "std_msgs/msg/String", QoS())
    writer.add_topic("/status", "std_msgs/msg/String", QoS.latched())
    sent = []
    for i in range(count):
        topic = "/status" if i % 10 == 0 else "/chatter"
        data = serialize(MSG.new("std_msgs/msg/String", data=f"{i:06d}" + "x" * 50_000))
        writer.write(topic, data, t0_ns + i * 10_000_000)
        sent.append((topic, t0_ns + i * 10_000_000, data))
    writer.set_custom_data({"galley.scene": "kitchen"})
    writer.close()
    return sent


def chunks(mcap_file: Path) -> list[tuple[int, int, int]]:
    """(start offset, end of its message indexes, last message's time) of each chunk of a finished file."""
    with mcap_file.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None
    return [
        (
            c.chunk_start_offset,
            c.chunk_start_offset + c.chunk_length + c.message_index_length,
            c.message_end_time,
        )
        for c in summary.chunk_indexes
    ]


def stage_cut(source: Path, bag: Path, index: int, size: int) -> Path:
    """The first ``size`` bytes of ``source`` as ``bag``'s unfinished file ``index``, as a kill leaves it."""
    staging = bag / f".writing_{index}"
    staging.mkdir(parents=True)
    target = staging / f".writing_{index}.mcap"
    target.write_bytes(source.read_bytes()[:size])
    return target


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> tuple[Path, list[tuple[str, int, bytes]]]:
    """A real mcap file galley's writer finished (five 1 MiB chunks), and the messages in it."""
    bag = tmp_path_factory.mktemp("src") / "full"
    sent = write_bag(bag, 100, t0_ns=10**10)
    return bag / "full_0.mcap", sent


@needs_mcap
@pytest.mark.parametrize(
    "where", ["mid_chunk", "after_indexes", "before_footer", "whole_file", "in_a_length_field"]
)
def test_a_cut_mcap_file_is_recovered_up_to_its_last_whole_chunk(tmp_path, source, capsys, where):
    full, sent = source
    ranges = chunks(full)
    assert len(ranges) >= 4
    cut = {
        "mid_chunk": (ranges[2][0] + ranges[2][1]) // 2,  # the kill came while chunk 3 was written
        "after_indexes": ranges[1][1],  # between chunks: 2 chunks and their indexes are whole
        "before_footer": ranges[-1][1],  # every chunk, but no summary or footer
        "whole_file": full.stat().st_size,  # closed, but killed before its metadata.yaml was written
        "in_a_length_field": ranges[2][0] + 4,  # chunk 3's record begun: its opcode and half its length
    }[where]
    whole = {"mid_chunk": 2, "after_indexes": 2, "in_a_length_field": 2}.get(where, len(ranges))
    expected = [m for m in sent if m[1] <= ranges[whole - 1][2]]
    bag = tmp_path / "bag"
    stage_cut(full, bag, 0, cut)

    assert main(["replay", str(bag)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"recover what it holds with: galley bag repair {bag}" in err
    assert "no metadata.yaml" in err

    assert main(["bag", "repair", str(bag)]) == 0
    out = capsys.readouterr().out
    assert f"{len(expected):,} messages on 2 topics" in out and "-> bag_0.mcap" in out
    ending = "the file was complete" if where == "whole_file" else "read up to its last whole record"
    assert ending in out
    assert read_all(bag) == expected  # every whole chunk's messages, bytes and times as written
    assert sorted(p.name for p in bag.iterdir()) == ["bag_0.mcap", "metadata.yaml"]
    with Reader(bag) as reader, Reader(full.parent) as original:
        assert {
            (c.topic, c.msgtype, c.digest, tuple(c.ext.offered_qos_profiles)) for c in reader.connections
        } == {
            (c.topic, c.msgtype, c.digest, tuple(c.ext.offered_qos_profiles)) for c in original.connections
        }  # types, definitions' hashes and offered QoS (/status latched) as recorded
        assert reader.message_count == len(expected)


@needs_mcap
def test_a_file_cut_before_its_first_chunk_holds_nothing_and_says_so(tmp_path, source, capsys):
    full, _ = source
    bag = tmp_path / "bag"
    stage_cut(full, bag, 0, chunks(full)[0][0] + 100)
    assert main(["bag", "repair", str(bag)]) == 1
    out = capsys.readouterr().out
    assert "nothing to recover: no whole chunk" in out and "could be recovered; it holds no message" in out
    assert list(bag.iterdir()) == []


@needs_mcap
def test_repair_keeps_the_finished_files_and_custom_data_and_is_idempotent(tmp_path, source):
    full, sent = source
    bag = tmp_path / "bag"
    first = write_bag(bag, 30)  # the finished file 0, before the cut one
    update_custom_data(bag / "metadata.yaml", {"note": "kept"})
    (bag / "episode.json").write_text(
        json.dumps({"scene": "kitchen", "seed": 4, "recording": {"complete": False}})
    )
    ranges = chunks(full)
    stage_cut(full, bag, 1, (ranges[1][0] + ranges[1][1]) // 2)
    before = read_all(bag)
    assert before == first  # rosbags reads the finished part only
    with pytest.raises(
        UnfinishedBagError, match=r"\.writing_1/\.writing_1\.mcap \(\d+\.\d MB\) was never finished"
    ):
        check_bag(bag)
    assert interrupted_bags(tmp_path) == [bag]
    with pytest.raises(UnfinishedBagError, match=f"staged file of an unfinished recording of {bag};"):
        check_bag(bag / ".writing_1" / ".writing_1.mcap")

    report = repair_bag(bag)
    after = read_all(bag)
    assert len(after) > len(before) and after == first + [m for m in sent if m[1] <= ranges[0][2]]
    assert [t for _, t, _ in after] == sorted(t for _, t, _ in after)
    assert report.files == 2 and report.messages == len(after)
    custom = read_custom_data(bag)
    assert custom["note"] == "kept" and custom["galley.scene"] == "kitchen" and custom["galley.seed"] == "4"
    assert json.loads(custom["galley.repair"])[0]["file"] == "bag_1.mcap"
    assert check_bag(bag) is None and interrupted_bags(tmp_path) == []

    listing = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in bag.iterdir()}
    again = repair_bag(bag)
    assert not again.changed and again.files == 2 and again.messages == len(after)
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in bag.iterdir()} == listing


@needs_mcap
def test_a_repair_or_an_adoption_cut_short_is_finished_by_the_next_repair(tmp_path, source):
    full, sent = source
    ranges = chunks(full)
    bag = tmp_path / "bag"
    stage_cut(full, bag, 0, ranges[1][1])
    (bag / ".repair_0").mkdir()  # a repair killed while it wrote its output
    (bag / ".repair_0" / ".repair_0.mcap").write_bytes(b"\x89MCAP0\r\n")
    # File 1 was closed by rosbags (its metadata.yaml written) and moved, but never listed.
    other = write_bag(tmp_path / "other", 5, t0_ns=10**11)
    (bag / ".writing_1").mkdir()
    shutil.copy(tmp_path / "other" / "metadata.yaml", bag / ".writing_1" / "metadata.yaml")
    meta = (bag / ".writing_1" / "metadata.yaml").read_text().replace("other_0.mcap", ".writing_1.mcap")
    (bag / ".writing_1" / "metadata.yaml").write_text(meta)
    shutil.copy(tmp_path / "other" / "other_0.mcap", bag / "bag_1.mcap")

    report = repair_bag(bag)
    assert [r.file for r in report.recovered] == ["bag_0.mcap", "bag_1.mcap"]
    assert read_all(bag) == [m for m in sent if m[1] <= ranges[1][2]] + other
    assert sorted(p.name for p in bag.iterdir()) == ["bag_0.mcap", "bag_1.mcap", "metadata.yaml"]


def test_a_bag_being_recorded_is_read_in_part_and_never_repaired(tmp_path, capsys):
    writer = RosbagsWriter(tmp_path / "live", split_period_s=1.0)
    writer.add_topic("/chatter", "std_msgs/msg/String", QoS())
    data = serialize(MSG.new("std_msgs/msg/String", data="hello"))
    writer.write("/chatter", data, 0)
    with pytest.raises(UnfinishedBagError, match="is being recorded and has no finished file yet"):
        check_bag(tmp_path / "live")
    writer.write("/chatter", data, 1_500_000_000)  # file 1 being written; file 0 finished by the worker
    writer.settle()
    assert "still being recorded: reading its finished files" in (check_bag(tmp_path / "live") or "")
    assert interrupted_bags(tmp_path) == []
    assert main(["bag", "repair", str(tmp_path / "live")]) == 2
    assert "is being recorded (or repaired) by a running process" in capsys.readouterr().err
    writer.close()
    assert check_bag(tmp_path / "live") is None and len(read_all(tmp_path / "live")) == 2


def test_repair_names_what_is_not_a_bag(tmp_path, capsys):
    assert main(["bag", "repair", str(tmp_path / "missing")]) == 2
    assert "is not a bag folder" in capsys.readouterr().err
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "loose_0.mcap").write_bytes(b"")
    assert main(["bag", "repair", str(tmp_path / "loose")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ros2 bag reindex" in err
    with pytest.raises(RepairError, match="not a galley bag"):
        repair_bag(tmp_path / "loose")


_RECORDING = textwrap.dedent(
    """
    import sys
    from galley_runtime.embedded import EmbeddedHost
    from galley_nodes.nodes.recorder import RecorderNode
    from galley_sim.sim_node import SimNode

    host = EmbeddedHost()
    host.add_node(RecorderNode, parameters={"output_dir": sys.argv[1], "bag_name": "killed",
                                            "storage": sys.argv[2], "split_period_s": 20.0})
    host.add_node(SimNode, parameters={"seed": 1, "cameras_enabled": False})
    while True:
        host.run_for(0.1)
    """
)


def _staged_enough(bag: Path, storage: str) -> bool:
    """A finished file, and an unfinished one with a whole chunk (mcap) or an open transaction (sqlite3)."""
    if not (bag / "metadata.yaml").exists():  # file 0 not finished (the next one is opened ahead)
        return False
    for staging in bag.glob(".writing_*"):
        if staging.name == ".writing_0":
            continue
        name = staging / f"{staging.name}.{'mcap' if storage == 'mcap' else 'db3'}"
        try:
            if storage == "mcap" and name.stat().st_size > 2.2 * 2**20:
                return True
            if storage == "sqlite3" and Path(f"{name}-journal").stat().st_size > 0:
                return True
        except FileNotFoundError:
            pass
    return False


@pytest.mark.parametrize("storage", [pytest.param("mcap", marks=needs_mcap), "sqlite3"])
def test_a_killed_recording_is_refused_by_replay_then_repaired_and_read_past_its_finished_files(
    tmp_path, storage, capsys
):
    child = subprocess.Popen(
        [sys.executable, "-c", _RECORDING, str(tmp_path), storage], stdout=subprocess.DEVNULL
    )
    bag = tmp_path / "killed"
    deadline = time.monotonic() + 120
    try:
        while not _staged_enough(bag, storage):
            assert child.poll() is None, "the recording process ended by itself"
            assert time.monotonic() < deadline, "the recording never reached a second file"
            time.sleep(0.02)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    finished = read_all(bag)  # what rosbags reads of the killed bag: its finished files

    assert main(["replay", str(bag)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "its recording was interrupted" in err
    assert err.rstrip().endswith(f"recover what it holds with: galley bag repair {bag}")

    assert main(["bag", "repair", str(bag)]) == 0
    out = capsys.readouterr().out
    repaired = read_all(bag)
    stamps = [t for _, t, _ in repaired]
    assert stamps == sorted(stamps) and repaired[: len(finished)] == finished
    if storage == "mcap":
        assert len(repaired) > len(finished), "the unfinished file's whole chunks were recovered"
        assert "read up to its last whole record" in out
    else:
        assert repaired == finished and "SQLite rolled back the transaction" in out
    assert not list(bag.glob(".writing_*")) and not list(bag.glob(".repair_*"))
    custom = read_custom_data(bag)
    assert json.loads(custom["galley.recording"])["complete"] is False  # from episode.json, as it stood

    assert main(["replay", str(bag)]) == 0
    assert "replayed" in capsys.readouterr().out


@needs_mcap
def test_dataset_readers_refuse_a_collection_with_an_interrupted_bag_and_name_the_repair(
    tmp_path, source, capsys
):
    full, _ = source
    collection = tmp_path / "collection"
    write_bag(collection / "episodes" / "ep_1" / "bag", 3)
    stage_cut(full, collection / "failed" / "ep_0" / "bag", 0, chunks(full)[1][1])  # failed: never read
    assert find_bags(collection) == [collection / "episodes" / "ep_1" / "bag"]
    broken = collection / "episodes" / "ep_2" / "bag"
    stage_cut(full, broken, 0, chunks(full)[1][1])
    with pytest.raises(UnfinishedBagError, match=f"galley bag repair {broken}"):
        find_bags(collection)
    with pytest.raises(UnfinishedBagError, match=f"galley bag repair {broken}"):
        next(iter_episodes(collection / "episodes"))
    assert main(["train", "--data", str(collection), "--out", str(tmp_path / "run"), "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1 and "whose recording was interrupted" in err and not (tmp_path / "run").exists()
    )
    repair_bag(broken)
    assert find_bags(collection) == [collection / "episodes" / "ep_1" / "bag", broken]


def test_without_the_mcap_package_the_repair_says_what_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(repair, "StreamReader", None)
    bag = tmp_path / "bag"
    (bag / ".writing_0").mkdir(parents=True)
    (bag / ".writing_0" / ".writing_0.mcap").write_bytes(b"\x89MCAP0\r\n")
    assert main(["bag", "repair", str(bag)]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and f"needs the Python package mcap: pip install {repair.MCAP_REQUIREMENT}" in err
    )
    assert (bag / ".writing_0" / ".writing_0.mcap").exists() and not list(bag.glob(".repair_*"))
