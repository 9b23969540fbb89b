"""``galley replay BAG [--rate R]``: play a recorded bag into the embedded host with nodes on top.

The bag's messages are published at their recorded times on the host's clock (/clock follows the
bag's stamps), and the chosen nodes (default: the monitor, with config/galley.yaml) run on them as
they would live. The monitor's recorded outputs are left out so that only its new verdicts appear;
they are printed, with the number of messages played per topic. The monitor's verdicts are its
checks at the end of each step (``pass`` / ``FAIL`` on /monitor/events) and the abort that ends an
episode (``ABORT`` on /episode/events); the executor's own events, which the bag plays on
/episode/events too, are not verdicts and are not printed.

The monitor does not watch the rate of a topic that the bag holds no message of (a ``galley run``
without ``--video`` records the camera topics empty, and its monitor did not watch them either):
judged on the replay, such a topic would abort every episode after one rate window. The command
says which topics it leaves out. Under ROS 2, ``ros2 bag play BAG`` plays galley's bags (rosbag2,
mcap or sqlite3, CDR, standard type names).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from galley_cli import existing_file, positive_number
from galley_cli.errors import UsageError
from galley_cli.view import add_view_option, viewing
from galley_episodes.overrides import monitor_rate_rules
from galley_nodes.registry import NODES, load_node_class
from galley_runtime.config_files import default_params_files
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.msg_constants import ABORT, EPISODE_DONE, STEP_FAILED, STEP_STARTED, STEP_SUCCEEDED
from galley_runtime.qos import QoS
from galley_runtime.recording.player import BagPlayer, skip_monitor_output
from galley_runtime.recording.staging import check_bag

__all__ = ["KIND_NAMES", "add_parser", "replay"]

#: galley_msgs/EpisodeEvent kinds as printed; the monitor's verdicts are pass, FAIL and ABORT.
KIND_NAMES = {
    STEP_STARTED: "start",
    STEP_SUCCEEDED: "pass",
    STEP_FAILED: "FAIL",
    ABORT: "ABORT",
    EPISODE_DONE: "done",
}


def kind_name(kind: int) -> str:
    """The printed name of an EpisodeEvent kind (a kind from a newer galley_msgs: its number)."""
    return KIND_NAMES.get(int(kind), f"kind {int(kind)}")


def replay(
    bag: Path, *, nodes: list[str], params_files: list[Path], rate: float | None = None, quiet: bool = False
) -> list[Any]:
    """Replay ``bag`` through ``nodes``; returns the monitor's verdicts (EpisodeEvent messages)."""
    player = BagPlayer(bag)
    host = EmbeddedHost(params_files=params_files)
    verdicts: list[Any] = []
    listener = host.participant("galley_replay")
    # /monitor/events holds only the monitor's verdicts; on /episode/events its one kind is the
    # ABORT, the executor publishes every other kind there (also with ``rule`` set).
    listener.create_subscription(
        "/monitor/events", "galley_msgs/msg/EpisodeEvent", verdicts.append, QoS(depth=1000)
    )
    listener.create_subscription(
        "/episode/events",
        "galley_msgs/msg/EpisodeEvent",
        lambda m: verdicts.append(m) if int(m.kind) == ABORT else None,
        QoS(depth=1000),
    )
    player.start(host)
    for name in nodes:
        parameters = _recorded_rates(player, params_files, quiet) if name == "monitor" else {}
        host.add_node(load_node_class(name), parameters=parameters)

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
        for line in player.decoder.summary():
            print(line)
        print(f"the monitor's verdicts: {len(verdicts)}" if verdicts else "the monitor gave no verdict")
        for v in verdicts:
            t = v.header.stamp.sec + v.header.stamp.nanosec * 1e-9
            print(f"  {t:8.2f} s  {kind_name(v.kind):5s} {v.rule}: {v.reason}")
    return verdicts


def _recorded_rates(player: Any, params_files: list[Path], quiet: bool) -> dict[str, Any]:
    """The monitor's rate_rules without the topics of which the bag holds no message."""
    recorded = {c.topic for c in player.connections if c.msgcount > 0}
    rules = monitor_rate_rules(params_files, lambda t: t in recorded)
    left_out = [rule.split()[0] for rule in monitor_rate_rules(params_files, lambda t: t not in recorded)]
    if left_out and not quiet:
        print(f"note: the monitor does not watch the rate of {', '.join(left_out)}: the bag has none of them")
    return {"rate_rules": rules}


def _run(args: argparse.Namespace) -> int:

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
    with viewing(args.view, scene=_bag_scene(args.bag) if args.view is not None else None):
        replay(args.bag, nodes=args.node or ["monitor"], params_files=params, rate=args.rate)
    return 0


def _node_name(text: str) -> str:
    """argparse type of --node: a galley node's name."""
    if text not in NODES:
        raise argparse.ArgumentTypeError(f"no galley node {text!r}; known nodes: {', '.join(sorted(NODES))}")
    return text


def add_parser(sub: Any) -> None:
    p = sub.add_parser("replay", help="play a bag into the embedded host and run the monitor on it")
    p.add_argument("bag", type=Path, help="bag folder (rosbag2: metadata.yaml and .mcap/.db3 files)")
    p.add_argument(
        "--rate",
        type=positive_number,
        default=None,
        help="simulated seconds per wall second (default: as fast as possible)",
    )
    p.add_argument(
        "--node",
        action="append",
        type=_node_name,
        help="node to run on the bag (repeatable; default: monitor)",
    )
    p.add_argument(
        "--params",
        action="append",
        type=existing_file,
        help="ROS 2 params file (default: config/galley.yaml)",
    )
    add_view_option(p)
    p.set_defaults(run=_run)


def _bag_scene(bag: Path) -> Any:
    """The scene a galley bag was recorded in (metadata.yaml's galley.scene), for the live view."""
    import yaml  # noqa: PLC0415 (deferred: only with --view)

    from galley_runtime.config_files import find_scene  # noqa: PLC0415 (deferred: only with --view)

    meta = bag / "metadata.yaml"
    info = yaml.safe_load(meta.read_text()).get("rosbag2_bagfile_information", {}) if meta.is_file() else {}
    name = (info.get("custom_data") or {}).get("galley.scene")
    return find_scene(name) if name else None
