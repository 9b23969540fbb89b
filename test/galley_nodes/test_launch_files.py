"""Launch files and the parameter file, checked without ROS 2: each starts the stack of its mode.

The launch files only run where ROS 2 is installed (test_ros2_host.py loads them with launch's
API there); here they run against stand-ins for that API (test/support/fake_launch.py), for every
combination of the launch arguments that choose the mode (policy, cameras, record, nav2): the
galley nodes they start are stack.nodes() of that mode, each with stack.parameters() (and the
flags stack.flags() says), every parameter one its node's configuration declares, and Nav2's
servers run exactly where the stack says.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import re
import sys
from pathlib import Path

import pytest

from galley_nodes import stack
from galley_nodes.registry import load_node_class
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


#: What each launch file settles of the mode; its launch arguments choose the rest.
SETTLED = {
    "kitchen_sim.launch.py": stack.Mode(markers=True),
    "kitchen_isaac.launch.py": stack.Mode(simulator="isaac", markers=True),
    "demo.launch.py": stack.Mode(graph="square"),
}
#: The values each mode-choosing launch argument is tried with.
TRIED = {
    "policy": ("", "runs/p"),
    "cameras": ("true", "false"),
    "record": ("false", "true"),
    "nav2": ("false", "true"),
}


def combinations(description) -> list[dict[str, str]]:
    """Every combination of the mode-choosing arguments the launch file declares."""
    choosing = [name for name in TRIED if name in fake_launch.arguments(description)]
    return [
        dict(zip(choosing, values, strict=True))
        for values in itertools.product(*(TRIED[n] for n in choosing))
    ]


def expected_mode(path: Path, given: dict[str, str]) -> stack.Mode:
    """The mode the launch arguments ``given`` mean (README: policy:=RUN drives with the policy...)."""
    changes: dict[str, object] = {
        name: given[name] == "true" for name in ("cameras", "record", "nav2") if name in given
    }
    if "policy" in given:
        changes["driver"] = "policy" if given["policy"] else "oracle"
    return dataclasses.replace(SETTLED[path.name], **changes)


@pytest.fixture
def nav2_installed(monkeypatch, tmp_path):
    """An ament index holding Nav2's packages, for kitchen_sim's check with nav2:=true."""
    pytest.importorskip("ament_index_python", reason="ament_index_python is not installed")
    for package in {n.package for n in stack.NAV2_NODES}:
        (tmp_path / "share" / "ament_index" / "resource_index" / "packages").mkdir(
            parents=True, exist_ok=True
        )
        (tmp_path / "share" / "ament_index" / "resource_index" / "packages" / package).touch()
        (tmp_path / "share" / package).mkdir(parents=True)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))


def cases() -> list[tuple[Path, dict[str, str]]]:
    return [(path, given) for path in LAUNCH_FILES for given in combinations(fake_launch.load(path))]


@pytest.mark.parametrize(
    ("path", "given"),
    cases(),
    ids=[f"{p.name}-{'-'.join(f'{k}={v}' for k, v in g.items())}" for p, g in cases()],
)
def test_every_combination_of_launch_arguments_starts_the_stack_of_its_mode(path, given, nav2_installed):
    description = fake_launch.load(path)
    given = {**given, "seed": "4"} if "seed" in fake_launch.arguments(description) else given
    args = fake_launch.arguments_with(description, given)
    try:
        mode = expected_mode(path, given)
    except ValueError as err:  # e.g. a policy with Nav2: the launch file refuses it as the stack does
        with pytest.raises(ValueError, match=re.escape(str(err))):
            fake_launch.started(description, given)
        return
    started = fake_launch.started(description, given)
    assert list(started) == stack.nodes(mode)
    flags = stack.flags(mode)
    assert all(not n.when or flags[n.when] for n in stack.NODES if n.name in started)
    params = stack.parameters(mode, args, host="ros2")
    for name, values in started.items():
        assert values == {
            "use_sim_time": args["use_sim_time"],
            **{p.name: v for p, v in params if p.node == name},
        }
        fields = {f.name for f in dataclasses.fields(load_node_class(name).Config)}
        assert set(values) - fields <= HOST_PARAMETERS, f"{path.name}: {name} has no such parameters"
    others = [
        n for n in fake_launch.running(description, given) if n.package not in ("galley_nodes", "rviz2")
    ]
    assert [n.name for n in others] == [n.name for n in stack.nav2_nodes(mode)]


def test_a_yes_or_no_launch_argument_is_refused_by_name_otherwise():
    description = fake_launch.load(REPO / "launch" / "kitchen_sim.launch.py")
    with pytest.raises(ValueError, match=r"^cameras:=maybe: true or false$"):
        fake_launch.started(description, {"cameras": "maybe"})


def test_the_full_bring_up_starts_every_node_of_the_stack(nav2_installed):
    description = fake_launch.load(REPO / "launch" / "kitchen_sim.launch.py")
    valid = [g for g in combinations(description) if not (g["nav2"] == "true" and g["policy"])]
    started = {name for given in valid for name in fake_launch.started(description, given)}
    assert started == {
        "sim",
        "perception",  # with policy:=RUN and cameras:=true (the default)
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
    assert named >= {"map_server", "diff_drive_controller", "arm_controller", "monitor"}
    for name in sorted(named):
        node = load_node_class(name)
        declared = [f.name for f in dataclasses.fields(node.Config)]
        config_for_node(node.Config, f"/{name}", parameters_for(entries, f"/{name}", declared))


def test_a_policy_by_name_drives_with_the_cameras_it_was_trained_with(tmp_path, monkeypatch):
    """policy:=NAME is a shipped policy: the node gets its folder, every node its params.yaml after
    params_file (and overrides_file after both, for the user's last word)."""
    from galley_learning.policy import shipped

    toy = tmp_path / "weights" / "toy"
    toy.mkdir(parents=True)
    (toy / "policy.pt").write_bytes(b"")
    (toy / "params.yaml").write_text("sim:\n  ros__parameters:\n    image_width: 64\n")
    monkeypatch.setattr(shipped, "WEIGHTS", tmp_path / "weights")
    description = fake_launch.load(REPO / "launch" / "kitchen_sim.launch.py")
    given = {"policy": "toy", "overrides_file": str(tmp_path / "mine.yaml")}
    args = fake_launch.arguments_with(description, given)
    assert fake_launch.started(description, given)["diffusion_policy"]["run"] == str(toy)
    for node in fake_launch.galley_nodes(description, given):
        files = [fake_launch.evaluate(p, args) for p in node.parameters if not isinstance(p, dict)]
        assert files == [args["params_file"], str(toy / "params.yaml"), str(tmp_path / "mine.yaml")]
    # a value that names no policy reaches the node as given, whose error names it
    assert fake_launch.started(description, {"policy": "nowhere"})["diffusion_policy"]["run"] == "nowhere"
