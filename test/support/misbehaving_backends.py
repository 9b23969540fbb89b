"""Planner backends that misbehave the way native model code does, for the worker-process tests.

A worker process imports its backend by module name in a fresh interpreter (``spawn``), so these
live in a module of their own; the ``misbehaving_backends`` fixture puts this folder on sys.path,
which ``spawn`` passes on to the worker.
"""

from __future__ import annotations

import ctypes
import time

from galley_core.language.planning import Plan, Planner


class Segfaulting(Planner):
    """Dies with SIGSEGV in plan(), as a llama.cpp build for another CPU does."""

    name = "llama_cpp"

    def plan(self, instruction, top_down_image, scene, context=None):
        ctypes.string_at(0)  # reads address 0: SIGSEGV inside a C function, as a bad build does
        return Plan(instruction, ())


class SegfaultingAtLoad(Planner):
    """Dies with SIGSEGV while it loads."""

    name = "llama_cpp"

    def __init__(self):
        ctypes.string_at(0)

    def plan(self, instruction, top_down_image, scene, context=None):
        return Plan(instruction, ())


class Hanging(Planner):
    """Never answers."""

    name = "llama_cpp"

    def plan(self, instruction, top_down_image, scene, context=None):
        time.sleep(3600)
        return Plan(instruction, ())
