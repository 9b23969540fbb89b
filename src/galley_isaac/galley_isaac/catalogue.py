"""Checking graph descriptions against the Isaac Sim OmniGraph node catalogue, without Isaac Sim.

The catalogue (``shared/isaacsim/ogn_nodes_<tag>.json``, generated from the ``.ogn`` files of the
public isaac-sim/IsaacSim repository at v5.0.0, v5.1.0 and v6.0.1) lists every Isaac Sim node type
with its input and output attributes and their types. Kit's own nodes are not in it;
:data:`KIT_NODES` lists the ones galley uses, from Kit's node documentation.

:func:`check_graphs` reports every node type, attribute, value and connection that the given
version does not have, every connection between incompatible types, and every node whose
``execIn`` nothing drives (it would never run).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from galley_isaac.graph import Graph, Targets, type_name

__all__ = ["CATALOGUE_FILES", "KIT_NODES", "Catalogue", "check_graphs", "load_catalogue"]

#: Supported version -> catalogue file name.
CATALOGUE_FILES = {
    "5.0": "ogn_nodes_v5.0.0.json",
    "5.1": "ogn_nodes_v5.1.0.json",
    "6.0": "ogn_nodes_v6.0.1.json",
}

_ANY_NUMBER = "double|float|half|int"
#: Kit nodes galley's graphs use, with their attributes and types (``a|b`` for union types), from
#: https://docs.omniverse.nvidia.com/kit/docs/omni.graph.action_nodes/latest/GeneratedNodeDocumentation/OgnOnPlaybackTick.html
#: and https://docs.omniverse.nvidia.com/kit/docs/omni.graph.nodes_core/latest/GeneratedNodeDocumentation/OgnBreakVector3.html
KIT_NODES: dict[str, dict[str, dict[str, str]]] = {
    "omni.graph.action.OnPlaybackTick": {
        "inputs": {},
        "outputs": {"tick": "execution", "deltaSeconds": "double", "frame": "double", "time": "double"},
    },
    "omni.graph.nodes.BreakVector3": {
        "inputs": {"tuple": "double[3]|float[3]|half[3]|int[3]|vectord[3]"},
        "outputs": {"x": _ANY_NUMBER, "y": _ANY_NUMBER, "z": _ANY_NUMBER},
    },
}
#: Types that carry the same data under another name (a connection between them is allowed).
_SAME = {"vectord[3]": "double[3]", "pointd[3]": "double[3]", "quatd[4]": "double[4]"}


@dataclass(frozen=True)
class Catalogue:
    """Node type -> {"inputs": {attr: type}, "outputs": {attr: type}} for one Isaac Sim version."""

    version: str
    nodes: Mapping[str, Mapping[str, Mapping[str, str]]]
    source: str = ""

    def attributes(self, node_type: str, port: str) -> Mapping[str, str] | None:
        """The ``port`` (``inputs``/``outputs``) attributes of ``node_type``; None if the type is unknown."""
        spec = self.nodes.get(node_type) or KIT_NODES.get(node_type)
        return None if spec is None else spec[port]


def load_catalogue(directory: str | Path, version: str) -> Catalogue:
    """The catalogue of Isaac Sim ``version`` from ``directory``.

    Raises:
        FileNotFoundError: the directory has no catalogue for ``version``.
        KeyError: no catalogue file is known for ``version``.
    """
    if version not in CATALOGUE_FILES:
        raise KeyError(f"no node catalogue for Isaac Sim {version}; catalogues: {', '.join(CATALOGUE_FILES)}")
    path = Path(directory) / CATALOGUE_FILES[version]
    data = json.loads(path.read_text())
    nodes = {
        name: {
            port: {attr: str(spec["type"]) for attr, spec in entry.get(port, {}).items()}
            for port in ("inputs", "outputs")
        }
        for name, entry in data["nodes"].items()
    }
    return Catalogue(version, nodes, str(path))


def check_graphs(graphs: Iterable[Graph], catalogue: Catalogue) -> list[str]:
    """Every problem of ``graphs`` in the catalogue's Isaac Sim version; empty when all is well."""
    problems: list[str] = []
    for graph in graphs:
        problems += _check_graph(graph, catalogue)
    return problems


