"""Launch files and the parameter file, checked without ROS 2: every executable and parameter exists.

The launch files only run where ROS 2 is installed (test_ros2_host.py loads them with launch's
API there); here they run against stand-ins for that API (test/support/fake_launch.py), and every
galley executable they start and every parameter they set is checked against the node registry and
the nodes' configuration classes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

from galley_nodes.registry import NODES, load_node_class
from galley_runtime.params_file import config_for_node, load_params_files, parameters_for

REPO = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((REPO / "launch").glob("*.launch.py"))
HOST_PARAMETERS = {"use_sim_time"}


def _support(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "test" / "support" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


fake_launch = _support("fake_launch")


def started_nodes(path: Path) -> list[tuple[str, set[str]]]:
    """(executable, parameter names set in the launch file) for every galley node it starts."""
    return [
        (node.executable, {k for entry in node.parameters if isinstance(entry, dict) for k in entry})
        for node in fake_launch.galley_nodes(fake_launch.load(path))
    ]


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_every_executable_and_parameter_of_the_launch_files_exists(path):
    nodes = started_nodes(path)
    assert nodes, f"{path.name} starts no galley node"
    for executable, params in nodes:
        assert executable in NODES, f"{path.name} starts unknown executable {executable!r}"
        fields = {f.name for f in dataclasses.fields(load_node_class(executable).Config)}
        unknown = params - fields - HOST_PARAMETERS
        assert not unknown, f"{path.name}: {executable} has no parameters {sorted(unknown)}"


def test_the_full_bring_up_starts_every_node_of_the_stack():
    started = {e for e, _ in started_nodes(REPO / "launch" / "kitchen_sim.launch.py")}
    assert started == {
        "sim",
        "perception",  # with cameras:=true (the default)
        "scene_markers",
        "map_server",
        "global_planner",
        "diff_drive_controller",
        "navigator",  # navigate_to_pose, composing the planner and controller
        "arm_controller",
        "diffusion_policy",  # with policy:=RUN, in place of the oracle nodes above
        "monitor",
        "task_planner",
        "task_executor",
        "recorder",
    }


def test_the_parameter_file_configures_every_node_it_names():
    entries = load_params_files([REPO / "config" / "galley.yaml"])
    named = {e.pattern.strip("/") for e in entries if not e.wildcard}
    assert named >= {"sim", "map_server", "global_planner", "diff_drive_controller", "task_executor"}
    for name in sorted(named):
        node = load_node_class(name)
        declared = [f.name for f in dataclasses.fields(node.Config)]
        config_for_node(node.Config, f"/{name}", parameters_for(entries, f"/{name}", declared))
