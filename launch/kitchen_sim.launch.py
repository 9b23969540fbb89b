"""galley on the built-in MuJoCo simulator under ROS 2: every node of the stack.

    colcon build && source install/setup.bash
    ros2 launch launch/kitchen_sim.launch.py rviz:=true
    ros2 topic pub --once /task/instruction std_msgs/msg/String "{data: 'Move the bowl to the green zone'}"

The sim node owns time: it runs on the wall clock at ``real_time_factor`` and publishes /clock;
every other node uses simulated time. The nodes and what the launch arguments set are the stack's
(galley_nodes/stack.py, the description ``galley run`` builds from too); every other parameter comes
from ``params_file`` (config/galley.yaml, the same file the embedded host reads) or is the node's
code default (``galley nodes --effective NODE`` shows which).
The task planner turns an instruction on /task/instruction into a plan on /task/plan, which the
task executor runs; rviz2's "2D Goal Pose" drives the base directly. With ``policy:=RUN`` (a
``galley train`` run folder, or a shipped policy's name: ``policy:=default``) the diffusion_policy
node drives base and arm instead of the global planner, the controller and the arm controller, and
the executor judges steps as they go; the run's ``params.yaml`` (the cameras it was trained with)
is layered over ``params_file`` for every node, and ``overrides_file`` over both. With
``nav2:=true`` Nav2's planner_server and controller_server (and a lifecycle manager) run with
``nav2_params_file`` (config/nav2.yaml) in place of galley's global_planner and
diff_drive_controller; galley's navigator and the executor's moves then go through them
(needs ``sudo apt install ros-jazzy-navigation2``; galley run has no such mode).
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from galley_learning.policy.shipped import PolicyNotFoundError, resolve_policy, run_params
from galley_nodes import stack

REPO = Path(__file__).resolve().parents[1]

ARGUMENTS = (
    ("use_sim_time", "true", "every node but the simulator runs on /clock (true) or the wall clock"),
    ("params_file", str(REPO / "config" / "galley.yaml"), "ROS 2 params YAML over the nodes' code defaults"),
    ("overrides_file", "", "ROS 2 params YAML layered last, over params_file and a policy's params.yaml"),
    ("namespace", "", "namespace of every node"),
    ("scene", "kitchen", "scene name (config/scenes/<name>.yaml)"),
    ("seed", "0", "episode seed: robot start, object placement, colours"),
    ("map", str(REPO / "maps" / "kitchen.yaml"), "nav2 map YAML of the scene"),
    ("cameras", "true", "render the base and wrist cameras"),
    ("real_time_factor", "1.0", "simulated seconds per wall second"),
    ("planner", "galley", "task planner backend: galley (offline), openai, llama_cpp, transformers"),
    ("policy", "", "diffusion policy to drive instead of the oracle nodes: a shipped name or a run folder"),
    (
        "nav2",
        "false",
        "Nav2's planner_server and controller_server in place of galley's (ros-jazzy-navigation2)",
    ),
    ("nav2_params_file", str(REPO / "config" / "nav2.yaml"), "Nav2 params YAML of its servers (nav2:=true)"),
    ("record", "false", "record every topic to a rosbag2 (mcap) under runs/bags"),
    ("rviz", "false", "start rviz2 with config/galley.rviz"),
)

#: What this file settles of the mode: the MuJoCo simulator, scene markers and the task planner run;
#: no failure is injected (galley eval --inject does that), nor the oracle perturbed (galley collect).
#: The launch arguments choose the rest (stack.launch_mode: policy, cameras, record, nav2).
BASE = stack.Mode(simulator="mujoco", markers=True, planner=True, inject=False, perturb=False)


def check_nav2() -> None:
    """Nav2 is installed (nav2:=true); a launch error saying what to install otherwise."""
    from ament_index_python.packages import (  # noqa: PLC0415 (deferred: ament_index_python, nav2:=true)
        PackageNotFoundError,
        get_package_share_directory,
    )

    missing = []
    for package in dict.fromkeys(n.package for n in stack.NAV2_NODES):
        try:
            get_package_share_directory(package)
        except PackageNotFoundError:
            missing.append(package)
    if missing:
        raise RuntimeError(
            f"nav2:=true: Nav2 is not installed ({', '.join(missing)} not found): "
            f"sudo apt install {stack.NAV2_APT}, or leave nav2 false to run galley's planner and controller"
        )


def policy_files(value: str) -> tuple[str, list[str]]:
    """(the run folder policy:= names, its params.yaml where it has one).

    A value that names no policy goes to the diffusion_policy node as given: its error names it.
    """
    if not value:
        return value, []
    try:
        run = resolve_policy(value)
    except PolicyNotFoundError:
        return value, []
    return str(run), [str(p) for p in run_params(run)]


def stack_nodes(context: object) -> list[Node]:
    """The stack's nodes (and Nav2's) of the mode the launch arguments choose, with its parameters."""
    arg = LaunchConfiguration
    mode = stack.launch_mode(BASE, {name: arg(name).perform(context) for name in stack.LAUNCH_CHOICES})
    if mode.nav2:
        check_nav2()
    namespace, use_sim_time = arg("namespace"), arg("use_sim_time")
    run, run_files = policy_files(arg("policy").perform(context))
    overrides = [arg("overrides_file")] if arg("overrides_file").perform(context) else []
    # the arguments themselves, not their text: launch_ros reads each value as YAML (seed:=4 an int)
    inputs = {name: arg(name) for name, _, _ in ARGUMENTS} | ({"policy": run} if run else {})
    parameters = stack.parameters(mode, inputs, host="ros2")
    nodes = [
        Node(
            package="galley_nodes",
            executable=name,
            name=name,
            namespace=namespace,
            parameters=[
                arg("params_file"),
                *run_files,
                *overrides,
                {"use_sim_time": use_sim_time, **{p.name: v for p, v in parameters if p.node == name}},
            ],
            remappings=list(stack.remappings(mode, name).items()),
            output="screen",
        )
        for name in stack.nodes(mode)
    ]
    # Nav2's servers and their lifecycle manager (nav2:=true), configured by nav2_params_file
    nodes += [
        Node(
            package=n.package,
            executable=n.executable,
            name=n.name,
            namespace=namespace,
            parameters=[arg("nav2_params_file"), {"use_sim_time": use_sim_time}],
            output="screen",
        )
        for n in stack.nav2_nodes(mode)
    ]
    return nodes


def generate_launch_description() -> LaunchDescription:
    rviz = Node(
        package="rviz2",
        executable="rviz2",
        name="rviz2",
        arguments=["-d", str(REPO / "config" / "galley.rviz")],
        parameters=[{"use_sim_time": LaunchConfiguration("use_sim_time")}],
        condition=IfCondition(LaunchConfiguration("rviz")),
    )
    arguments = [
        DeclareLaunchArgument(name, default_value=default, description=text)
        for name, default, text in ARGUMENTS
    ]
    return LaunchDescription([*arguments, OpaqueFunction(function=stack_nodes), rviz])
