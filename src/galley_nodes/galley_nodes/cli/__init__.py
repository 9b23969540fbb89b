"""The ``galley`` command line."""

from __future__ import annotations

import argparse
import logging
import os
import re
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path


def add_params_option(parser: argparse.ArgumentParser) -> None:
    """``--params FILE`` (repeatable): ROS 2 params files layered on config/galley.yaml."""
    parser.add_argument(
        "--params",
        type=Path,
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
    errors (the parent shows progress).
    """
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=get_context("spawn"), initializer=_quiet_worker
    )


def _quiet_worker() -> None:
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
