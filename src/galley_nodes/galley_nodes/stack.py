"""The stack as data: which nodes run in which mode, and the parameters each mode gives them.

Every bring-up is made from this one description: ``galley run`` / ``eval`` / ``collect`` and
``galley demo`` (embedded host, galley_cli.bringup), launch/kitchen_sim.launch.py,
launch/kitchen_isaac.launch.py and launch/demo.launch.py (ROS 2), and ``galley topics``. What a
bring-up varies on is a :class:`Mode`; what it gives at start (the scene, the seed, a policy's
run...) are its inputs, named as the launch arguments name them. A parameter whose input a
bring-up does not give is left to the params files (config/galley.yaml and the user's).

Pure data and small functions: importing this module imports no node, no rclpy and no launch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

__all__ = [
    "CAMERA_TOPICS",
    "GRAPHS",
    "LAUNCH_CHOICES",
    "NAV2_APT",
    "NAV2_NODES",
    "NODES",
    "PARAMS",
    "REMAPS",
    "SIMULATOR_STAND_IN",
    "UNPRODUCED",
    "Choice",
    "Input",
    "Mode",
    "Nav2Node",
    "Param",
    "Remap",
    "StackNode",
    "Unproduced",
    "flags",
    "launch_mode",
    "modes",
    "nav2_nodes",
    "nodes",
    "parameters",
    "remappings",
    "unproduced",
]

#: The graphs: the kitchen (every node of the task), galley demo's tour of the zones (simulator and
#: navigation) and demo.launch.py's square (a unicycle driven in a square, no simulator).
GRAPHS = ("kitchen", "tour", "square")


@dataclass(frozen=True)
class Mode:
    """What a bring-up varies on; the defaults are kitchen_sim.launch.py's."""

    graph: Literal["kitchen", "tour", "square"] = "kitchen"  # which graph (GRAPHS)
    simulator: Literal["mujoco", "isaac"] = "mujoco"  # isaac: Isaac Sim's bridge graphs stand in for sim
    driver: Literal["oracle", "policy"] = "oracle"  # policy: diffusion_policy instead of the oracle nodes
    cameras: bool = True  # the simulator renders the base and wrist cameras (a low-dim policy needs none)
    planner: bool = True  # the task planner runs (false: the plan is given, galley run --plan)
    record: bool = False  # the recorder writes a rosbag2 of every topic
    markers: bool = False  # scene_markers draws the scene for rviz2 (the ROS 2 bring-ups)
    perturb: bool = False  # perturber adds noise to the oracle's commands (galley collect --perturb)
    inject: bool = False  # failure_injector disturbs the episode once (galley eval --inject; MuJoCo only)
    nav2: bool = False  # Nav2's planner_server and controller_server for galley's (ROS 2 only: nav2:=true)

    def __post_init__(self) -> None:
        choices = {"graph": GRAPHS, "simulator": ("mujoco", "isaac"), "driver": ("oracle", "policy")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"Mode.{name} = {getattr(self, name)!r}: one of {', '.join(allowed)}")
        if self.inject and self.simulator != "mujoco":
            raise ValueError("failures are injected through MuJoCo's /sim/teleport: inject=True needs it")
        if self.nav2 and (self.driver != "oracle" or self.graph == "square"):
            raise ValueError(
                "nav2=True: Nav2's servers drive the oracle's moves over the map; a policy drives the base "
                "itself (on galley's /plan), and the square graph has no map"
            )


def flags(mode: Mode) -> dict[str, bool]:
    """The yes/no questions a node or parameter's ``when`` names, answered for ``mode``."""
    return {
        "mujoco": mode.simulator == "mujoco",
        "oracle": mode.driver == "oracle",
        "policy": mode.driver == "policy",
        "cameras": mode.cameras,
        # a policy (the `sensors` observation reads perceived/<name>), and a recording (galley collect):
        # the bag then holds the estimates the policy learns from, as the node made them online
        "perception": mode.cameras and (mode.driver == "policy" or mode.record),
        "planner": mode.planner,
        "record": mode.record,
        "markers": mode.markers,
        "perturb": mode.perturb,
        "inject": mode.inject,
        "nav2": mode.nav2,  # Nav2's servers run (NAV2_NODES)
        "galley_planner": not mode.nav2,  # galley's Theta* serves compute_path_to_pose and /goal_pose
        "galley_controller": mode.driver == "oracle" and not mode.nav2,  # ... and its follower follow_path
    }


@dataclass(frozen=True)
class StackNode:
    """A node of the stack: its name, its class, its graphs, and when it runs.

    :data:`NODES` is the one list of galley's nodes: galley_nodes.registry (name -> class), the
    ``ros2 run`` executables (setup.py) and the launch files derive from it.
    """

    name: str  # the ROS node and executable name, the registry's key
    path: str  # import path of the node class, "module:Class" (imported only when the node is loaded)
    graphs: tuple[str, ...]  # the graphs it belongs to
    when: str = ""  # a flag (see flags) that must hold; empty: always


