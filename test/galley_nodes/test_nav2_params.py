"""config/nav2.yaml (Nav2's servers for kitchen_sim.launch.py nav2:=true) against galley's own configuration.

Nav2 itself is not needed: the file is read as the YAML rcl reads, and each value that stands for a
galley setting (the robot's clearance, speed limits, tolerances, frames, topics, the map) is compared
with galley's (config/galley.yaml over the nodes' defaults, the map YAML, the nodes' declarations),
so that changing one side and not the other fails here.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from galley_core.navigation.grid import load_map_yaml
from galley_nodes import stack
from galley_nodes.nodes.diff_drive_controller import CONTROLLER_IDS
from galley_nodes.nodes.global_planner import PLANNER_IDS
from galley_nodes.registry import load_node_class
from galley_runtime.params_file import config_for_node, load_params_files, parameters_for

REPO = Path(__file__).resolve().parents[2]
NAV2 = yaml.safe_load((REPO / "config" / "nav2.yaml").read_text())
MAP = REPO / "maps" / "kitchen.yaml"


def galley(name: str) -> Any:
    """The configuration node ``name`` runs with from the shipped config/galley.yaml."""
    node = load_node_class(name)
    entries = load_params_files([REPO / "config" / "galley.yaml"])
    declared = [f.name for f in dataclasses.fields(node.Config)]
    return config_for_node(node.Config, f"/{name}", parameters_for(entries, f"/{name}", declared))


def params(*path: str) -> dict[str, Any]:
    """The ``ros__parameters`` of a node of nav2.yaml (a costmap: ``"local_costmap", "local_costmap"``)."""
    section = NAV2
    for key in path:
        section = section[key]
    return section["ros__parameters"]


PLANNER, CONTROLLER = params("planner_server"), params("controller_server")
COSTMAPS = {name: params(name, name) for name in ("global_costmap", "local_costmap")}
NODES = {"planner_server": PLANNER, "controller_server": CONTROLLER, **COSTMAPS}


def test_every_nav2_node_of_the_stack_has_its_section_on_sim_time():
    sections = {n.name: params(n.name) for n in stack.NAV2_NODES}
    assert set(sections) | {"global_costmap", "local_costmap"} == set(NAV2)
    for name, values in [*sections.items(), *COSTMAPS.items()]:
        assert values["use_sim_time"] is True, name
    manager = sections["lifecycle_manager_navigation"]
    assert manager["autostart"] is True
    assert manager["node_names"] == [n.name for n in stack.NAV2_NODES if n.managed]


def test_the_navigators_empty_ids_find_the_one_planner_and_controller():
    # The navigator sends planner_id and controller_id empty: Nav2 then takes its only plugin.
    assert PLANNER["planner_plugins"] == ["GridBased"]
    assert CONTROLLER["controller_plugins"] == ["FollowPath"]
    assert len(CONTROLLER["goal_checker_plugins"]) == len(CONTROLLER["progress_checker_plugins"]) == 1
    # ... and galley's servers answer to the same ids, so either can stand in for the other.
    assert "GridBased" in PLANNER_IDS
    assert "FollowPath" in CONTROLLER_IDS
    for plugins in ("planner_plugins",):
        for plugin in PLANNER[plugins]:
            assert "plugin" in PLANNER[plugin]
    for plugins in ("controller_plugins", "goal_checker_plugins", "progress_checker_plugins"):
        for plugin in CONTROLLER[plugins]:
            assert "plugin" in CONTROLLER[plugin]


def test_the_robot_and_the_map_are_galleys():
    planner = galley("global_planner")
    grid = load_map_yaml(MAP)
    for name, costmap in COSTMAPS.items():
        assert costmap["robot_radius"] == planner.clearance_m, name
        assert "footprint" not in costmap, f"{name}: a footprint would override robot_radius"
        assert costmap["resolution"] == grid.resolution, name
        inflation = costmap[costmap["plugins"][-1]]
        assert inflation["plugin"] == "nav2_costmap_2d::InflationLayer"
        assert inflation["inflation_radius"] >= costmap["robot_radius"], f"{name}: lethal within the radius"
    glob = COSTMAPS["global_costmap"]
    assert glob["lethal_cost_threshold"] == planner.occupied_threshold
    grid_based = PLANNER["GridBased"]
    assert grid_based["allow_unknown"] == planner.allow_unknown
    assert glob["track_unknown_space"] == (not planner.allow_unknown)  # unknown stays unknown, then blocked
    assert grid_based["tolerance"] == (planner.snap_radius_m if planner.snap_to_free else 0.0)


def test_the_scene_approach_poses_lie_outside_the_lethal_radius():
    # With tolerance 0 (galley's snap_to_free false) NavFn fails a goal in a lethal cell: every
    # approach pose of the scene must be farther than robot_radius from the map's obstacles.
    grid = load_map_yaml(MAP)
    rows, cols = np.nonzero(np.asarray(grid.data) >= COSTMAPS["global_costmap"]["lethal_cost_threshold"])
    obstacles = grid.grid_to_world(np.stack([cols + 0.5, rows + 0.5], axis=1))
    scene = yaml.safe_load((REPO / "config" / "scenes" / "kitchen.yaml").read_text())
    radius = COSTMAPS["global_costmap"]["robot_radius"]
    for zone, entry in scene["zones"].items():
        x, y, _ = entry["approach"]
        r, c = grid.world_to_cell(x, y)
        cx, cy = grid.cell_to_world(r, c)  # Nav2 measures from the goal's cell centre
        clearance = float(np.hypot(obstacles[:, 0] - cx, obstacles[:, 1] - cy).min())
        assert clearance > radius, f"zone {zone}: approach cell {clearance:.2f} m from an obstacle"


def test_speeds_tolerances_and_progress_are_galleys_controllers():
    ctl = galley("diff_drive_controller")
    assert CONTROLLER["controller_frequency"] == ctl.rate_hz
    rpp = CONTROLLER["FollowPath"]
    assert rpp["plugin"] == "nav2_regulated_pure_pursuit_controller::RegulatedPurePursuitController"
    assert rpp["desired_linear_vel"] == ctl.max_linear_speed_mps
    assert rpp["rotate_to_heading_angular_vel"] == ctl.max_angular_speed_rps
    assert rpp["rotate_to_heading_min_angle"] == ctl.rotate_in_place_rad
    assert rpp["regulated_linear_scaling_min_speed"] == min(ctl.band_speed_limits_mps)
    assert rpp["lookahead_dist"] == ctl.switch_distance_m
    assert rpp["allow_reversing"] is False  # galley's follower never reverses
    assert all(rpp[k] <= ctl.max_linear_speed_mps for k in ("min_approach_linear_velocity",))
    goal = CONTROLLER[CONTROLLER["goal_checker_plugins"][0]]
    assert goal["xy_goal_tolerance"] == ctl.arrival_distance_m
    assert goal["yaw_goal_tolerance"] == ctl.heading_tolerance_rad
    assert goal["xy_goal_tolerance"] < galley("task_executor").nav_success_radius_m
    progress = CONTROLLER[CONTROLLER["progress_checker_plugins"][0]]
    assert progress["plugin"] == "nav2_controller::PoseProgressChecker"  # distance or rotation, as galley's
    assert progress["required_movement_radius"] == ctl.progress_distance_m
    assert progress["required_movement_angle"] == ctl.progress_rotation_rad
    assert progress["movement_time_allowance"] == ctl.progress_timeout_s


def test_frames_are_the_ones_the_simulator_and_galleys_navigation_use():
    planner, ctl, navigator, sim = (
        galley(n) for n in ("global_planner", "diff_drive_controller", "navigator", "sim")
    )
    glob, local = COSTMAPS["global_costmap"], COSTMAPS["local_costmap"]
    assert glob["global_frame"] == planner.map_frame == navigator.map_frame == sim.map_frame
    assert local["global_frame"] == sim.odom_frame
    for costmap in (glob, local):
        assert costmap["robot_base_frame"] == planner.robot_frame == ctl.robot_frame == sim.base_frame
    assert galley("map_server").frame_id == glob["global_frame"]


def _topic(node: str, direction: str, name: str) -> Any:
    declared = getattr(load_node_class(node), direction)
    return next(d for d in declared if "/" + d.topic.lstrip("/") == name)


def test_topics_and_types_are_the_ones_galleys_nodes_declare():
    # /odom and /scan from the simulator, /cmd_vel to it (a Twist: not Nav2's stamped form)
    assert _topic("sim", "publishes", CONTROLLER["odom_topic"]).type == "nav_msgs/msg/Odometry"
    assert _topic("sim", "subscribes", "/cmd_vel").type == "geometry_msgs/msg/Twist"
    assert CONTROLLER["enable_stamped_cmd_vel"] is False
    local = COSTMAPS["local_costmap"]
    for layer in local["plugins"]:
        for source in local[layer].get("observation_sources", "").split():
            entry = local[layer][source]
            assert entry["data_type"] == "LaserScan"
            assert _topic("sim", "publishes", entry["topic"]).type == "sensor_msgs/msg/LaserScan"
    # /map from galley's map_server, latched as Nav2's static layer subscribes it
    static = COSTMAPS["global_costmap"]["static_layer"]
    assert static["plugin"] == "nav2_costmap_2d::StaticLayer"
    assert static["map_subscribe_transient_local"] is True
    assert _topic("map_server", "publishes", "/map").qos.durability == "transient_local"
    for costmap in COSTMAPS.values():  # the costmaps' default, <namespace>/map
        assert costmap.get("map_topic", "/map") == "/map"
    assert "map_topic" not in static


@pytest.mark.parametrize("name", sorted(NODES))
def test_numbers_are_finite_and_positive_where_they_are_rates_or_sizes(name):
    def walk(values: dict[str, Any], prefix: str = "") -> None:
        for key, value in values.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            elif isinstance(value, float) and key.endswith(("frequency", "radius", "resolution", "vel")):
                assert math.isfinite(value) and value > 0, f"{name}: {prefix}{key} = {value}"

    walk(NODES[name])
