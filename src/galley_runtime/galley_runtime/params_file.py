"""ROS 2 parameter files (``<node>: ros__parameters: ...``), read the way rcl reads them.

A file maps node names to parameters::

    /**:                        # every node
      ros__parameters:
        use_sim_time: true
    square_driver:              # the node /square_driver
      ros__parameters:
        side_m: 2.0
    robot:                      # nested namespaces: the node /robot/base
      base:
        ros__parameters: {...}

Node keys may hold wildcards: ``*`` matches one name token, ``**`` any number of them. Several
files are layered in order, and entries within a file in order: a later value wins. Nested
dictionaries under ``ros__parameters`` become dotted names (``a: {b: 1}`` is ``a.b``).

An empty list (``topics: []``) carries no element type, and rcl's parser gives ROS 2 nodes such a
parameter unset (rclpy's value None; a known limitation of rcl's YAML parser). Both hosts
therefore read an unset value (YAML ``[]`` under ROS 2, ``null`` or ``~`` in either host) of a
field declared as a list as that empty list: :func:`unset_lists_as_empty`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from galley_core.config import Config, ConfigError, config_from_values, describe_fields
from galley_core.files import read_yaml

__all__ = [
    "CODE_DEFAULT",
    "ParameterError",
    "ParamsEntry",
    "config_for_node",
    "load_params_files",
    "node_parameters",
    "parameters_for",
    "unset_lists_as_empty",
]

#: Parameters every ROS node accepts; they configure the host, not the node.
HOST_PARAMETERS = frozenset({"use_sim_time"})
#: The source of a value that neither a params file nor the caller gives: the field's code default.
CODE_DEFAULT = "code default"


class ParameterError(ValueError):
    """A parameter file or value is wrong; the message names the node, the parameter and the fix."""


@dataclass(frozen=True)
class ParamsEntry:
    """The parameters one key of a file gives to the nodes it matches."""

    pattern: str  # the node key, fully qualified, e.g. "/**" or "/robot/base"
    parameters: dict[str, Any]
    source: str  # "<file>:<key>", for error messages

    @property
    def wildcard(self) -> bool:
        return "*" in self.pattern

    def matches(self, fully_qualified_name: str) -> bool:
        return _pattern_regex(self.pattern).fullmatch(fully_qualified_name) is not None


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    parts = []
    for token in pattern.strip("/").split("/"):
        if token == "**":
            parts.append(r"(?:/[^/]+)*")
        else:
            parts.append("/" + re.escape(token).replace(r"\*", "[^/]*"))
    return re.compile("".join(parts))


def load_params_files(paths: Iterable[str | Path]) -> list[ParamsEntry]:
    """Parse parameter files into entries, in order.

    Raises:
        ParameterError: a file is missing, is not YAML, or is not in the ROS 2 params layout.
    """
    entries: list[ParamsEntry] = []
    for path in map(Path, paths):
        document = read_yaml(path, what="parameter file", error=ParameterError)
        if document is None:
            continue
        if not isinstance(document, dict):
            raise ParameterError(
                f"parameter file {path}: the top level must map node names to "
                "'ros__parameters:' blocks (see the ROS 2 params file format)"
            )
        _collect(document, "", path, entries)
    return entries


def _collect(node: Mapping[str, Any], prefix: str, path: Path, out: list[ParamsEntry]) -> None:
    for key, value in node.items():
        name = f"{prefix}/{str(key).strip('/')}"
        if not isinstance(value, dict):
            raise ParameterError(
                f"parameter file {path}: {name} must hold a mapping with 'ros__parameters:', got {value!r}"
            )
        if "ros__parameters" in value:
            params = value["ros__parameters"]
            if not isinstance(params, dict):
                raise ParameterError(f"parameter file {path}: {name}/ros__parameters must be a mapping")
            out.append(ParamsEntry(name, _flatten(params), f"{path}:{name}"))
            rest = {k: v for k, v in value.items() if k != "ros__parameters"}
        else:
            rest = value
        if rest:
            _collect(rest, name, path, out)


def _flatten(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def parameters_for(
    entries: Sequence[ParamsEntry], fully_qualified_name: str, declared: Iterable[str]
) -> dict[str, tuple[Any, str]]:
    """The parameters the entries give one node, each with the source that set it last.

    Wildcard entries give a node only the parameters it declares (so ``/**`` can carry settings for
    some nodes); an entry naming the node exactly must not hold unknown names, which are returned
    too, so that the caller reports them.
    """
    known = set(declared) | HOST_PARAMETERS
    out: dict[str, tuple[Any, str]] = {}
    for entry in entries:
        if not entry.matches(fully_qualified_name):
            continue
        for name, value in entry.parameters.items():
            if entry.wildcard and name not in known:
                continue
            out[name] = (value, entry.source)
    return out


def config_for_node(
    config_cls: type[Config],
    node_name: str,
    values: Mapping[str, tuple[Any, str]],
) -> Config:
    """Build and validate a node's configuration from sourced values.

    Raises:
        ParameterError: naming the node, the parameter, its source and what is allowed.
    """
    plain = unset_lists_as_empty(
        config_cls, {k: v for k, (v, _) in values.items() if k not in HOST_PARAMETERS}
    )
    try:
        return config_from_values(config_cls, plain)
    except ConfigError as err:
        value, source = values.get(err.field, (err.value, "the defaults of " + config_cls.__name__))
        raise ParameterError(
            f"node {node_name!r}: parameter {err.field!r} = {value!r} is not allowed: {err.allowed} "
            f"(set in {source})"
        ) from None


def node_parameters(
    config_cls: type[Config],
    node_name: str,
    entries: Sequence[ParamsEntry],
    given: Mapping[str, tuple[Any, str]] | None = None,
) -> tuple[Config, dict[str, str]]:
    """The configuration a node runs with, and where each field's value comes from.

    The layers, each over the one before: the fields' code defaults (:data:`CODE_DEFAULT`), the
    params files' ``entries`` in order (source ``"<file>:<node key>"``), then ``given`` (name ->
    (value, source)), e.g. the values a command sets. Both hosts' parameters come out of these
    layers; the embedded host merges them here, and ``galley nodes --effective`` shows the sources.

    Raises:
        ParameterError: as :func:`config_for_node`, naming the value's source.
    """
    declared = [info.name for info in describe_fields(config_cls)]
    values = parameters_for(entries, node_name, declared)
    values.update(given or {})
    config = config_for_node(config_cls, node_name, values)
    return config, {name: values[name][1] if name in values else CODE_DEFAULT for name in declared}


def unset_lists_as_empty(config_cls: type[Config], values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with None replaced by ``()`` for the fields ``config_cls`` declares as lists.

    rcl parses ``key: []`` in a params file to an unset parameter (None in rclpy), since an empty
    YAML list has no element type; the node's configuration says which list was meant. A None for
    any other field is left for validation to reject.
    """
    lists = {info.name for info in describe_fields(config_cls) if info.is_array}
    return {k: (() if v is None and k in lists else v) for k, v in values.items()}
