"""``nav2:=true``: Nav2's planner_server and controller_server for galley's, in the stack and the launch file.

The stack's node set with the flag on and off; kitchen_sim.launch.py against stand-ins of the launch
API (test/support/fake_launch.py, no ROS 2) and, where ROS 2's launch is installed, under the real
one (conditions and the Nav2 check evaluated by launch itself; nothing is started). Nav2 itself is
not needed: where it is missing the launch file must say how to install it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from galley_episodes import EpisodeError, bringup
from galley_episodes.episode import run_settings
from galley_nodes import stack

REPO = Path(__file__).resolve().parents[2]
LAUNCH = REPO / "launch" / "kitchen_sim.launch.py"
_spec = importlib.util.spec_from_file_location("fake_launch", REPO / "test" / "support" / "fake_launch.py")
fake_launch = importlib.util.module_from_spec(_spec)
sys.modules["fake_launch"] = fake_launch
_spec.loader.exec_module(fake_launch)

GALLEYS = {"global_planner", "diff_drive_controller"}  # what Nav2's servers stand in for
NAV2 = [(n.package, n.executable, n.name) for n in stack.NAV2_NODES]


@pytest.mark.parametrize("nav2", [False, True])
def test_the_planner_and_controller_run_exactly_when_nav2_is_off_and_the_navigator_always(nav2):
    on, off = stack.Mode(record=True, nav2=True), stack.Mode(record=True)
    names = stack.nodes(on if nav2 else off)
    assert {n for n in GALLEYS if n in names} == (set() if nav2 else GALLEYS)
    assert "navigator" in names
    assert [(n.package, n.executable, n.name) for n in stack.nav2_nodes(on if nav2 else off)] == (
        NAV2 if nav2 else []
    )
    assert set(stack.nodes(on)) == set(stack.nodes(off)) - GALLEYS  # nothing else changes


def test_nav2_is_refused_where_no_oracle_drives_or_there_is_no_map():
    with pytest.raises(ValueError, match="a policy drives the base itself"):
        stack.Mode(driver="policy", nav2=True)
    with pytest.raises(ValueError, match="no map"):
        stack.Mode(graph="square", nav2=True)
    # a policy keeps galley's planner: its observations hold points of /plan
    assert "global_planner" in stack.nodes(stack.Mode(driver="policy"))


def test_galley_run_keeps_its_nodes_and_refuses_nav2(tmp_path):
    mode = stack.Mode(cameras=False, record=True)  # galley run / eval: the embedded host
    assert stack.nodes(mode) == [
        "recorder",
        "sim",
        "map_server",
        "global_planner",
        "diff_drive_controller",
        "navigator",
        "arm_controller",
        "monitor",
        "task_planner",
        "task_executor",
    ]
    assert stack.nav2_nodes(mode) == []
    settings = run_settings("kitchen", 0, out_dir=tmp_path, cameras=False, params=[], policy=None)
    with pytest.raises(EpisodeError, match=r"embedded host cannot run.*nav2:=true"):
        bringup.build_host(stack.Mode(cameras=False, record=True, nav2=True), settings, [])


# -- the launch file against stand-ins -----------------------------------------------------------


def _expected(mode: stack.Mode, args: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The galley nodes the stack says kitchen_sim starts in ``mode``, with their parameters."""
    params = stack.parameters(mode, args, host="ros2")
    return {
        n: {"use_sim_time": args["use_sim_time"], **{p.name: v for p, v in params if p.node == n}}
        for n in stack.nodes(mode)
    }


@pytest.fixture
def nav2_installed(monkeypatch, tmp_path):
    """Nav2's packages in an ament index, for the launch file's check (nav2:=true)."""
    pytest.importorskip("ament_index_python", reason="ament_index_python is not installed")
    packages = [n.package for n in stack.NAV2_NODES]
    monkeypatch.setenv("AMENT_PREFIX_PATH", _ament_index(tmp_path / "nav2", packages))


@pytest.mark.parametrize("nav2", ["false", "true", "True", "1"])
def test_kitchen_sim_starts_nav2s_servers_with_their_params_file_in_place_of_galleys(nav2, nav2_installed):
    description = fake_launch.load(LAUNCH)
    given = {"nav2": nav2, "record": "true"}
    args = fake_launch.arguments_with(description, given)
    on = nav2.lower() in ("true", "1")
    mode = stack.Mode(record=True, markers=True, nav2=on)
    assert fake_launch.started(description, given) == _expected(mode, args)
    others = [
        n for n in fake_launch.running(description, given) if n.package not in ("galley_nodes", "rviz2")
    ]
    assert [(n.package, n.executable, n.name) for n in others] == (NAV2 if on else [])
    for node in others:
        params_file, overrides = node.parameters
        assert Path(fake_launch.evaluate(params_file, args)) == REPO / "config" / "nav2.yaml"
        assert fake_launch.evaluate(overrides["use_sim_time"], args) == "true"
    # the executor's moves go through navigate_to_pose either way
    assert fake_launch.started(description, given)["task_executor"]["move_with"] == "navigate_to_pose"


