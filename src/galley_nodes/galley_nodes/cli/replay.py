"""``galley replay BAG [--rate R]``: play a recorded bag into the embedded host with nodes on top.

The bag's messages are published at their recorded times on the host's clock (/clock follows the
bag's stamps), and the chosen nodes (default: the monitor, with config/galley.yaml) run on them as
they would live. The monitor's recorded outputs are left out so that only its new verdicts appear;
they are printed, with the number of messages played per topic. Under ROS 2, ``ros2 bag play BAG``
plays galley's bags (rosbag2, mcap or sqlite3, CDR, standard type names).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from galley_nodes.config_files import default_params_files

__all__ = ["add_parser", "replay"]


def replay(
    bag: Path, *, nodes: list[str], params_files: list[Path], rate: float | None = None, quiet: bool = False
) -> list[Any]:
    """Replay ``bag`` through ``nodes``; returns the monitor's verdicts (EpisodeEvent messages)."""
    from galley_nodes.embedded import EmbeddedHost
    from galley_nodes.qos import QoS
    from galley_nodes.recording.player import BagPlayer, skip_monitor_output
    from galley_nodes.registry import load_node_class

    player = BagPlayer(bag)
    host = EmbeddedHost(params_files=params_files)
    verdicts: list[Any] = []
    listener = host.participant("galley_replay")
    for topic in ("/episode/events", "/monitor/events"):
        listener.create_subscription(
            topic,
            "galley_msgs/msg/EpisodeEvent",
            lambda m: verdicts.append(m) if m.rule else None,
            QoS(depth=1000),
        )
    player.start(host)
    for name in nodes:
        host.add_node(load_node_class(name))

    def progress(fraction: float) -> None:
        if not quiet:
            print(f"\rreplaying {bag.name}: {fraction:4.0%}", end="", flush=True)

    counts = player.play(
        host, rate=rate, skip=skip_monitor_output if "monitor" in nodes else None, progress=progress
    )
    host.shutdown()
    player.close()
    if not quiet:
        total = sum(counts.values())
        print(f"\rreplayed {total} messages on {len(counts)} topics, {player.duration_s:.1f} s of bag time")
        kinds = {1: "pass", 2: "FAIL", 3: "ABORT"}
        for v in verdicts:
            t = v.header.stamp.sec + v.header.stamp.nanosec * 1e-9
            print(f"  {t:8.2f} s  {kinds.get(v.kind, v.kind):5s} {v.rule}: {v.reason}")
    return verdicts


def _run(args: argparse.Namespace) -> int:
    from galley_nodes.cli.errors import UsageError
    from galley_nodes.recording.staging import check_bag

    if args.rate is not None and not args.rate > 0:
        raise UsageError(f"--rate {args.rate} must be > 0 (simulated seconds per wall second)")
    # An interrupted recording is refused with the repair named, rather than replayed without its
    # unfinished file (the monitor would judge a shorter episode); a live one plays its finished files.
    note = check_bag(args.bag)
    if note is not None:
        print(f"galley replay: {note}", file=sys.stderr)
    if not (args.bag / "metadata.yaml").exists() and args.bag.suffix not in (".mcap", ".db3"):
        raise UsageError(
            f"{args.bag} is not a bag: a rosbag2 folder with metadata.yaml, or an .mcap/.db3 file"
        )
    params = args.params
    if params is None:
        params = default_params_files()
    replay(args.bag, nodes=args.node or ["monitor"], params_files=params, rate=args.rate)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("replay", help="play a bag into the embedded host and run the monitor on it")
    p.add_argument("bag", type=Path, help="bag folder (rosbag2: metadata.yaml and .mcap/.db3 files)")
    p.add_argument(
        "--rate",
        type=float,
        default=None,
        help="simulated seconds per wall second (default: as fast as possible)",
    )
    p.add_argument("--node", action="append", help="node to run on the bag (repeatable; default: monitor)")
    p.add_argument(
        "--params", action="append", type=Path, help="ROS 2 params file (default: config/galley.yaml)"
    )
    p.set_defaults(run=_run)
