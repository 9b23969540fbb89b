"""Action graphs as data: nodes, their types, attribute values and connections.

A :class:`Graph` is what ``og.Controller.edit`` needs, written down without Isaac Sim: the nodes to
create (name and node type), the input values to set and the connections to make. Types are
written with Isaac Sim 5.x names (``isaacsim.ros2.bridge.ROS2PublishClock``); :func:`type_name`
turns them into another supported version's names. :func:`edit_spec` produces the two arguments of
``og.Controller.edit`` with plain strings for the keys; :mod:`galley_isaac.builder` swaps in
``og.Controller.Keys`` and ``usdrt.Sdf.Path`` and makes the call inside Isaac Sim.

Example::

    Graph("/Galley/Clock", (
        GraphNode("tick", "omni.graph.action.OnPlaybackTick"),
        GraphNode("clock", "isaacsim.ros2.bridge.ROS2PublishClock", {"topicName": "/clock"}),
    ), (Connection("tick.outputs:tick", "clock.inputs:execIn"),))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "SUPPORTED_VERSIONS",
    "Connection",
    "Graph",
    "GraphNode",
    "Targets",
    "edit_spec",
    "type_name",
]

#: Isaac Sim versions whose type names galley writes. 5.0, 5.1 and 6.0 share the 5.x names
#: (6.0 moved the ROS 2 nodes into the extension isaacsim.ros2.nodes but kept their type names);
#: 4.5 gets the older omni.isaac.* prefixes, checked for type names only (no catalogue covers it).
SUPPORTED_VERSIONS = ("4.5", "5.0", "5.1", "6.0")

#: 5.x prefix -> the prefix of the same nodes in Isaac Sim 4.x.
LEGACY_PREFIXES = {
    "isaacsim.ros2.bridge.": "omni.isaac.ros2_bridge.",
    "isaacsim.core.nodes.": "omni.isaac.core_nodes.",
    "isaacsim.sensors.physics.": "omni.isaac.sensor.",
    "isaacsim.robot.wheeled_robots.": "omni.isaac.wheeled_robots.",
}


@dataclass(frozen=True)
class Targets:
    """The value of a ``target`` input: USD prim paths (``usdrt.Sdf.Path`` objects in Isaac Sim)."""

    paths: tuple[str, ...]

    def __post_init__(self) -> None:
        for path in self.paths:
            if not path.startswith("/"):
                raise ValueError(f"target prim path {path!r} must be absolute (start with '/')")


@dataclass(frozen=True)
class GraphNode:
    """One node of a graph.

    Attributes:
        name: the node's name in the graph (a USD prim name: letters, digits, underscores).
        type: the node type with Isaac Sim 5.x names, or a Kit node type (``omni.graph.*``).
        values: input attribute name (without ``inputs:``) -> value to set.
    """

    name: str
    type: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name or not (self.name[0].isalpha() and self.name.replace("_", "a").isalnum()):
            raise ValueError(f"graph node name {self.name!r}: use letters, digits and underscores")

    def value(self, attribute: str, default: Any = None) -> Any:
        """The value set on input ``attribute``, or ``default``."""
        return self.values.get(attribute, default)


@dataclass(frozen=True)
class Connection:
    """A connection from ``<node>.outputs:<attr>`` to ``<node>.inputs:<attr>``."""

    source: str
    target: str

    def __post_init__(self) -> None:
        for end, port in ((self.source, "outputs"), (self.target, "inputs")):
            node, _, attribute = end.partition(".")
            if not node or not attribute.startswith(port + ":") or len(attribute) == len(port) + 1:
                raise ValueError(f"connection end {end!r}: expected '<node>.{port}:<attribute>'")

    @property
    def source_node(self) -> str:
        return self.source.partition(".")[0]

    @property
    def source_attribute(self) -> str:
        """``outputs:<attr>``."""
        return self.source.partition(".")[2]

    @property
    def target_node(self) -> str:
        return self.target.partition(".")[0]

    @property
    def target_attribute(self) -> str:
        """``inputs:<attr>``."""
        return self.target.partition(".")[2]


@dataclass(frozen=True)
class Graph:
    """An action graph: its prim path, its nodes and their connections.

    Attributes:
        path: the graph's prim path, e.g. ``/Galley/Clock``.
        nodes: the nodes, in creation order; names are unique.
        connections: output -> input connections between the nodes.
        evaluator: ``execution`` (an action graph, driven by OnPlaybackTick and friends).
        name_overrides: prim path -> the frame name its ``isaac:nameOverride`` attribute must
            hold (ROS2PublishTransformTree names frames after prims); the run script sets them.
    """

    path: str
    nodes: tuple[GraphNode, ...]
    connections: tuple[Connection, ...] = ()
    evaluator: str = "execution"
    name_overrides: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [n.name for n in self.nodes]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"graph {self.path}: node names {duplicates} are used twice")
        for c in self.connections:
            for node in (c.source_node, c.target_node):
                if node not in names:
                    raise ValueError(
                        f"graph {self.path}: connection {c.source} -> {c.target} names "
                        f"no node {node!r}; nodes: {', '.join(names)}"
                    )

    def node(self, name: str) -> GraphNode:
        """The node called ``name``."""
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"graph {self.path} has no node {name!r}")

    def sources_of(self, node: str, attribute: str) -> list[tuple[GraphNode, str]]:
        """The (node, ``outputs:<attr>``) pairs connected into ``node.inputs:<attribute>``."""
        target = f"{node}.inputs:{attribute}"
        return [
            (self.node(c.source_node), c.source_attribute) for c in self.connections if c.target == target
        ]


def type_name(canonical: str, version: str) -> str:
    """The node type ``canonical`` (5.x name) as Isaac Sim ``version`` names it.

    Raises:
        ValueError: ``version`` is not one of :data:`SUPPORTED_VERSIONS`.
    """
    if version not in SUPPORTED_VERSIONS:
        raise ValueError(f"Isaac Sim version {version!r} is not supported; use one of {SUPPORTED_VERSIONS}")
    if version.startswith("4."):
        for new, old in LEGACY_PREFIXES.items():
            if canonical.startswith(new):
                return old + canonical[len(new) :]
    return canonical


def edit_spec(graph: Graph, version: str) -> tuple[dict[str, str], dict[str, list[tuple[Any, Any]]]]:
    """The two arguments of ``og.Controller.edit`` for ``graph`` in Isaac Sim ``version``.

    Keys are the strings ``create_nodes``, ``set_values`` and ``connect`` (``og.Controller.Keys``
    inside Isaac Sim); :class:`Targets` values stay as they are for the builder to convert.
    """
    create = [(n.name, type_name(n.type, version)) for n in graph.nodes]
    values = [(f"{n.name}.inputs:{k}", v) for n in graph.nodes for k, v in n.values.items()]
    connect = [(c.source, c.target) for c in graph.connections]
    spec = {"graph_path": graph.path, "evaluator_name": graph.evaluator}
    return spec, {"create_nodes": create, "set_values": values, "connect": connect}
