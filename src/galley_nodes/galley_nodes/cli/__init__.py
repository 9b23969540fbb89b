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
