"""The ``galley`` command line."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from galley_core.arguments import add_arguments
from galley_core.config import Config, describe_fields
from galley_episodes.collection import parse_image_size
from galley_learning.policy.shipped import PolicyNotFoundError, resolve_policy


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line: the command, the argument, what is allowed.

    argparse prints the whole usage before its error line; a user's mistake in galley is one line
    on stderr and exit status 2 (``--help`` still shows the usage). Subcommands' parsers are of
    this class too (``add_subparsers`` makes them of the parent's class).
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def whole_number(minimum: int) -> Callable[[str], int]:
    """argparse type of a whole number >= ``minimum`` (counts, seeds, workers)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (at least {minimum})") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is not allowed: at least {minimum}")
        return value

    return parse


def positive_number(text: str) -> float:
    """argparse type of a finite number > 0 (rates, resolutions, learning rates)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (> 0)") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text} is not allowed: a number > 0")
    return value


def existing_file(text: str) -> Path:
    """argparse type of an input file that must exist (a params file, say)."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(
            f"{text} does not exist" if not path.exists() else f"{text} is not a file"
        )
    return path


#: argparse type of an episode seed (sample_episode takes seeds >= 0).
seed_number = whole_number(0)


def add_params_option(parser: argparse.ArgumentParser) -> None:
    """``--params FILE`` (repeatable): ROS 2 params files layered on config/galley.yaml."""
    parser.add_argument(
        "--params",
        type=existing_file,
        action="append",
        default=[],
        metavar="FILE",
        help="extra ROS 2 params YAML (layered)",
    )


def policy_run(text: str) -> Path:
    """argparse type of ``--policy NAME|RUN``: a shipped policy's name or a training run folder."""
    try:
        return resolve_policy(text)
    except PolicyNotFoundError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_policy_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``--policy NAME|RUN``: a shipped policy (``default``) or a ``galley train`` run folder."""
    parser.add_argument("--policy", type=policy_run, default=None, metavar="NAME|RUN", help=help)


def image_size(text: str) -> tuple[int, int]:
    """argparse type of ``--image-size WxH`` (e.g. ``96x72``): (width, height) in pixels."""
    try:
        return parse_image_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_config_options(
    parser: argparse.ArgumentParser,
    cls: type[Config],
    *,
    types: Mapping[str, Callable[[str], Any]] | None = None,
    **options: Any,
) -> list[str]:
    """:func:`galley_core.arguments.add_arguments`, with galley's own argparse types for counts and rates.

    A whole number with a lower bound reads with :func:`whole_number`, a number > 0 with
    :func:`positive_number`, so that their one-line errors read as every other galley command's
    ("at least 1", "a number > 0"); ``types`` gives a field another type (a stricter bound of the
    command's own). ``options`` are add_arguments' (``only``, ``skip``, ``aliases``).
    """
    added = add_arguments(parser, cls, **options)
    fields = {f.name: f for f in describe_fields(cls)}
    for action in parser._actions:
        if action.dest not in added or fields[action.dest].is_array:
            continue
        info = fields[action.dest]
        if action.dest in (types or {}):
            action.type = (types or {})[action.dest]
        elif info.type is int and info.spec.ge is not None:
            action.type = whole_number(int(info.spec.ge))
        elif info.type is float and info.spec.gt == 0 and info.spec.ge is None:
            action.type = positive_number
    return added


#: ``--scene``'s help, the same on every command (galley_episodes.scenes resolves the value).
SCENE_HELP = (
    "scene name (config/scenes/<name>.yaml, or kitchen_<seed>: a generated kitchen, made on first use) or "
    "scene file; its map and suite are found or made beside it, and it must pass galley scene check"
)


def say(args: argparse.Namespace) -> Callable[[str], None]:
    """Where a command's notes go (a kitchen made, a scene checked, a map written): stderr, a line each.

    stderr, so that what a command prints on stdout (``galley plan --json``) stays its answer.
    """
    return lambda line: print(f"galley {args.command}: {line}", file=sys.stderr, flush=True)


_REPLAN_HELP = "replans per episode after a failed step (default: the params files' max_replans, 0)"


def replan_as_count(parser: argparse.ArgumentParser) -> None:
    """``--replan N`` of galley run and galley eval: a count, the library's -1 being the option left out."""
    for action in parser._actions:
        if action.dest == "replan":
            action.type = whole_number(0)
            action.metavar = "N"
            action.help = (
                "replans per episode after a failed step (default: the params files' max_replans, 0)"
            )


def require_option(parser: argparse.ArgumentParser, dest: str) -> None:
    """Make the option of a Config field required, and drop the default from its help.

    :func:`galley_core.arguments.add_arguments` adds optional options; this is for a choice a command
    leaves to the user (``galley eval --mode``, ``galley collect --episodes``).
    """
    for action in parser._actions:
        if action.dest == dest:
            action.required = True
            action.help = str(action.help).split(" (default:")[0]
            return
    raise KeyError(f"{parser.prog} has no option for {dest!r}")
