"""``galley nodes``: every node with its topics, timers and parameters (units, defaults, allowed)."""

from __future__ import annotations

import argparse
from typing import Any

from galley_cli.errors import UsageError
from galley_core.config import describe_fields
from galley_nodes.registry import NODES, load_node_class

__all__ = ["add_parser", "describe_node"]


def describe_node(name: str) -> str:
    """A readable description of one registered node."""
    cls = load_node_class(name)
    lines = [f"{name}  ({NODES[name]})"]
    lines += [f"  publishes  {p.topic}  [{p.type}]  {p.qos}" for p in cls.publishes]
    lines += [f"  subscribes {s.topic}  [{s.type}]  {s.qos}" for s in cls.subscribes]
    for info in describe_fields(cls.Config):
        lines.append(f"  param      {info.name} = {info.default!r}  {info.description()}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    names = args.names or sorted(NODES)
    for name in names:
        try:
            print(describe_node(name))
        except KeyError as err:
            raise UsageError(err.args[0]) from None
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("nodes", help="list galley's nodes with their topics and parameters")
    p.add_argument("names", nargs="*", help="node names (default: all)")
    p.set_defaults(run=_run)
