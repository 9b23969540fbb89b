"""Every node type, attribute, value and connection of the graphs exists in Isaac Sim 5.0, 5.1 and 6.0.

Checked against the node catalogue in ../shared/isaacsim (generated from the public Isaac Sim
repository at v5.0.0, v5.1.0 and v6.0.1). Kit's own nodes, which the catalogue does not cover, are
checked against galley_isaac.catalogue.KIT_NODES (from Kit's node documentation).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from galley_isaac.catalogue import CATALOGUE_FILES, KIT_NODES, check_graphs, load_catalogue
from galley_isaac.config import load_bridge_config
from galley_isaac.graph import Connection, Graph, GraphNode, Targets, type_name
from galley_isaac.graphs import bridge_graphs

REPO = Path(__file__).resolve().parents[2]
CATALOGUE_DIR = REPO.parent / "shared" / "isaacsim"

pytestmark = pytest.mark.skipif(
    not (CATALOGUE_DIR / CATALOGUE_FILES["5.0"]).is_file(),
    reason=f"the Isaac Sim node catalogue is not at {CATALOGUE_DIR} (CI has shared/ beside the checkout)",
)


@pytest.fixture(scope="module")
def graphs():
    return bridge_graphs(load_bridge_config(REPO / "config" / "isaac" / "kitchen.yaml"))


@pytest.mark.parametrize("version", sorted(CATALOGUE_FILES))
def test_every_node_attribute_value_and_connection_exists(graphs, version):
    catalogue = load_catalogue(CATALOGUE_DIR, version)
    assert check_graphs(graphs, catalogue) == []
    used = {n.type for g in graphs for n in g.nodes}
    assert used - set(catalogue.nodes) == {t for t in used if t in KIT_NODES}  # all else is Isaac's
    assert len(used) >= 20


@pytest.mark.parametrize("version", sorted(CATALOGUE_FILES))
def test_kit_nodes_are_not_in_the_isaac_catalogue(version):
    assert not set(KIT_NODES) & set(load_catalogue(CATALOGUE_DIR, version).nodes)


def test_the_five_kitchen_r_graphs_and_the_command_side_are_there(graphs):
    kinds = {n.type.rpartition(".")[2] for g in graphs for n in g.nodes}
    assert {
        "ROS2PublishClock",
        "ROS2CameraHelper",
        "ROS2CameraInfoHelper",
        "IsaacCreateRenderProduct",
        "IsaacReadIMU",
        "ROS2PublishImu",
        "ROS2RtxLidarHelper",
        "ROS2PublishTransformTree",
        "IsaacComputeOdometry",
        "ROS2PublishOdometry",
        "ROS2SubscribeTwist",
        "DifferentialController",
        "IsaacArticulationController",
        "ROS2SubscribeJointState",
        "ROS2PublishJointState",
    } <= kinds


def broken(graph: Graph, **change) -> list[Graph]:
    return [dataclasses.replace(graph, **change)]


def test_the_check_catches_what_isaac_sim_would_reject(graphs):
    catalogue = load_catalogue(CATALOGUE_DIR, "5.1")
    clock = next(g for g in graphs if g.path.endswith("/Clock"))
    nodes = list(clock.nodes)
    i = next(k for k, n in enumerate(nodes) if n.name == "publish_clock")
    publish = nodes[i]

    def with_node(node: GraphNode) -> list[Graph]:
        return broken(clock, nodes=(*nodes[:i], node, *nodes[i + 1 :]))

    wrong_type = dataclasses.replace(publish, type="isaacsim.ros2.bridge.ROS2PublishClocks")
    assert "no such node type" in " ".join(check_graphs(with_node(wrong_type), catalogue))
    typo = dataclasses.replace(publish, values={**publish.values, "topicname": "/clock"})
    assert "no input 'topicname'" in " ".join(check_graphs(with_node(typo), catalogue))
    bad_value = dataclasses.replace(publish, values={**publish.values, "queueSize": -1})
    assert "cannot take -1" in " ".join(check_graphs(with_node(bad_value), catalogue))
    target = dataclasses.replace(publish, values={**publish.values, "topicName": Targets(("/World",))})
    assert "cannot take" in " ".join(check_graphs(with_node(target), catalogue))
    unknown_port = Connection("tick.outputs:ticks", "publish_clock.inputs:execIn")
    problems = check_graphs(broken(clock, connections=(*clock.connections[1:], unknown_port)), catalogue)
    assert any("has no outputs:ticks" in p for p in problems)
    mismatch = Connection("sim_time.outputs:simulationTime", "publish_clock.inputs:topicName")
    problems = check_graphs(broken(clock, connections=(*clock.connections, mismatch)), catalogue)
    assert any("incompatible types" in p for p in problems) and any(
        "both connected and set" in p for p in problems
    )
    undriven = check_graphs(broken(clock, connections=clock.connections[1:]), catalogue)
    assert any("nothing drives inputs:execIn" in p for p in undriven)


def test_version_specific_attributes_are_caught():
    # ROS2CameraHelper lost 'viewport' in 6.0; a graph setting it passes 5.0 and fails 6.0.
    graph = Graph(
        "/G",
        (
            GraphNode("tick", "omni.graph.action.OnPlaybackTick"),
            GraphNode(
                "cam", "isaacsim.ros2.bridge.ROS2CameraHelper", {"viewport": "Viewport", "type": "rgb"}
            ),
        ),
        (Connection("tick.outputs:tick", "cam.inputs:execIn"),),
    )
    assert check_graphs([graph], load_catalogue(CATALOGUE_DIR, "5.0")) == []
    assert "no input 'viewport'" in " ".join(check_graphs([graph], load_catalogue(CATALOGUE_DIR, "6.0")))


def test_isaac_sim_4_5_gets_the_older_prefixes(graphs):
    names = {type_name(n.type, "4.5") for g in graphs for n in g.nodes}
    assert "omni.isaac.ros2_bridge.ROS2PublishClock" in names
    assert "omni.isaac.sensor.IsaacReadIMU" in names
    assert "omni.isaac.wheeled_robots.DifferentialController" in names
    assert not any(n.startswith("isaacsim.") for n in names)
    assert "omni.graph.action.OnPlaybackTick" in names  # Kit's names did not change
