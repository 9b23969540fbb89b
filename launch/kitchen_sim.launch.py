"""galley on the built-in MuJoCo simulator under ROS 2: every node of the stack.

    colcon build && source install/setup.bash
    ros2 launch launch/kitchen_sim.launch.py rviz:=true
    ros2 topic pub --once /task/instruction std_msgs/msg/String "{data: 'Move the bowl to the green zone'}"

The sim node owns time: it runs on the wall clock at ``real_time_factor`` and publishes /clock;
every other node uses simulated time. The nodes and what the launch arguments set are the stack's
(galley_nodes/stack.py, the description ``galley run`` builds from too); every other parameter comes
from ``params_file`` (config/galley.yaml, the same file the embedded host reads).
The task planner turns an instruction on /task/instruction into a plan on /task/plan, which the
task executor runs; rviz2's "2D Goal Pose" drives the base directly. With ``policy:=RUN`` (a
``galley train`` run folder) the diffusion_policy node drives base and arm instead of the global
planner, the controller and the arm controller, and the executor judges steps as they go. With
``nav2:=true`` Nav2's planner_server and controller_server (and a lifecycle manager) run with
``nav2_params_file`` (config/nav2.yaml) in place of galley's global_planner and
diff_drive_controller; galley's navigator and the executor's moves then go through them
(needs ``sudo apt install ros-jazzy-navigation2``; galley run has no such mode).
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PythonExpression
from launch_ros.actions import Node

from galley_nodes import stack

REPO = Path(__file__).resolve().parents[1]

ARGUMENTS = (
    ("use_sim_time", "true", "every node but the simulator runs on /clock (true) or the wall clock"),
    ("params_file", str(REPO / "config" / "galley.yaml"), "ROS 2 params YAML with every node's parameters"),
    ("namespace", "", "namespace of every node"),
    ("scene", "kitchen", "scene name (config/scenes/<name>.yaml)"),
    ("seed", "0", "episode seed: robot start, object placement, colours"),
    ("map", str(REPO / "maps" / "kitchen.yaml"), "nav2 map YAML of the scene"),
    ("cameras", "true", "render the base and wrist cameras"),
    ("real_time_factor", "1.0", "simulated seconds per wall second"),
    ("planner", "galley", "task planner backend: galley (offline), openai, llama_cpp, transformers"),
    ("policy", "", "training run of a diffusion policy to drive instead of the oracle nodes (galley train)"),
    (
        "nav2",
        "false",
        "Nav2's planner_server and controller_server in place of galley's (ros-jazzy-navigation2)",
    ),
    ("nav2_params_file", str(REPO / "config" / "nav2.yaml"), "Nav2 params YAML of its servers (nav2:=true)"),
    ("record", "false", "record every topic to a rosbag2 (mcap) under runs/bags"),
    ("rviz", "false", "start rviz2 with config/galley.rviz"),
)

#: The mode's flags this file settles: the MuJoCo simulator, scene markers and the task planner run;
#: no failure is injected (galley eval --inject does that), nor the oracle perturbed (galley collect).
FIXED = {"mujoco": True, "markers": True, "planner": True, "inject": False, "perturb": False}


def check_nav2(context: object) -> list[object]:
    """With nav2:=true: Nav2 is installed and no policy drives; a launch error saying what to do otherwise."""
    value = LaunchConfiguration("nav2").perform(context)
    if value.lower() not in ("true", "false", "1", "0"):
        raise ValueError(f"nav2:={value}: true or false")
    if value.lower() in ("false", "0"):
        return []
    if LaunchConfiguration("policy").perform(context):
        raise ValueError(
            "nav2:=true drives the oracle's moves through Nav2's servers; a policy (policy:=RUN) drives "
            "the base itself: leave one of them out"
        )
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
    return []


def generate_launch_description() -> LaunchDescription:
    arg = LaunchConfiguration
    namespace, params_file, use_sim_time = arg("namespace"), arg("params_file"), arg("use_sim_time")
    # the stack's open flags as Python expressions of the launch arguments
    learned = ["('", arg("policy"), "' != '')"]  # policy:=RUN drives instead of the oracle nodes
    nav2 = ["('", arg("nav2"), "'.lower() in ('true', '1'))"]  # Nav2's servers instead of galley's
    truth = {
        "oracle": ["not ", *learned],
        "policy": learned,
        "nav2": nav2,
        "galley_planner": ["not ", *nav2],
        "galley_controller": ["not ", *learned, " and not ", *nav2],
    }
    conditions = {flag: IfCondition(PythonExpression(parts)) for flag, parts in truth.items()}
    conditions["record"] = IfCondition(arg("record"))
    conditions["cameras"] = IfCondition(arg("cameras"))  # perception looks through them
    given = {name: arg(name) for name, _, _ in ARGUMENTS}

    def value(v: object) -> object:
        if isinstance(v, stack.Choice):
            return PythonExpression([f"{v.yes!r} if ", *truth[v.flag], f" else {v.no!r}"])
        return v

    nodes = []
    for name, flag in stack.open_nodes("kitchen", FIXED):
        parameters = {k: value(v) for k, v in stack.launch_parameters(name, given, FIXED).items()}
        nodes.append(
            Node(
                package="galley_nodes",
                executable=name,
                name=name,
                namespace=namespace,
                parameters=[params_file, {"use_sim_time": use_sim_time, **parameters}],
                output="screen",
                condition=conditions.get(flag),
            )
        )
    # Nav2's servers and their lifecycle manager (nav2:=true), configured by nav2_params_file
    nav2_nodes = [
        Node(
            package=n.package,
            executable=n.executable,
            name=n.name,
            namespace=namespace,
            parameters=[arg("nav2_params_file"), {"use_sim_time": use_sim_time}],
            output="screen",
            condition=conditions["nav2"],
        )
        for n in stack.NAV2_NODES
    ]
    rviz = Node(
        package="rviz2",
        executable="rviz2",
        name="rviz2",
        arguments=["-d", str(REPO / "config" / "galley.rviz")],
        parameters=[{"use_sim_time": use_sim_time}],
        condition=IfCondition(arg("rviz")),
    )
    arguments = [
        DeclareLaunchArgument(name, default_value=default, description=text)
        for name, default, text in ARGUMENTS
    ]
    return LaunchDescription([*arguments, OpaqueFunction(function=check_nav2), *nodes, *nav2_nodes, rviz])
