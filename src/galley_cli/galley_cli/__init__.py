"""The ``galley`` command line."""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import NoReturn


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


def image_size(text: str) -> tuple[int, int]:
    """argparse type of ``--image-size WxH`` (e.g. ``96x72``): (width, height) in pixels."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not WxH, e.g. 96x72")
    return int(match[1]), int(match[2])


def episode_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes for whole episodes (``galley collect``, ``galley eval --workers``).

    Spawned, so that no simulator or OpenGL state is forked; each uses one thread and logs only
    errors (the parent shows progress). When the workers fill every CPU, software OpenGL
    (llvmpipe) gets one rasteriser thread per worker instead of one per CPU in each: on a 2-core
    machine two collecting workers ran about 5 % faster so (bench/collect.py, same sitting).
    """
    fill = workers >= (os.cpu_count() or 1)
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=get_context("spawn"),
        initializer=_quiet_worker,
        initargs=(fill,),
    )


def _quiet_worker(one_rasteriser_thread: bool) -> None:
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if one_rasteriser_thread:
        os.environ.setdefault("LP_NUM_THREADS", "1")  # read when the first GL context is made