def _ament_index(root: Path, packages: list[str]) -> str:
    """An ament prefix holding ``packages`` (as ``apt install`` registers them), for the Nav2 check."""
    index = root / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    for package in packages:
        (index / package).touch()
        (root / "share" / package).mkdir(parents=True)
    return str(root)


def test_the_nav2_check_says_what_to_install_and_what_to_leave_out(monkeypatch, tmp_path):
    description = fake_launch.load(LAUNCH)
    fake_launch.perform_opaque_functions(description, {"nav2": "false"})  # nav2 off: nothing looked up
    with pytest.raises(ValueError, match=r"nav2:=yes: true or false"):
        fake_launch.perform_opaque_functions(description, {"nav2": "yes"})
    with pytest.raises(ValueError, match=r"policy:=runs/p nav2:=true: .*a policy drives the base itself"):
        fake_launch.perform_opaque_functions(description, {"nav2": "true", "policy": "runs/p"})

    pytest.importorskip("ament_index_python", reason="ament_index_python is not installed")
    monkeypatch.setenv("AMENT_PREFIX_PATH", _ament_index(tmp_path / "bare", []))
    with pytest.raises(RuntimeError) as err:
        fake_launch.perform_opaque_functions(description, {"nav2": "true"})
    message = str(err.value)
    assert "sudo apt install ros-jazzy-navigation2" in message
    assert all(n.package in message for n in stack.NAV2_NODES)
    packages = [n.package for n in stack.NAV2_NODES]
    monkeypatch.setenv("AMENT_PREFIX_PATH", _ament_index(tmp_path / "nav2", packages))
    fake_launch.perform_opaque_functions(description, {"nav2": "true"})  # installed: goes on


# -- under ROS 2's launch ------------------------------------------------------------------------


def _under_launch(given: dict[str, str]) -> tuple[list[tuple[str, str]], Any]:
    """(package, executable) of each node whose condition holds, and the context, under real launch.

    The launch file's OpaqueFunction is executed as launch would, giving the stack's nodes.
    """
    pytest.importorskip("launch.actions", reason="ROS 2's launch is not installed (PyPI's wheels have none)")
    pytest.importorskip("launch_ros.actions", reason="launch_ros is not installed")
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument, OpaqueFunction
    from launch.launch_description_sources import get_launch_description_from_python_launch_file
    from launch.utilities import perform_substitutions
    from launch_ros.actions import Node

    description = get_launch_description_from_python_launch_file(str(LAUNCH))
    context = LaunchContext()
    for entity in description.entities:
        if isinstance(entity, DeclareLaunchArgument):
            default = perform_substitutions(context, entity.default_value)
            context.launch_configurations[entity.name] = given.get(entity.name, default)
    entities = []
    for entity in description.entities:
        if isinstance(entity, OpaqueFunction):
            entities += entity.execute(context) or []
        else:
            entities.append(entity)
    running = [
        (e.node_package, e.node_executable)
        for e in entities
        if isinstance(e, Node) and (e.condition is None or e.condition.evaluate(context))
    ]
    return running, (description, context)


@pytest.mark.parametrize("given", [{}, {"nav2": "true"}, {"policy": "runs/p"}], ids=repr)
def test_under_launch_the_conditions_start_the_stacks_nodes(given, nav2_installed):
    running, _ = _under_launch(given)
    mode = stack.Mode(
        driver="policy" if given.get("policy") else "oracle", nav2="nav2" in given, markers=True
    )
    expected = [("galley_nodes", n) for n in stack.nodes(mode)]
    expected += [(n.package, n.executable) for n in stack.nav2_nodes(mode)]
    assert [r for r in running if r[0] != "rviz2"] == expected


def test_under_launch_nav2_without_nav2_installed_is_a_launch_error_naming_the_package(monkeypatch, tmp_path):
    monkeypatch.setenv("AMENT_PREFIX_PATH", _ament_index(tmp_path, []))
    with pytest.raises(RuntimeError, match="sudo apt install ros-jazzy-navigation2"):
        _under_launch({"nav2": "true"})
