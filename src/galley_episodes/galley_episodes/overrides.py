"""Parameters a command sets itself on top of the params files, and which value wins.

``galley run``, ``galley demo`` (and ``galley eval`` / ``galley collect``, through ``run``) give some
nodes values of their own: the scene's map to map_server, ``--seed`` to the simulator, the run's
``--out`` to the recorder. The rule, stated in docs/guides/bags-and-params.md and in each
command's ``--help``:

* a value the user gives explicitly in a ``--params`` file wins over one the command would only
  derive (the scene's map, the controller reading TF, the cameras being off), and the command
  prints one line saying which user value it kept instead;
* a value the command must own (the episode is ``--seed`` of ``--scene``, the bag of this run goes
  to ``--out``, a learned policy needs the cameras) replaces the user's, and the command prints one
  line saying so and which option to use instead.

config/galley.yaml is not the user's: its values are defaults that every derived value replaces
without a word. Only the files given with ``--params`` are read for explicit values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from galley_core.config import config_from_values
from galley_core.monitoring import parse_rate_rules
from galley_nodes.registry import load_node_class
from galley_runtime.params_file import ParamsEntry, load_params_files, parameters_for

__all__ = ["PRECEDENCE_HELP", "Resolved", "Setting", "monitor_rate_rules", "resolve_settings", "shown_path"]

#: One sentence for the --help of the commands that layer --params under their own settings.
PRECEDENCE_HELP = (
    "A value set explicitly in a --params file wins over one the command derives (e.g. "
    "map_server.yaml_filename over the scene's map); values the command owns (the episode's scene "
    "and seed, the recorder's output) replace the file's. Either way one 'note:' line says so."
)


@dataclass(frozen=True)
class Setting:
    """A parameter value a command gives a node on top of the params files.

    Attributes:
        node: the node's name (root namespace), e.g. ``"map_server"``.
        name: the parameter, e.g. ``"yaml_filename"``.
        value: the command's value.
        why: where the command's value comes from, for the note, e.g. ``"the scene's map
            maps/kitchen.yaml"`` or ``"--seed (0)"``.
        owned: the command must use its value; a user's different value is replaced.
        layer: who sets it: ``"command"`` (an option or what it derives) or ``"stack"`` (the
            mode's parameters, galley_nodes.stack.PARAMS), for ``galley nodes --effective``.
    """

    node: str
    name: str
    value: Any
    why: str
    owned: bool = False
    layer: str = "command"


@dataclass
class Resolved:
    """What a command passes to ``add_node``, and what it says about it.

    Attributes:
        parameters: per node, the parameters the command sets (the user's winning values are left
            to the params files, so that an error about one names its file).
        notes: one line per user value that was kept or replaced.
        values: every setting's value in effect, by ``(node, name)``: the command's or the user's.
        sources: where each value of ``parameters`` comes from, by ``(node, name)``, e.g.
            ``"command: --seed (0)"`` (the user's winning values keep their file as source).
    """

    parameters: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    values: dict[tuple[str, str], Any] = dataclasses.field(default_factory=dict)
    sources: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)

    def add(self, other: Resolved) -> None:
        """Merge the resolution of more settings into this one."""
        for node, params in other.parameters.items():
            self.parameters.setdefault(node, {}).update(params)
        self.notes += other.notes
        self.values.update(other.values)
        self.sources.update(other.sources)

    def given(self, node: str) -> dict[str, tuple[Any, str]]:
        """``node``'s parameters with their sources, the top layer of its configuration."""
        return {k: (v, self.sources[node, k]) for k, v in self.parameters.get(node, {}).items()}


def _same(a: Any, b: Any) -> bool:
    """Equal as parameter values (a YAML list equals the command's tuple of the same items)."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return list(a) == list(b)
    return bool(a == b)


def _file(source: str) -> str:
    """The params file of a ``parameters_for`` source (``<file>:<node key>``)."""
    return source.rsplit(":/", 1)[0]


def resolve_settings(settings: Iterable[Setting], user_files: Sequence[Path]) -> Resolved:
    """Apply the precedence rule to a command's settings.

    Args:
        settings: what the command would set.
        user_files: the ``--params`` files (not config/galley.yaml).

    Raises:
        ParameterError: a params file is missing or malformed.
    """
    entries: list[ParamsEntry] = load_params_files(user_files)
    out = Resolved()
    for s in settings:
        node_params = out.parameters.setdefault(s.node, {})
        given = parameters_for(entries, f"/{s.node}", [s.name]).get(s.name)
        if given is None or _same(given[0], s.value) or s.owned:
            node_params[s.name] = out.values[s.node, s.name] = s.value
            out.sources[s.node, s.name] = f"{s.layer}: {s.why}" if s.why else s.layer
        if given is None or _same(given[0], s.value):
            continue
        value, source = given
        if s.owned:
            out.notes.append(
                f"note: {s.node}.{s.name} = {value!r} from {_file(source)} is replaced: "
                f"the command sets it from {s.why}"
            )
        else:
            out.values[s.node, s.name] = value
            out.notes.append(
                f"note: {s.node}.{s.name} = {value!r} from {_file(source)} is used instead of {s.why}"
            )
    return out


def monitor_rate_rules(files: Sequence[Path], keep: Callable[[str], bool]) -> list[str]:
    """The monitor's ``rate_rules`` entries from ``files``, only those of the topics ``keep`` accepts."""
    monitor = load_node_class("monitor")
    declared = [f.name for f in dataclasses.fields(monitor.Config)]
    values = {k: v for k, (v, _) in parameters_for(load_params_files(files), "/monitor", declared).items()}
    config = config_from_values(monitor.Config, {k: v for k, v in values.items() if k in declared})
    return [
        f"{topic} {min_hz:g}" for topic, min_hz in parse_rate_rules(config.rate_rules).items() if keep(topic)
    ]


def shown_path(path: Path) -> str:
    """A path as a user reads it: relative to the working directory where it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
