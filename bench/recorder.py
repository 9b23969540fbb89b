"""Recorder throughput with both cameras on, against rosbags' own writer, and dropped messages.

    python bench/recorder.py [--quick]

1. Captures the messages of the ``sim`` node (base RGB-D and wrist RGB at 10 Hz, 320 x 240, with
   square_driver moving the base) over some simulated seconds, then writes that same stream with
   each writer, serialising every message as the recorder does, and times it (wall clock):
   the baseline is ``rosbags.rosbag2.Writer`` writing one mcap file; then galley's crash-safe split
   writer (mcap, sqlite3) and the split writer plus the HDF5 episode file.
2. Runs the sim and the ``recorder`` node together in the embedded host at the default rates and
   counts, per topic, messages published after the recorder subscribed against messages written:
   the difference is what the recorder dropped (the target is 0).

Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from rosbags.rosbag2 import StoragePlugin, Writer

from galley_nodes.nodes.recorder import RecorderNode
from galley_nodes.nodes.square_driver import SquareDriverNode
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_runtime.recording.hdf5 import Hdf5EpisodeWriter
from galley_runtime.recording.rosbags_writer import RosbagsWriter
from galley_runtime.rosbags_messages import serialize, typestore
from galley_sim.sim_node import SimNode

SIM = {"seed": 1, "cameras_enabled": True}
DRIVER = {"side_m": 1.0, "speed_mps": 0.18, "laps": 5}


def capture(seconds: float) -> list[tuple[str, str, int, Any]]:
    """(topic, type, receive time ns, message) of everything the sim publishes for ``seconds``."""
    host = EmbeddedHost()
    host.add_node(SimNode, parameters=SIM)
    host.add_node(SquareDriverNode, parameters=DRIVER)
    host.run_for(0.2)
    stream: list[tuple[str, str, int, Any]] = []
    probe = host.participant("capture")
    for topic, types in host.bus.topic_names_and_types():
        if topic != "/clock":
            probe.create_subscription(
                topic,
                types[0],
                lambda m, t=topic, ty=types[0]: stream.append((t, ty, host.time_ns, m)),
                QoS(depth=1000),
            )
    host.run_for(seconds)
    host.shutdown()
    return stream


def time_writer(kind: str, stream: list[tuple[str, str, int, Any]], folder: Path) -> tuple[float, int]:
    """Wall seconds to serialise and write ``stream``, and the bytes of message data."""
    path = folder / kind
    nbytes = 0
    start = time.perf_counter()
    if kind == "rosbags Writer":
        with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
            connections: dict[str, Any] = {}
            for topic, type_name, t, msg in stream:
                if topic not in connections:
                    connections[topic] = writer.add_connection(topic, type_name, typestore=typestore())
                data = serialize(msg)
                writer.write(connections[topic], t, data)
                nbytes += len(data)
        return time.perf_counter() - start, nbytes
    storage = "sqlite3" if "sqlite3" in kind else "mcap"
    bag = RosbagsWriter(path, storage=storage, split_period_s=5.0)
    h5 = Hdf5EpisodeWriter(path / "episode.h5") if "HDF5" in kind else None
    seen: set[str] = set()
    for topic, type_name, t, msg in stream:
        if topic not in seen:
            bag.add_topic(topic, type_name, QoS())
            seen.add(topic)
        data = serialize(msg)
        bag.write(topic, data, t)
        if h5 is not None:
            h5.write(topic, type_name, t, data, msg)
        nbytes += len(data)
    bag.close()
    if h5 is not None:
        h5.close()
    return time.perf_counter() - start, nbytes


def live_drops(seconds: float, folder: Path) -> tuple[int, int, float]:
    """Messages dropped and written by the recorder node running with the sim, and the run's RTF."""
    host = EmbeddedHost()
    host.add_node(SimNode, parameters=SIM)
    host.add_node(SquareDriverNode, parameters=DRIVER)
    recorder = host.add_node(RecorderNode, parameters={"output_dir": str(folder), "bag_name": "live"})
    host.run_for(0.01)
    published0 = {t: s["published"] for t, s in host.bus.statistics().items()}
    written0 = dict(recorder.counts)
    start = time.perf_counter()
    host.run_for(seconds)
    wall = time.perf_counter() - start
    stats = host.bus.statistics()
    dropped = written = 0
    for topic, count in recorder.counts.items():
        published = stats[topic]["published"] - published0.get(topic, 0)
        new = count - written0.get(topic, 0)
        dropped += published - new
        written += new
    host.shutdown()
    return dropped, written, seconds / wall


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="short runs (well under a minute)")
    args = parser.parse_args()
    seconds = 2.0 if args.quick else 8.0
    folder = Path(tempfile.mkdtemp(prefix="galley_bench_recorder_"))
    try:
        print(f"capturing {seconds:g} s of the sim with both cameras ...", flush=True)
        stream = capture(seconds)
        rows = []
        for kind in (
            "rosbags Writer",
            "galley split mcap",
            "galley split sqlite3",
            "galley split mcap + HDF5",
        ):
            wall, nbytes = time_writer(kind, stream, folder)
            rows.append((kind, wall, nbytes))
            print(f"  {kind}: {wall:.2f} s", flush=True)
        print("recording live ...", flush=True)
        dropped, written, rtf = live_drops(seconds, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    base_wall = rows[0][1]
    print(f"\n{len(stream)} messages, {rows[0][2] / 1e6:.1f} MB over {seconds:g} s of simulated time")
    print(f"{'writer':28s} {'MB/s':>8s} {'msg/s':>9s} {'vs baseline':>12s}")
    figures: dict[str, float] = {}
    for kind, wall, nbytes in rows:
        mbps, mps = nbytes / 1e6 / wall, len(stream) / wall
        print(f"{kind:28s} {mbps:8.1f} {mps:9.0f} {base_wall / wall:11.2f}x")
        key = kind.replace("galley split ", "").replace(" + ", "_").replace(" ", "_").lower()
        figures[f"{key}_mb_per_s"] = round(mbps, 1)
        figures[f"{key}_msgs_per_s"] = round(mps)
    print(
        f"\nlive: sim + recorder at default rates, {written} messages written, {dropped} dropped, "
        f"real-time factor {rtf:.1f}x"
    )
    figures["ratio_mcap_to_rosbags_writer"] = round(base_wall / rows[1][1], 3)
    figures["live_dropped_messages"] = dropped
    figures["live_written_messages"] = written
    figures["live_rtf_with_recorder"] = round(rtf, 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
