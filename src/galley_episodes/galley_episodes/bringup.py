"""The stack (galley_nodes.stack) in the embedded host: the settings a command gives, and the host.

A command says which :class:`~galley_nodes.stack.Mode` it runs and gives the stack's inputs, each
with where it comes from and whether the command owns it (module ``overrides``); the parameters,
the notes and the nodes follow from the stack description, as they do in the launch files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from galley_episodes.config import EpisodeError
from galley_episodes.overrides import Resolved, Setting, resolve_settings
from galley_nodes import stack
from galley_nodes.registry import load_node_class
from galley_runtime.config_files import default_params_files
from galley_runtime.embedded import EmbeddedHost

__all__ = ["Given", "build_host", "stack_settings"]


@dataclass(frozen=True)
class Given:
    """A value a command gives a stack input (or a parameter), and why, for the notes.

    Attributes:
        value: the value (ignored where the stack fixes it: a constant or a choice of the mode).
        why: where the value comes from, e.g. ``"--seed (0)"``.
        owned: the command must use it; a ``--params`` file's different value is replaced.
    """

    value: Any
    why: str
    owned: bool = True


def stack_settings(mode: stack.Mode, given: Mapping[str, Given], params: Sequence[Path]) -> Resolved:
    """The parameters of ``mode``'s nodes on top of the params files, with the precedence notes.

    ``given`` holds the inputs by name (``scene``, ``seed``...) and, by ``node.name``, the reasons
    of the stack's fixed values the command sets (``task_executor.completion``). Inputs not given
    are left to the params files. The monitor watches the camera topics where the simulator
    renders them: a ``--params`` file's ``sim.cameras_enabled`` may win over the command's.
    """
    inputs = {name: g.value for name, g in given.items()}
    chosen = stack.parameters(mode, inputs, host="embedded")

    def setting(p: stack.Param, value: Any) -> Setting:
        if isinstance(p.value, stack.Input):
            reason, layer = given[p.value.name], "command"
        else:  # a constant or a choice of the mode
            reason, layer = given[f"{p.node}.{p.name}"], "stack"
        return Setting(p.node, p.name, value, reason.why, owned=reason.owned, layer=layer)

    resolved = resolve_settings([setting(p, v) for p, v in chosen if (p.node, p.name) != _FOLLOWS], params)
    cameras = resolved.values.get(("sim", "cameras_enabled"))
    for p, v in chosen:
        if (p.node, p.name) == _FOLLOWS:
            resolved.add(resolve_settings([setting(p, v if cameras is None else cameras)], params))
    return resolved


#: The monitor's cameras follow the simulator's in effect (stack.PARAMS gives both the same input).
_FOLLOWS = ("monitor", "cameras_enabled")


def build_host(mode: stack.Mode, settings: Resolved, params: Sequence[Path]) -> EmbeddedHost:
    """The nodes of ``mode`` in one embedded host, in the stack's order (the recorder first).

    ``settings`` (:func:`stack_settings`) go on top of config/galley.yaml and ``params``.
    """
    if stack.nav2_nodes(mode):
        raise EpisodeError(
            "Nav2's planner_server and controller_server are C++ ROS 2 nodes the embedded host cannot "
            "run: use ros2 launch launch/kitchen_sim.launch.py nav2:=true, or galley's own (nav2 off)"
        )
    host = EmbeddedHost([*default_params_files(), *params])
    names = stack.nodes(mode)
    # every node's parameters checked before the first node starts (the recorder makes its bag)
    configs = {
        name: host.node_config(load_node_class(name), name, settings.parameters.get(name)) for name in names
    }
    if "map_server" in configs and not Path(configs["map_server"].yaml_filename).is_file():
        map_file = configs["map_server"].yaml_filename
        raise EpisodeError(
            f"map_server.yaml_filename = {map_file!r}: no such file; give a nav2 map YAML in a --params "
            "file, or leave it out to use the scene's (galley map --scene SCENE --out maps/ makes one)"
        )
    for name in names:
        remapped = stack.remappings(mode, name)
        extra = {"remappings": remapped} if remapped else {}
        host.add_node(load_node_class(name), parameters=settings.parameters.get(name, {}), **extra)
    return host
