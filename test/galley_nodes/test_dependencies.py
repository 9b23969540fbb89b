"""What the nodes need: the controllers, the monitor and the recorder install and run without torch or
MuJoCo; under ROS 2 the nodes need neither rosbags nor the embedded host.

The nodes that need torch (task_planner, diffusion_policy) or MuJoCo (sim) come with extras of
galley-nodes (``galley_nodes.executables.EXTRAS``); everything else must stay clear of them, in the
declared dependencies (setup.py, package.xml) and in what the modules import.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

from packaging.requirements import Requirement

from galley_nodes.executables import EXTRAS
from galley_nodes.registry import NODES

SRC = Path(__file__).resolve().parents[2] / "src"
#: What a robot's controllers must not pull in: the heavy dependencies and the packages that bring them.
HEAVY = {"torch", "mujoco", "galley-learning", "galley-sim"}


def setup_requirements(package: str) -> tuple[list[str], dict[str, list[str]]]:
    """(install_requires, extras_require) of src/<package>/setup.py, read without running it."""
    tree = ast.parse((SRC / package / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setup":
            keywords = {k.arg: k.value for k in node.keywords}
            requires = (
                ast.literal_eval(keywords["install_requires"]) if "install_requires" in keywords else []
            )
            extras = ast.literal_eval(keywords["extras_require"]) if "extras_require" in keywords else {}
            return requires, extras
    raise AssertionError(f"src/{package}/setup.py calls no setup()")


def installed_with(requirement: str) -> set[str]:
    """Every distribution ``pip install <requirement>`` asks for: galley's own followed through
    their setup.py (extras included where named), the others by name."""
    seen: set[str] = set()
    todo = [Requirement(requirement)]
    while todo:
        req = todo.pop()
        name = req.name.lower().replace("_", "-")
        key = name + "".join(f"[{e}]" for e in sorted(req.extras))
        if key in seen:
            continue
        seen.add(key)
        seen.add(name)
        if name.startswith("galley-"):
            requires, extras = setup_requirements(name.replace("-", "_"))
            todo += [Requirement(r) for r in requires]
            for extra in req.extras:
                todo += [Requirement(r) for r in extras[extra]]
    return {key for key in seen if "[" not in key}


def ros_depends(package: str) -> set[str]:
    """The galley packages ``package``'s package.xml depends on, followed through theirs."""
    found: set[str] = set()
    todo = [package]
    while todo:
        root = ET.parse(SRC / todo.pop() / "package.xml").getroot()
        for tag in ("depend", "exec_depend", "build_depend"):
            for element in root.iter(tag):
                name = (element.text or "").strip()
                if name.startswith("galley_") and name not in found:
                    found.add(name)
                    todo.append(name)
    return found


def test_galley_nodes_installs_neither_torch_nor_mujoco():
    assert not installed_with("galley-nodes") & HEAVY
    assert not installed_with("galley-nodes[hdf5]") & HEAVY
    assert {"galley-core", "galley-description", "galley-runtime", "rosbags", "numpy"} <= installed_with(
        "galley-nodes"
    )


def test_each_heavy_node_has_an_extra_that_installs_what_it_needs():
    assert {"torch", "galley-learning"} <= installed_with("galley-nodes[planner]")
    assert {"torch", "diffusers"} <= installed_with("galley-nodes[policy]")
    assert "mujoco" in installed_with("galley-nodes[sim]")
    assert {"torch", "diffusers", "mujoco", "h5py"} <= installed_with("galley-nodes[all]")
    _, extras = setup_requirements("galley_nodes")
    assert set(EXTRAS.values()) <= set(extras)
    assert set(EXTRAS) <= set(NODES)


def test_the_colcon_package_depends_on_neither_the_simulator_nor_learning():
    assert ros_depends("galley_nodes") == {
        "galley_core",
        "galley_description",
        "galley_runtime",
        "galley_msgs",
    }