@dataclass(frozen=True)
class Input:
    """A value the bring-up gives at start, by its launch argument's name (e.g. ``scene``)."""

    name: str


@dataclass(frozen=True)
class Choice:
    """One value where ``flag`` holds, another where it does not."""

    flag: str
    yes: Any
    no: Any


@dataclass(frozen=True)
class Param:
    """A parameter a mode gives a node on top of the params files."""

    node: str  # registry name
    name: str  # the node's Config field
    value: Any  # a constant, an Input or a Choice
    when: str = ""  # a flag that must hold; empty: always
    host: Literal["", "ros2", "embedded"] = ""  # only under this host; empty: both


KITCHEN = ("kitchen",)
DRIVEN = ("kitchen", "tour")  # graphs with the simulator and the map

#: The nodes in the order the embedded host adds them: the recorder first, so that it stops last.
NODES: tuple[StackNode, ...] = (
    StackNode("recorder", "galley_nodes.nodes.recorder:RecorderNode", KITCHEN, when="record"),
    StackNode("sim", "galley_sim.sim_node:SimNode", DRIVEN, when="mujoco"),
    # object poses from the base RGB-D camera (perceived/<name>) for a policy and for a recording
    # (collection); about 30 ms of CPU a frame, so not where nothing reads them (the oracle unrecorded)
    StackNode("perception", "galley_nodes.nodes.perception:PerceptionNode", KITCHEN, when="perception"),
    StackNode("scene_markers", "galley_nodes.nodes.scene_markers:SceneMarkersNode", KITCHEN, when="markers"),
    StackNode("map_server", "galley_nodes.nodes.map_server:MapServerNode", DRIVEN),
    # the policy too: its observation (sensors, privileged) holds points of the planner's /plan
    StackNode(
        "global_planner", "galley_nodes.nodes.global_planner:GlobalPlannerNode", DRIVEN, when="galley_planner"
    ),
    StackNode(
        "diff_drive_controller",
        "galley_nodes.nodes.diff_drive_controller:DiffDriveControllerNode",
        DRIVEN,
        when="galley_controller",
    ),
    # navigate_to_pose, for rviz2 and Nav2's clients: over galley's planner and controller, or Nav2's
    StackNode("navigator", "galley_nodes.nodes.navigator:NavigatorNode", DRIVEN, when="oracle"),
    StackNode(
        "arm_controller", "galley_nodes.nodes.arm_controller:ArmControllerNode", KITCHEN, when="oracle"
    ),
    StackNode(
        "diffusion_policy", "galley_nodes.nodes.diffusion_policy:DiffusionPolicyNode", KITCHEN, when="policy"
    ),
    StackNode("perturber", "galley_nodes.nodes.perturber:PerturberNode", KITCHEN, when="perturb"),
    StackNode("monitor", "galley_nodes.nodes.monitor:MonitorNode", KITCHEN),
    StackNode("task_planner", "galley_nodes.nodes.task_planner:TaskPlannerNode", KITCHEN, when="planner"),
    StackNode("task_executor", "galley_nodes.nodes.task_executor:TaskExecutorNode", KITCHEN),
    StackNode(
        "failure_injector", "galley_nodes.nodes.failure_injector:FailureInjectorNode", KITCHEN, when="inject"
    ),
    StackNode("unicycle_base", "galley_nodes.nodes.unicycle_base:UnicycleBaseNode", ("square",)),
    StackNode("square_driver", "galley_nodes.nodes.square_driver:SquareDriverNode", ("square",)),
    StackNode("trajectory_logger", "galley_nodes.nodes.trajectory_logger:TrajectoryLoggerNode", ("square",)),
)


@dataclass(frozen=True)
class Nav2Node:
    """A node of Nav2 (C++, ROS 2 only) that runs where the ``nav2`` flag holds."""

    package: str
    executable: str
    name: str  # the ROS node name, its section in config/nav2.yaml
    managed: bool = True  # a lifecycle node the lifecycle manager configures and activates


#: Nav2's servers under the action names galley's serve (compute_path_to_pose, follow_path), so that
#: the navigator's goals go through them, and the lifecycle manager that activates them; their
#: parameters are config/nav2.yaml's (kitchen_sim.launch.py nav2:=true). The embedded host cannot
#: run them: Mode.nav2 is for the ROS 2 bring-up only.
NAV2_NODES: tuple[Nav2Node, ...] = (
    Nav2Node("nav2_planner", "planner_server", "planner_server"),
    Nav2Node("nav2_controller", "controller_server", "controller_server"),
    Nav2Node("nav2_lifecycle_manager", "lifecycle_manager", "lifecycle_manager_navigation", managed=False),
)
#: The Debian package that installs them (and nav2_msgs) on Jazzy.
NAV2_APT = "ros-jazzy-navigation2"

