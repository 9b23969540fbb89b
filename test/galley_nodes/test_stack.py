"""The stack description (galley_nodes/stack.py) against the nodes' declarations and every bring-up.

Every topic a node consumes has a producer in every mode, but for the exceptions the stack lists;
the embedded build of ``galley run`` and the launch file (run against stand-ins of the launch API,
test/support/fake_launch.py) start the stack's nodes with the same parameters, per mode
(test_launch_files.py runs every launch file for every combination of its arguments).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from galley_cli.topics import topic_table
from galley_core.config import config_from_values
from galley_episodes import bringup
from galley_episodes.episode import run_settings
from galley_nodes import stack
from galley_nodes.registry import NODES, load_node_class

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fake_launch", REPO / "test" / "support" / "fake_launch.py")
fake_launch = importlib.util.module_from_spec(_spec)
sys.modules["fake_launch"] = fake_launch
_spec.loader.exec_module(fake_launch)

ALL_MODES = [m for g in stack.GRAPHS for m in stack.modes(g)]


def test_the_stack_names_its_nodes_classes_and_their_parameters():
    assert list(NODES) == [n.name for n in stack.NODES]  # the registry is the stack's list
    assert len(set(NODES)) == len(stack.NODES)
    for n in stack.NODES:
        assert load_node_class(n.name).name == n.name, f"{n.path} is not the node {n.name!r}"
    assert {p.node for p in stack.PARAMS} <= {n.name for n in stack.NODES}
    flags = set(stack.flags(stack.Mode()))
    assert {n.when for n in stack.NODES if n.when} <= flags
    assert {p.when for p in stack.PARAMS if p.when} <= flags


def test_the_stack_imports_neither_rclpy_nor_launch_nor_a_node():
    code = (
        "import sys, galley_nodes.stack; "
        "heavy = ('rclpy', 'launch', 'launch_ros', 'mujoco', 'torch', 'galley_runtime'); "
        "print([m for m in sys.modules if m.split('.')[0] in heavy or m.startswith('galley_nodes.nodes')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("mode", ALL_MODES, ids=repr)
def test_every_consumed_topic_has_a_producer_but_the_listed_outside_inputs(mode):
    rows = topic_table(mode)
    unproduced = {r.topic for r in rows if r.consumers and not r.producers}
    assert unproduced == {t for t in stack.unproduced(mode) if any(r.topic == t for r in rows)}
    for row in rows:
        if row.topic in stack.unproduced(mode):
            assert not row.producers, f"{row.topic} is listed as unproduced but {row.producers} publish it"


def test_every_listed_outside_input_is_consumed_without_a_producer_in_some_mode():
    for entry in stack.UNPRODUCED:
        assert any(
            entry.topic in stack.unproduced(m)
            and any(r.topic == entry.topic and r.consumers for r in topic_table(m))
            for m in ALL_MODES
        ), f"{entry.topic}: no mode consumes it without a producer; drop it from UNPRODUCED"


class _RecordingHost:
    """Stands in for EmbeddedHost in build_host: records the nodes and parameters it is given."""

    def __init__(self, params_files: Any) -> None:
        self.added: dict[str, dict[str, Any]] = {}

    def node_config(self, cls: Any, name: str, parameters: dict[str, Any] | None = None) -> Any:
        return config_from_values(cls.Config, parameters or {})  # the stack's values over the defaults

    def add_node(self, cls: type, *, parameters: dict[str, Any]) -> None:
        self.added[cls.name] = dict(parameters)


@pytest.mark.parametrize(("driver", "cameras"), [("oracle", True), ("oracle", False), ("policy", True)])
def test_the_embedded_build_and_the_launch_file_agree_per_mode(monkeypatch, tmp_path, driver, cameras):
    monkeypatch.setattr(bringup, "EmbeddedHost", _RecordingHost)
    policy = tmp_path / "run" if driver == "policy" else None
    settings = run_settings("kitchen", 4, out_dir=tmp_path, cameras=cameras, params=[], policy=policy)
    mode = stack.Mode(driver=driver, cameras=cameras, record=True)
    embedded = bringup.build_host(mode, settings, []).added
    assert list(embedded) == stack.nodes(mode)

    description = fake_launch.load(REPO / "launch" / "kitchen_sim.launch.py")
    given = {
        "policy": str(policy or ""),
        "record": "true",
        "seed": "4",
        "cameras": str(cameras).lower(),
        "map": str(REPO / "maps" / "kitchen.yaml"),
    }
    launched = fake_launch.started(description, given)
    markers = dataclasses.replace(mode, markers=True)
    assert set(launched) - set(embedded) == set(stack.nodes(markers)) - set(stack.nodes(mode))

    # Parameters both hosts set from the same inputs have the same values (launch: as strings).
    launch_inputs = set(fake_launch.arguments(description))
    embedded_inputs = {"scene", "seed", "cameras", "map", "policy", "output_dir", "bag_name"}
    shared = [
        p
        for p in stack.PARAMS
        if p.host == ""
        and (not isinstance(p.value, stack.Input) or p.value.name in launch_inputs & embedded_inputs)
    ]
    for p in shared:
        if p.node in embedded:
            assert str(embedded[p.node][p.name]).lower() == str(launched[p.node][p.name]).lower(), p
    # What only one host sets is in the stack as such.
    for node, params in embedded.items():
        for name in params:
            entry = next(p for p in stack.PARAMS if (p.node, p.name) == (node, name))
            assert entry in shared or entry.host == "embedded" or entry.value.name not in launch_inputs
