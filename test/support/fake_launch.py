"""Launch files evaluated without ROS 2: stand-ins for the few launch API names they use.

``load`` runs a launch file's ``generate_launch_description`` against these stand-ins (in place of
``launch`` and ``launch_ros``, only while it runs); ``started`` then says which galley nodes start
for given launch arguments, with their parameters, evaluating substitutions and conditions as
``ros2 launch`` would.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class LaunchConfiguration:
    name: str

    def perform(self, context: Any) -> str:
        return str(context.launch_configurations[self.name])


@dataclass
class PythonExpression:
    parts: list[Any]


@dataclass
class IfCondition:
    predicate: Any


@dataclass
class UnlessCondition:
    predicate: Any


@dataclass
class DeclareLaunchArgument:
    name: str
    default_value: str = ""
    description: str = ""


@dataclass
class OpaqueFunction:
    function: Any
    condition: Any = None


@dataclass
class Node:
    package: str
    executable: str
    name: str = ""
    namespace: Any = ""
    parameters: list[Any] = field(default_factory=list)
    arguments: list[Any] = field(default_factory=list)
    remappings: list[tuple[str, str]] = field(default_factory=list)
    output: str = ""
    condition: Any = None


@dataclass
class LaunchDescription:
    entities: list[Any]


_MODULES = {
    "launch": {"LaunchDescription": LaunchDescription},
    "launch.actions": {"DeclareLaunchArgument": DeclareLaunchArgument, "OpaqueFunction": OpaqueFunction},
    "launch.conditions": {"IfCondition": IfCondition, "UnlessCondition": UnlessCondition},
    "launch.substitutions": {
        "LaunchConfiguration": LaunchConfiguration,
        "PythonExpression": PythonExpression,
    },
    "launch_ros": {},
    "launch_ros.actions": {"Node": Node},
}


def load(path: Path) -> LaunchDescription:
    """The launch description of the launch file ``path``, made with the stand-ins."""
    saved = {name: sys.modules.get(name) for name in _MODULES}
    try:
        for name, attributes in _MODULES.items():
            module = types.ModuleType(name)
            module.__dict__.update(attributes)
            sys.modules[name] = module
        spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.generate_launch_description()
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def galley_nodes(description: LaunchDescription, given: dict[str, str] | None = None) -> list[Node]:
    """Every galley node the description may start for the launch arguments ``given``, whatever its
    condition (those its OpaqueFunctions return for ``given`` included)."""
    return [e for e in _entities(description, given) if isinstance(e, Node) and e.package == "galley_nodes"]


def arguments(description: LaunchDescription) -> dict[str, DeclareLaunchArgument]:
    return {e.name: e for e in description.entities if isinstance(e, DeclareLaunchArgument)}


def evaluate(value: Any, args: dict[str, str]) -> Any:
    """A parameter value with its substitutions performed (launch arguments ``args``)."""
    if isinstance(value, LaunchConfiguration):
        return args[value.name]
    if isinstance(value, PythonExpression):
        return str(eval("".join(str(evaluate(p, args)) for p in value.parts)))  # as launch does
    return value


def _holds(condition: Any, args: dict[str, str]) -> bool:
    if condition is None:
        return True
    truth = str(evaluate(condition.predicate, args)).lower() in ("true", "1")
    return truth if isinstance(condition, IfCondition) else not truth


def arguments_with(description: LaunchDescription, given: dict[str, str] | None = None) -> dict[str, str]:
    """Every launch argument's value: ``given``, else its declared default."""
    return {name: a.default_value for name, a in arguments(description).items()} | (given or {})


def _entities(description: LaunchDescription, given: dict[str, str] | None) -> list[Any]:
    """The description's entities, each OpaqueFunction (whose condition holds) replaced by what it returns."""
    context = types.SimpleNamespace(launch_configurations=arguments_with(description, given))
    out: list[Any] = []
    for e in description.entities:
        if isinstance(e, OpaqueFunction):
            if _holds(e.condition, context.launch_configurations):
                out += e.function(context) or []
        else:
            out.append(e)
    return out


def running(description: LaunchDescription, given: dict[str, str] | None = None) -> list[Node]:
    """Every node (of any package) whose condition holds for the launch arguments ``given``."""
    args = arguments_with(description, given)
    return [e for e in _entities(description, given) if isinstance(e, Node) and _holds(e.condition, args)]


def perform_opaque_functions(description: LaunchDescription, given: dict[str, str] | None = None) -> None:
    """Run the description's OpaqueFunctions as launch would (they raise where launch would stop)."""
    _entities(description, given)


def started(description: LaunchDescription, given: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Galley node -> its parameters (the dicts of ``parameters``, merged) for the launch arguments.

    ``given`` sets launch arguments; the others take their declared defaults.
    """
    args = arguments_with(description, given)
    out = {}
    for node in galley_nodes(description, given):
        if not _holds(node.condition, args):
            continue
        params: dict[str, Any] = {}
        for entry in node.parameters:
            if isinstance(entry, dict):
                params.update({k: evaluate(v, args) for k, v in entry.items()})
        out[node.executable] = params
    return out