#: Topics the simulator publishes only with its cameras on (the top-down image is always there).
CAMERA_TOPICS = (
    "/camera/base/image_raw",
    "/camera/base/depth/image_raw",
    "/camera/base/camera_info",
    "/camera/wrist/image_raw",
    "/camera/wrist/camera_info",
)

#: Parameters per mode, in the order galley run resolves (and notes) them. The controller's use_tf
#: is not here: config/galley.yaml sets it (true: the simulators publish map -> base_link on /tf).
PARAMS: tuple[Param, ...] = (
    Param("sim", "scene", Input("scene")),
    Param("sim", "seed", Input("seed")),
    Param("sim", "cameras_enabled", Input("cameras")),
    Param("map_server", "yaml_filename", Input("map")),
    Param("monitor", "scene", Input("scene")),
    Param("perception", "scene", Input("scene")),
    Param("task_planner", "scene", Input("scene")),
    Param("task_executor", "scene", Input("scene")),
    Param("recorder", "output_dir", Input("output_dir")),
    Param("recorder", "bag_name", Input("bag_name")),
    Param("arm_controller", "scene", Input("scene")),
    Param("diffusion_policy", "scene", Input("scene")),
    Param("diffusion_policy", "run", Input("policy")),
    Param("perturber", "scale", Input("perturb")),
    Param("perturber", "seed", Input("seed")),
    # a policy's steps are judged on ground truth as they go; the oracle nodes report their status
    Param("task_executor", "completion", Choice("policy", "criteria", "status")),
    # the oracle's moves are goals of the navigator's navigate_to_pose; a policy follows /goal_pose
    Param("task_executor", "move_with", Choice("policy", "goal_pose", "navigate_to_pose")),
    Param("scene_markers", "scene", Input("scene")),
    Param("task_planner", "backend", Input("planner")),
    # replanning after a failure: the executor asks, the recorder keeps recording through the ABORT
    Param("task_executor", "max_replans", Input("max_replans")),
    Param("recorder", "max_replans", Input("max_replans")),
    Param("failure_injector", "scene", Input("scene")),
    Param("failure_injector", "kind", Input("inject")),
    # ROS 2 only: the simulator owns time there (wall clock, publishes /clock); every other node
    # runs on /clock. The embedded host publishes its own clock.
    Param("sim", "use_sim_time", False, host="ros2"),
    Param("sim", "publish_clock", True, host="ros2"),
    Param("sim", "real_time_factor", Input("real_time_factor"), host="ros2"),
    # a launch session takes many instructions: one bag each, the failed ones kept and marked
    Param("recorder", "per_instruction", True, host="ros2"),
    # Nothing publishes the camera topics without cameras: the monitor does not watch their rates.
    Param("monitor", "cameras_enabled", Input("cameras")),
)


@dataclass(frozen=True)
class Unproduced:
    """A topic a node of the stack consumes that no node of the stack produces (in some modes)."""

    topic: str
    why: str  # who gives it instead, or why nothing needs to
    when: str = ""  # only where this flag holds; empty: always
    graph: str = ""  # only in this graph; empty: every graph


#: The topics consumed without a producer in the stack, each with its reason (test_stack checks
#: that every other consumed topic has a producer in every mode).
UNPRODUCED: tuple[Unproduced, ...] = (
    Unproduced(
        "/goal_pose", "rviz2's 2D Goal Pose, galley demo (the task executor in the kitchen)", graph="tour"
    ),
    *(
        Unproduced(
            topic, "the oracle nodes' status; a policy's steps are judged on ground truth", when="policy"
        )
        for topic in ("/navigation/status", "/arm/status")
    ),
    Unproduced("/arm/joint_command", "nothing drives the arm in the tour", graph="tour"),
    Unproduced("/sim/teleport", "the task executor's teleport_on_failure, absent in the tour", graph="tour"),
    Unproduced("/sim/render_top_down", "the task planner's, to replan; absent in the tour", graph="tour"),
    Unproduced("/cmd_vel", "Nav2's controller_server (nav2:=true)", when="nav2"),
    *(
        Unproduced(topic, "Nav2's servers answer through their actions, which end the moves", when="nav2")
        for topic in ("/navigation/status", "/planner/status")
    ),
)


@dataclass(frozen=True)
class Remap:
    """A node's topic remapped where a flag holds."""

    node: str  # registry name
    topic: str  # the topic the node declares
    to: str  # the topic it uses instead
    when: str  # the flag that must hold


#: With the perturber, the simulator follows the perturbed commands; the oracle's own stay on
#: /cmd_vel and /arm/joint_command, where the recorder records them as the actions.
REMAPS: tuple[Remap, ...] = (
    Remap("sim", "/cmd_vel", "/perturbed/cmd_vel", when="perturb"),
    Remap("sim", "/arm/joint_command", "/perturbed/arm/joint_command", when="perturb"),
)


