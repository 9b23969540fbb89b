"""``galley topics``: every topic of the stack in a mode, with its type, producers and consumers.

The nodes are the stack's (galley_nodes.stack) for the chosen mode; each node's topics are those
its class declares (``publishes`` / ``subscribes``). Under Isaac Sim its bridge graphs stand in for
the simulator node; topics nothing in the stack produces show where they come from instead.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from galley_cli.errors import UsageError
from galley_nodes import stack
from galley_nodes.registry import load_node_class
from galley_runtime.embedded.names import resolve_name

__all__ = ["TopicRow", "add_parser", "topic_table"]


@dataclass
class TopicRow:
    """One topic of the graph: its message type, who publishes it and who subscribes to it."""

    topic: str
    type: str
    producers: list[str] = field(default_factory=list)
    consumers: list[str] = field(default_factory=list)


def topic_table(mode: stack.Mode) -> list[TopicRow]:
    """Every topic a node of ``mode`` declares, sorted by name (no namespace)."""
    rows: dict[str, TopicRow] = {}
    nodes = [(name, name) for name in stack.nodes(mode)]
    if mode.simulator == "isaac" and mode.graph != "square":
        nodes.insert(0, (stack.SIMULATOR_STAND_IN, "sim"))
    for shown, name in nodes:
        cls = load_node_class(name)
        for p in cls.publishes:
            topic = resolve_name(p.topic, "", name)
            if name == "sim" and not mode.cameras and topic in stack.CAMERA_TOPICS:
                continue  # declared, never published without cameras
            rows.setdefault(topic, TopicRow(topic, p.type)).producers.append(shown)
        for s in cls.subscribes:
            topic = resolve_name(s.topic, "", name)
            rows.setdefault(topic, TopicRow(topic, s.type)).consumers.append(shown)
    return [rows[t] for t in sorted(rows)]


def format_table(mode: stack.Mode) -> str:
    """The table ``galley topics`` prints; ``*`` marks a topic no node produces, explained below it."""
    rows = topic_table(mode)
    outside = stack.unproduced(mode)
    cells = [("topic", "type", "producers", "consumers")]
    for r in rows:
        producers = ", ".join(r.producers) or ("*" if r.topic in outside else "(none)")
        cells.append((r.topic, r.type, producers, ", ".join(r.consumers) or "-"))
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(3)) + "  " + c[3] for c in cells]
    lines += [f"* {t}: {why}" for t, why in outside.items() if any(r.topic == t for r in rows)]
    return "\n".join(line.rstrip() for line in lines)


def _run(args: argparse.Namespace) -> int:
    try:
        mode = stack.Mode(args.graph, args.simulator, args.mode, cameras=args.cameras, record=args.record)
    except ValueError as err:
        raise UsageError(str(err)) from None
    print(format_table(mode))
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "topics",
        help="list every topic of the stack with its type, producers and consumers",
        description="List every topic of the stack (galley_nodes/stack.py) in a mode, with its message "
        "type, the nodes that publish it and the nodes that subscribe to it.",
    )
    p.add_argument(
        "--mode",
        choices=("oracle", "policy"),
        default="oracle",
        help="who drives: the oracle nodes or a diffusion policy (default: oracle)",
    )
    p.add_argument("--simulator", choices=("mujoco", "isaac"), default="mujoco", help="default: mujoco")
    p.add_argument("--graph", choices=stack.GRAPHS, default="kitchen", help="default: kitchen")
    p.add_argument(
        "--cameras",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the simulator renders the robot's cameras (default: on)",
    )
    p.add_argument("--record", action="store_true", help="with the recorder (it subscribes to every topic)")
    p.set_defaults(run=_run)
