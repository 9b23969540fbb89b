"""Worker processes for whole episodes (``galley collect``, ``galley eval --workers``)."""

from __future__ import annotations

import logging
import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

__all__ = ["episode_pool"]


def episode_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes for whole episodes.

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