#: Runs in a fresh interpreter with torch, mujoco, galley_learning and galley_sim unimportable:
#: loads every node outside EXTRAS, then runs the robot's graph without a simulator (Isaac Sim's
#: bring-up: its bridge would publish the sensors) and the square demo, 3 s each.
_BLOCKED_CHILD = textwrap.dedent(
    """
    import importlib.abc, json, sys, tempfile

    BLOCKED = ("torch", "mujoco", "galley_learning", "galley_sim")

    class Blocked(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked: a controller must not need it")
            return None

    sys.meta_path.insert(0, Blocked())

    from galley_nodes import stack
    from galley_nodes.executables import EXTRAS
    from galley_nodes.registry import NODES, load_node_class
    from galley_runtime.config_files import default_params_files
    from galley_runtime.embedded import EmbeddedHost
    from galley_runtime.qos import QoS

    loaded = [name for name in NODES if name not in EXTRAS and load_node_class(name)]
    out = tempfile.mkdtemp()
    topics = {"/map": "nav_msgs/msg/OccupancyGrid", "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray",
              "/odom": "nav_msgs/msg/Odometry", "/arm/status": "galley_msgs/msg/ActionStatus"}
    inputs = {"scene": "kitchen", "seed": 0, "output_dir": out, "bag_name": "bag"}
    runs = {}
    for mode in (stack.Mode(simulator="isaac", planner=False, record=True), stack.Mode(graph="square")):
        host = EmbeddedHost(default_params_files())
        seen = dict.fromkeys(topics, 0)
        probe = host.participant("probe")
        for topic, type_name in topics.items():
            qos = QoS.latched() if topic == "/map" else QoS()
            count = lambda m, t=topic: seen.__setitem__(t, seen[t] + 1)
            probe.create_subscription(topic, type_name, count, qos)
        given = {}
        for p, value in stack.parameters(mode, inputs, host="embedded"):
            given.setdefault(p.node, {})[p.name] = value
        for name in stack.nodes(mode):
            remapped = stack.remappings(mode, name) or None
            host.add_node(load_node_class(name), parameters=given.get(name, {}), remappings=remapped)
        host.run_for(3.0)
        host.shutdown()
        runs[mode.graph] = {"nodes": stack.nodes(mode), "messages": seen, "time_s": host.now_s}
    bag = sorted(p.name for p in (__import__("pathlib").Path(out) / "bag").iterdir())
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print(json.dumps({"loaded": loaded, "runs": runs, "bag": bag, "heavy": heavy}))
    """
)


def test_the_controllers_monitor_and_recorder_run_without_torch_or_mujoco():
    child = [sys.executable, "-c", _BLOCKED_CHILD]
    done = subprocess.run(child, check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(report["loaded"]) == sorted(set(NODES) - set(EXTRAS))
    kitchen, square = report["runs"]["kitchen"], report["runs"]["square"]
    for node in ("diff_drive_controller", "global_planner", "arm_controller", "navigator", "map_server"):
        assert node in kitchen["nodes"]
    assert {"monitor", "recorder", "task_executor"} <= set(kitchen["nodes"])
    assert not set(EXTRAS) & set(kitchen["nodes"])
    assert kitchen["time_s"] >= 3.0
    assert kitchen["messages"]["/map"] == 1  # map_server published the scene's map
    assert kitchen["messages"]["/diagnostics"] >= 2  # the monitor ran its checks at 1 Hz
    assert "metadata.yaml" in report["bag"]  # the recorder closed its bag
    assert square["messages"]["/odom"] >= 100  # the unicycle base integrated at 50 Hz
    assert report["heavy"] == []


_EXECUTABLES_CHILD = textwrap.dedent(
    """
    import importlib.abc, sys, types

    class Blocked(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("torch", "mujoco", "galley_learning", "galley_sim"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Blocked())
    ran = []
    for name in ("galley_runtime.ros2", "galley_runtime.ros2.host"):  # rclpy's host, stood in for
        sys.modules[name] = types.ModuleType(name)
    sys.modules["galley_runtime.ros2.host"].run_node = lambda cls: ran.append(cls.name) or 0

    from galley_nodes import executables

    codes = {name: getattr(executables, name)() for name in ("diff_drive_controller", "task_planner", "sim")}
    print(codes, ran)
    """
)


def test_a_node_executable_names_the_extra_it_misses():
    child = [sys.executable, "-c", _EXECUTABLES_CHILD]
    done = subprocess.run(child, check=True, capture_output=True, text=True, timeout=120)
    codes = {"diff_drive_controller": 0, "task_planner": 2, "sim": 2}
    assert done.stdout.strip() == f"{codes} ['diff_drive_controller']"
    assert "the node task_planner needs galley-nodes[planner]" in done.stderr
    assert "pip install 'galley-nodes[sim]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_ros2_path_imports_no_rosbags():
    code = (
        "import sys\n"
        "import galley_nodes.executables, galley_runtime.conversions\n"
        "from galley_nodes.registry import NODES, load_node_class\n"
        "for name in NODES: load_node_class(name)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('rosbags', 'galley_runtime.embedded'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
