"""Fixtures of the planner tests: the kitchen, its suite, a top-down renderer."""

from __future__ import annotations

from pathlib import Path

import pytest

from galley_core.scene import load_scene
from galley_core.tasks.suite import load_suite

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def kitchen():
    return load_scene(REPO / "config" / "scenes" / "kitchen.yaml")


@pytest.fixture(scope="session")
def suite():
    return load_suite(REPO / "config" / "suites" / "kitchen_v1.yaml")[1]


@pytest.fixture(scope="session")
def renderer(kitchen):
    from galley_learning.planners.images import TopDownRenderer

    return TopDownRenderer(kitchen)
