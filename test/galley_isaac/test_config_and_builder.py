"""The bridge configuration file, the og.Controller.edit arguments, and the Isaac-less import."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from galley_isaac.builder import build
from galley_isaac.config import BridgeConfigError, bridge_config_from_dict, load_bridge_config
from galley_isaac.graph import Connection, Graph, GraphNode, Targets, edit_spec
from galley_isaac.graphs import bridge_graphs
from galley_isaac.run_isaac import main, missing_files

REPO = Path(__file__).resolve().parents[2]
KITCHEN = REPO / "config" / "isaac" / "kitchen.yaml"


def kitchen_data() -> dict:
    return yaml.safe_load(KITCHEN.read_text())


def test_the_kitchen_config_loads_with_paths_resolved():
    config = load_bridge_config(KITCHEN)
    assert config.scene.usd_path == str((KITCHEN.parent / "../../assets/isaac/kitchen.usd").resolve())
    assert config.scene.scale == 1.0
    assert config.base_link_prim == "/World/galley_mm/base_link"
    assert config.objects["apple"] == "/World/kitchen/objects/apple"
    assert config.cameras["wrist"].frame == "wrist_camera_optical"
    assert config.rates.every("camera_hz") == 5 and config.rates.every("imu_hz", "physics_hz") == 2


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("scene", "scale", 0.0, "scene.scale = 0.0 is not allowed: > 0"),
        ("robot", "wheel_radius_m", -0.1, "robot.wheel_radius_m = -0.1 is not allowed: > 0 (m)"),
        ("robot", "start_pose", [1.0, 2.0], "robot.start_pose"),
        ("rates", "camera_hz", 7.0, "rates.camera_hz = 7.0 is not allowed: a divisor of render_hz"),
        (
            "scene",
            "usd_pth",
            "x.usd",
            "scene.usd_pth = 'x.usd' is not allowed: no such parameter; did you mean usd_path",
        ),
    ],
)
def test_bad_values_name_the_key_and_what_is_allowed(section, key, value, expected):
    data = kitchen_data()
    data[section][key] = value
    with pytest.raises(BridgeConfigError, match=r"kitchen\.yaml") as err:
        bridge_config_from_dict(data, source="config/isaac/kitchen.yaml")
    assert expected in str(err.value)


def test_structural_mistakes_are_explained():
    data = kitchen_data()
    del data["cameras"]["wrist"]
    with pytest.raises(BridgeConfigError, match="cameras must list exactly base, wrist, top_down"):
        bridge_config_from_dict(data)
    data = kitchen_data()
    data["robot_links"]["waist_link"] = "arm_base_link"
    with pytest.raises(BridgeConfigError, match=r"robot_links.waist_link = .* \[parent frame, prim path\]"):
        bridge_config_from_dict(data)
    data = kitchen_data()
    data["static_links"]["waist_link"] = ["base_link", "x"]
    with pytest.raises(
        BridgeConfigError, match=r"static_links\.waist_link repeats the frame of robot_links\.waist_link"
    ):
        bridge_config_from_dict(data)
    data = kitchen_data()
    data["sensors"] = {}
    with pytest.raises(BridgeConfigError, match=r"unknown section\(s\) \['sensors'\]"):
        bridge_config_from_dict(data)


def test_missing_usd_files_are_reported_with_the_fix(tmp_path):
    config = load_bridge_config(KITCHEN)
    problems = missing_files(config)
    assert len(problems) == 2 and "scene.usd_path" in problems[0] and "does not exist; fix:" in problems[0]
    (tmp_path / "kitchen.usd").write_text("#usda 1.0\n")
    data = kitchen_data()
    data["scene"]["usd_path"] = "kitchen.usd"
    data["robot"]["usd_path"] = ""
    path = tmp_path / "bridge.yaml"
    path.write_text(yaml.safe_dump(data))
    assert missing_files(load_bridge_config(path)) == []


def test_run_isaac_stops_before_starting_isaac_sim_on_a_bad_config(capsys):
    assert main(["--config", str(KITCHEN)]) == 2  # the USD files are not shipped
    assert "scene.usd_path" in capsys.readouterr().err


def test_edit_spec_is_what_og_controller_edit_takes():
    graph = Graph(
        "/Galley/Test",
        (
            GraphNode("tick", "omni.graph.action.OnPlaybackTick"),
            GraphNode(
                "odom", "isaacsim.core.nodes.IsaacComputeOdometry", {"chassisPrim": Targets(("/World/r",))}
            ),
        ),
        (Connection("tick.outputs:tick", "odom.inputs:execIn"),),
    )
    spec, edits = edit_spec(graph, "4.5")
    assert spec == {"graph_path": "/Galley/Test", "evaluator_name": "execution"}
    assert edits["create_nodes"] == [
        ("tick", "omni.graph.action.OnPlaybackTick"),
        ("odom", "omni.isaac.core_nodes.IsaacComputeOdometry"),
    ]
    assert edits["set_values"] == [("odom.inputs:chassisPrim", Targets(("/World/r",)))]
    assert edits["connect"] == [("tick.outputs:tick", "odom.inputs:execIn")]


def test_descriptions_reject_malformed_graphs():
    with pytest.raises(ValueError, match=re.escape("expected '<node>.inputs:<attribute>'")):
        Connection("a.outputs:x", "b.outputs:y")
    with pytest.raises(ValueError, match=r"names no node 'c'"):
        Graph("/G", (GraphNode("a", "t"),), (Connection("a.outputs:x", "c.inputs:y"),))
    with pytest.raises(ValueError, match="must be absolute"):
        Targets(("World/robot",))


def test_graph_names_and_overrides_cover_every_tf_prim():
    graphs = bridge_graphs(load_bridge_config(KITCHEN))
    assert [g.path for g in graphs] == [
        f"/Galley/{n}"
        for n in ("Clock", "Cameras", "Imu", "Lidar", "TF", "Odometry", "JointStates", "Commands")
    ]
    tf = graphs[4]
    assert tf.name_overrides["/World/kitchen/objects/apple"] == "object/apple"
    assert (
        tf.name_overrides["/World/galley_mm/base_link/base_camera_link/camera/galley_optical"]
        == "base_camera_optical"
    )
    odometry = graphs[5]
    map_tf = odometry.node("publish_map_tf")
    assert map_tf.value("translation") == [0.0, 0.8, 0.0]  # robot.start_pose until the stage says otherwise


def test_build_explains_that_it_needs_isaac_sim():
    assert "omni.graph.core" not in sys.modules
    with pytest.raises(ImportError, match=re.escape("run it with Isaac Sim's python.sh")):
        build([], "5.1")
