"""The ``galley`` command: ``galley doctor``, ``galley demo``, ``galley nodes``.

User mistakes (a bad parameter file, a missing input) end with one clear line on stderr and exit
status 2, never with a traceback. Ctrl-C ends a command with status 130, SIGTERM (a scheduler,
``timeout``, ``kill``) with 143, each the same way: the episode workers end now, and what is
recorded stays (``--resume`` goes on from it).
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import signal
import sys
import threading
from collections.abc import Sequence

from galley_cli import (
    ArgumentParser,
    bag,
    collect,
    demo,
    doctor,
    eval,
    eval_planner,
    export_lerobot,
    map,
    nodes,
    plan,
    replay,
    run,
    scene,
    suite,
    topics,
    train,
    train_planner,
)
from galley_cli.errors import UsageError
from galley_core.config import ConfigError
from galley_core.navigation.grid import MapFileError
from galley_core.scene import SceneError
from galley_core.tasks.grammar import InvalidPlanError
from galley_core.tasks.suite import SuiteError
from galley_episodes import EpisodeError
from galley_episodes.scenes import SceneCheckError
from galley_runtime.params_file import ParameterError
from galley_runtime.recording.staging import UnfinishedBagError

__all__ = ["USER_ERRORS", "main"]

#: Errors whose message names the input and the fix: one line on stderr, exit status 2, no traceback.
USER_ERRORS: tuple[type[Exception], ...] = (
    UsageError,
    EpisodeError,
    ParameterError,
    ConfigError,
    SceneError,
    InvalidPlanError,
    SuiteError,
    MapFileError,
    UnfinishedBagError,
)


def _build_parser() -> argparse.ArgumentParser:

    parser = ArgumentParser(prog="galley", description="galley: language-guided kitchen mobile manipulation")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (
        doctor,
        demo,
        run,
        eval,
        map,
        scene,
        nodes,
        topics,
        suite,
        replay,
        bag,
        plan,
        train_planner,
        eval_planner,
        collect,
        train,
        export_lerobot,
    ):
        module.add_parser(sub)
    return parser


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the main thread is, so that it ends the command as Ctrl-C does."""


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM: end the episode workers now (they would finish their episode), then unwind."""
    for child in multiprocessing.active_children():
        child.terminate()
    raise _Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``galley`` console script; returns the exit status."""
    if threading.current_thread() is not threading.main_thread():
        return _main(argv)
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _main(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = _build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help (0) or a bad argument (2, its one line already printed)
        return exit_.code if isinstance(exit_.code, int) else 2
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="[%(levelname)s] %(message)s",
        stream=sys.stderr,
    )
    for noisy in ("matplotlib", "OpenGL", "httpx"):  # httpx logs every request at INFO
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return int(args.run(args))
    except SceneCheckError as err:  # a scene that fails galley scene check: one line per problem
        for line in err.lines():
            print(f"galley {args.command}: {line}", file=sys.stderr)
        return 2
    except (*USER_ERRORS, FileNotFoundError) as err:
        # One line, whatever the error's text holds (a YAML parser's message spans four).
        print(f"galley {args.command}: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        terminated = isinstance(err, _Terminated)
        print(f"galley {args.command}: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 143 if terminated else 130


if __name__ == "__main__":
    sys.exit(main())
