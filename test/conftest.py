"""Shared fixtures. Tests mirror src/: test/galley_core for the algorithms, test/galley_runtime for
the hosts and recording, test/galley_nodes for the nodes, test/galley_cli for the command.
Nodes run in the embedded host; tests marked ros2 need rclpy and skip without it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# MuJoCo picks its GL backend when first imported: galley_sim chooses a headless one (EGL or
# OSMesa) before any test imports mujoco.
import galley_sim  # noqa: F401

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo() -> Path:
    """The repository root."""
    return REPO


@pytest.fixture
def params_file(tmp_path: Path):
    """Write a ROS 2 params YAML file from text and return its path."""

    def write(text: str, name: str = "params.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def misbehaving_backends():
    """test/support/misbehaving_backends.py: planner backends that crash or hang, importable by a worker."""
    support = str(REPO / "test" / "support")
    sys.path.insert(0, support)
    try:
        import misbehaving_backends

        yield misbehaving_backends
    finally:
        sys.path.remove(support)