def remappings(mode: Mode, node: str) -> dict[str, str]:
    """Topic -> topic remappings of ``node`` in ``mode`` (:data:`REMAPS`)."""
    return {r.topic: r.to for r in REMAPS if r.node == node and _applies(r.when, mode)}


def unproduced(mode: Mode) -> dict[str, str]:
    """Topic -> why, of :data:`UNPRODUCED` in ``mode``."""
    return {u.topic: u.why for u in UNPRODUCED if _applies(u.when, mode) and u.graph in ("", mode.graph)}


#: Under Isaac Sim (Mode.simulator "isaac") its bridge graphs publish and subscribe the sim node's
#: topics (galley_isaac.contract lists the few MuJoCo-only ones).
SIMULATOR_STAND_IN = "isaac_sim"


def _applies(when: str, mode: Mode) -> bool:
    return not when or flags(mode)[when]


def nodes(mode: Mode) -> list[str]:
    """The registry names of the nodes that run in ``mode``, in the order to add them."""
    return [n.name for n in NODES if mode.graph in n.graphs and _applies(n.when, mode)]


def nav2_nodes(mode: Mode) -> list[Nav2Node]:
    """Nav2's nodes that run in ``mode`` (under ROS 2), besides the galley nodes of :func:`nodes`."""
    return list(NAV2_NODES) if _applies("nav2", mode) else []


_NOT_GIVEN = object()


def _resolve(value: Any, given: Mapping[str, Any], mode: Mode) -> Any:
    """A parameter's value in ``mode`` with the inputs ``given`` (``_NOT_GIVEN``: an input not given)."""
    if isinstance(value, Input):
        return given.get(value.name, _NOT_GIVEN)
    if isinstance(value, Choice):
        return value.yes if flags(mode)[value.flag] else value.no
    return value


def parameters(
    mode: Mode, given: Mapping[str, Any], *, host: Literal["ros2", "embedded"]
) -> list[tuple[Param, Any]]:
    """(parameter, value) of the running nodes in ``mode``, with the inputs ``given``.

    A parameter whose input is not given is left out (the params files decide).
    """
    running = set(nodes(mode))
    out = []
    for p in PARAMS:
        if p.node not in running or p.host not in ("", host) or not _applies(p.when, mode):
            continue
        value = _resolve(p.value, given, mode)
        if value is not _NOT_GIVEN:
            out.append((p, value))
    return out


#: The launch arguments that choose a mode (see :func:`launch_mode`), where a launch file declares them.
LAUNCH_CHOICES = ("policy", "cameras", "record", "nav2")


def _yes(name: str, value: str) -> bool:
    if value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise ValueError(f"{name}:={value}: true or false")


def launch_mode(base: Mode, arguments: Mapping[str, str]) -> Mode:
    """The mode a launch file runs: ``base`` (what the file settles) with what its arguments choose.

    ``arguments`` holds the performed values of the :data:`LAUNCH_CHOICES` the file declares:
    ``policy`` (a training run: the policy drives; empty: the oracle nodes), and ``cameras``,
    ``record``, ``nav2`` (true/false, 1/0). This is the one translation of launch arguments into
    a mode: the launch files start :func:`nodes` of it with :func:`parameters`.

    Raises:
        ValueError: a yes/no argument is neither, or the arguments choose no valid mode (naming them).
    """
    changes: dict[str, Any] = {}
    if "policy" in arguments:
        changes["driver"] = "policy" if arguments["policy"] else "oracle"
    for name in ("cameras", "record", "nav2"):
        if name in arguments:
            changes[name] = _yes(name, arguments[name])
    try:
        return replace(base, **changes)
    except ValueError as err:
        given = " ".join(f"{k}:={v}" for k, v in arguments.items() if k in ("policy", "nav2") and v)
        raise ValueError(f"{given}: {err}") from None


def modes(graph: str = "kitchen") -> list[Mode]:
    """Every mode of ``graph`` a bring-up can choose (for tests and ``galley topics``)."""
    if graph != "kitchen":
        return [Mode(graph=graph)]  # type: ignore[arg-type]
    out = []
    for simulator in ("mujoco", "isaac"):
        for driver in ("oracle", "policy"):
            for cameras in (True, False):
                if driver == "policy" and not cameras:
                    continue  # a low-dim policy: the image policy's graph less the cameras
                out.append(Mode(simulator=simulator, driver=driver, cameras=cameras, record=True))
    out.append(Mode(cameras=False, record=True, inject=True))  # galley eval --inject
    out.append(Mode(record=True, nav2=True))  # kitchen_sim.launch.py nav2:=true (ROS 2 only)
    return out
