"""``galley nodes``: every node with its topics, timers and parameters (units, defaults, allowed).

``galley nodes --effective NODE...`` shows instead the value each parameter takes in ``galley run``'s
bring-up with the options given (``--scene``, ``--seed``, ``--params``, ``--policy``, ``--cameras``,
``--out``), and the layer it came from: the code default, config/galley.yaml, a ``--params`` file
(named), the stack's mode (galley_nodes.stack.PARAMS) or the command (an option, or what the
command derives from one). The layers are merged as the embedded host merges them
(galley_runtime.params_file.node_parameters), with the command's sources from
galley_cli.overrides.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from galley_cli import SCENE_HELP, add_params_option, add_policy_option, seed_number
from galley_cli.errors import UsageError
from galley_core.config import describe_fields
from galley_episodes.overrides import Resolved, shown_path
from galley_learning.policy.shipped import layered_params
from galley_nodes import stack
from galley_nodes.registry import NODES, load_node_class
from galley_runtime.config_files import default_params_files
from galley_runtime.params_file import CODE_DEFAULT, load_params_files, node_parameters

__all__ = ["add_parser", "describe_node", "effective_parameters"]


def describe_node(name: str) -> str:
    """A readable description of one registered node."""
    cls = load_node_class(name)
    lines = [f"{name}  ({NODES[name]})"]
    lines += [f"  publishes  {p.topic}  [{p.type}]  {p.qos}" for p in cls.publishes]
    lines += [f"  subscribes {s.topic}  [{s.type}]  {s.qos}" for s in cls.subscribes]
    for info in describe_fields(cls.Config):
        lines.append(f"  param      {info.name} = {info.default!r}  {info.description()}")
    return "\n".join(lines)


def effective_parameters(name: str, settings: Resolved, params: list[Path]) -> list[tuple[str, Any, str]]:
    """(parameter, value, layer) of node ``name`` under the command's ``settings`` and ``params``.

    Raises:
        ParameterError: a params file or a value is wrong (as the host would at start).
    """
    defaults = default_params_files()
    files = [*defaults, *params]
    config, sources = node_parameters(
        load_node_class(name).Config, f"/{name}", load_params_files(files), settings.given(name)
    )
    layer = {str(f): ("" if f in defaults else "--params ") + shown_path(f) for f in files}
    return [(field, getattr(config, field), _layer(source, layer)) for field, source in sources.items()]


def _layer(source: str, files: dict[str, str]) -> str:
    """A source as the user reads it: a params file's ``<file>:<node key>`` becomes the file."""
    if source == CODE_DEFAULT:
        return source
    path = source.rsplit(":/", 1)[0]
    return files.get(path, source)


def _effective(args: argparse.Namespace) -> int:
    from galley_episodes.episode import run_settings  # noqa: PLC0415 (deferred: the run command's imports)

    unknown = [n for n in args.names if n not in NODES]
    if unknown or not args.names:
        raise UsageError(
            f"--effective: {'no node ' + ', '.join(unknown) if unknown else 'name a node'}; "
            f"one of {', '.join(sorted(NODES))}"
        )
    cameras = args.cameras or args.policy is not None
    params = layered_params(args.policy, args.params)  # as galley run: the run's params.yaml first
    settings = run_settings(
        args.scene, args.seed, out_dir=args.out, cameras=cameras, params=params, policy=args.policy
    )
    mode = stack.Mode(driver="policy" if args.policy else "oracle", cameras=cameras, record=bool(args.out))
    for name in args.names:
        rows = effective_parameters(name, settings, params)
        runs = "" if name in stack.nodes(mode) else ", where it does not run"
        print(f"{name}  (in galley run's bring-up with these options{runs})")
        width = max(len(field) for field, _, _ in rows)
        for field, value, layer in rows:
            print(f"  {field:<{width}} = {value!r}  [{layer}]")
    for note in settings.notes:
        print(note)
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.effective:
        return _effective(args)
    names = args.names or sorted(NODES)
    for name in names:
        try:
            print(describe_node(name))
        except KeyError as err:
            raise UsageError(err.args[0]) from None
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "nodes",
        help="list galley's nodes with their topics and parameters",
        description="List galley's nodes with their topics and parameters; with --effective, the "
        "value each parameter of the named nodes takes in galley run's bring-up and the layer it "
        "came from: code default, config/galley.yaml, a --params file, stack (the mode's "
        "parameters) or command (an option, or what the command derives).",
    )
    p.add_argument("names", nargs="*", help="node names (default: all)")
    p.add_argument(
        "--effective",
        action="store_true",
        help="each parameter's value in effect and its layer, for the bring-up the options below choose",
    )
    p.add_argument("--scene", default="kitchen", help="--effective: " + SCENE_HELP + " (default: kitchen)")
    p.add_argument("--seed", type=seed_number, default=0, help="--effective: episode seed (default: 0)")
    add_policy_option(p, "--effective: a policy drives (a shipped policy's name or a training run)")
    p.add_argument("--cameras", action="store_true", help="--effective: the cameras render (as --video)")
    p.add_argument("--out", type=Path, default=None, help="--effective: the run records to OUT/bag")
    add_params_option(p)
    p.set_defaults(run=_run)