def _check_graph(graph: Graph, cat: Catalogue) -> list[str]:
    problems = []
    types = {n.name: type_name(n.type, cat.version) for n in graph.nodes}
    for node in graph.nodes:
        where = f"{graph.path}/{node.name} ({types[node.name]})"
        inputs = cat.attributes(types[node.name], "inputs")
        if inputs is None:
            problems.append(f"{where}: no such node type in Isaac Sim {cat.version}")
            continue
        for attr, value in node.values.items():
            if attr not in inputs:
                problems.append(f"{where}: no input {attr!r}; inputs: {', '.join(sorted(inputs))}")
            elif not _value_fits(inputs[attr], value):
                problems.append(f"{where}: inputs:{attr} is {inputs[attr]}, cannot take {value!r}")
    problems += _check_connections(graph, cat, types)
    return problems


def _check_connections(graph: Graph, cat: Catalogue, types: Mapping[str, str]) -> list[str]:
    problems: list[str] = []
    connected_inputs: dict[str, str] = {}
    for c in graph.connections:
        ends: list[str | None] = []
        for name, attribute in ((c.source_node, c.source_attribute), (c.target_node, c.target_attribute)):
            port, _, attr = attribute.partition(":")
            attrs = cat.attributes(types[name], port)
            if attrs is None:
                ends.append(None)  # the unknown type is reported above
            elif attr not in attrs:
                problems.append(
                    f"{graph.path}: {c.source} -> {c.target}: {name} ({types[name]}) has no {attribute}"
                )
                ends.append(None)
            else:
                ends.append(attrs[attr])
        src, dst = ends
        if src is not None and dst is not None and not _types_connect(src, dst):
            problems.append(f"{graph.path}: {c.source} ({src}) -> {c.target} ({dst}): incompatible types")
        if c.target in connected_inputs:
            problems.append(
                f"{graph.path}: {c.target} is driven twice ({connected_inputs[c.target]}, {c.source})"
            )
        connected_inputs[c.target] = c.source
        target = graph.node(c.target_node)
        if c.target_attribute.partition(":")[2] in target.values:
            problems.append(f"{graph.path}: {c.target} is both connected and set to a value")
    for n in graph.nodes:
        inputs = cat.attributes(types[n.name], "inputs") or {}
        if inputs.get("execIn") == "execution" and f"{n.name}.inputs:execIn" not in connected_inputs:
            problems.append(f"{graph.path}/{n.name}: nothing drives inputs:execIn; the node would never run")
    return problems


def _types_connect(source: str, target: str) -> bool:
    sources = {_SAME.get(t, t) for t in source.split("|")}
    targets = {_SAME.get(t, t) for t in target.split("|")}
    return bool(sources & targets)


def _value_fits(ogn_type: str, value: Any) -> bool:
    """Whether ``value`` can be set on an input of ``ogn_type`` (as og.Controller.edit would)."""
    if ogn_type == "target":
        return isinstance(value, Targets) and bool(value.paths)
    if isinstance(value, Targets):
        return False
    if ogn_type.endswith("[]"):
        element = ogn_type[:-2]
        return isinstance(value, (list, tuple)) and all(_value_fits(element, v) for v in value)
    if ogn_type.endswith("]") and "[" in ogn_type:  # fixed size: double[3], vectord[3], quatd[4]
        _, _, size = ogn_type[:-1].partition("[")
        return (
            isinstance(value, (list, tuple))
            and len(value) == int(size)
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        )
    return _scalar_fits(ogn_type, value)


def _scalar_fits(ogn_type: str, value: Any) -> bool:
    if ogn_type == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if ogn_type in ("string", "token", "path"):
        return isinstance(value, str)
    if ogn_type in ("int", "int64"):
        return isinstance(value, int)
    if ogn_type in ("uint", "uint64", "uchar"):
        limit = 255 if ogn_type == "uchar" else None
        return isinstance(value, int) and value >= 0 and (limit is None or value <= limit)
    if ogn_type in ("double", "float", "half"):
        return isinstance(value, (int, float))
    return False
