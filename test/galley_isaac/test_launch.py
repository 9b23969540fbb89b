"""launch/kitchen_isaac.launch.py loads with ROS 2's launch API (skipped where launch is missing)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "launch_ros", reason="ROS 2 launch is not importable: ROS 2 is not installed or not sourced"
)

REPO = Path(__file__).resolve().parents[2]


def test_the_isaac_launch_file_runs_every_galley_node_but_the_simulator_on_sim_time():
    from launch.actions import DeclareLaunchArgument
    from launch.launch_description_sources import get_launch_description_from_python_launch_file
    from launch_ros.actions import Node as LaunchNode

    description = get_launch_description_from_python_launch_file(
        str(REPO / "launch" / "kitchen_isaac.launch.py")
    )
    arguments = {a.name: a for a in description.entities if isinstance(a, DeclareLaunchArgument)}
    assert set(arguments) == {"namespace", "params_file", "use_sim_time", "scene", "map", "planner", "record"}
    assert arguments["use_sim_time"].default_value[0].text == "true"
    nodes = [e for e in description.entities if isinstance(e, LaunchNode)]
    assert "sim" not in {n.node_executable for n in nodes}
    sim = get_launch_description_from_python_launch_file(str(REPO / "launch" / "kitchen_sim.launch.py"))
    sim_nodes = sorted(
        e.node_executable
        for e in sim.entities
        if isinstance(e, LaunchNode) and e.node_package == "galley_nodes"
    )
    assert sorted([*(n.node_executable for n in nodes), "sim"]) == sim_nodes
