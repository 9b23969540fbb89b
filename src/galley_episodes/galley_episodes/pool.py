"""Worker processes for whole episodes (``galley collect``, ``galley eval --workers``)."""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

__all__ = ["episode_pool"]

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def episode_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes for whole episodes.

    Spawned, so that no simulator or OpenGL state is forked; each uses one thread and logs only
    errors (the parent shows progress). When the workers fill every CPU, software OpenGL
    (llvmpipe) gets one rasteriser thread per worker instead of one per CPU in each: on a 2-core
    machine two collecting workers ran about 5 % faster so (bench/collect.py, same sitting).
    A worker ends when the process that made it does, however that ends (on Linux: a killed
    ``galley eval`` leaves no worker running its episode on).
    """
    fill = workers >= (os.cpu_count() or 1)
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=get_context("spawn"),
        initializer=_quiet_worker,
        initargs=(fill,),
    )


def _quiet_worker(one_rasteriser_thread: bool) -> None:
    _end_with_parent()
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if one_rasteriser_thread:
        os.environ.setdefault("LP_NUM_THREADS", "1")  # read when the first GL context is made


def _end_with_parent() -> None:
    """Have the kernel send this process SIGTERM when its parent ends (Linux' PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        return  # not allowed here: the worker then ends only when its queue closes
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # the parent ended before the prctl
        os.kill(os.getpid(), signal.SIGTERM)
