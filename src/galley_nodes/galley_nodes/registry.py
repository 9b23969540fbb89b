"""Every galley node by ROS node name, for the CLI, the entry points and the hosts.

The list is the stack description's (:data:`galley_nodes.stack.NODES`); entries are import paths,
so that listing nodes imports none of them.
"""

from __future__ import annotations

import importlib

from galley_nodes import stack
from galley_runtime.node import Node

__all__ = ["NODES", "load_node_class"]

#: Node name -> import path of its class ("module:Class"), in the stack's order (galley_nodes.stack).
NODES: dict[str, str] = {node.name: node.path for node in stack.NODES}


def load_node_class(name: str) -> type[Node]:
    """The node class registered under ``name``.

    Raises:
        KeyError: no such node; the message lists the known ones.
    """
    try:
        module_name, class_name = NODES[name].split(":")
    except KeyError:
        raise KeyError(f"no galley node {name!r}; known nodes: {', '.join(sorted(NODES))}") from None
    cls = getattr(importlib.import_module(module_name), class_name)
    if not (isinstance(cls, type) and issubclass(cls, Node)):
        raise TypeError(f"{NODES[name]} is not a galley Node class")
    return cls
