"""galley on Isaac Sim under ROS 2: every galley node but the MuJoCo simulator, on sim time.

    # 1. in Isaac Sim's directory (see src/galley_isaac/README.md):
    ./python.sh -m galley_isaac.run_isaac --config <galley>/config/isaac/kitchen.yaml
    # 2. in a ROS 2 shell:
    colcon build && source install/setup.bash
    ros2 launch launch/kitchen_isaac.launch.py        # then send goals from rviz2 ("2D Goal Pose")

Every galley node of launch/kitchen_sim.launch.py except the MuJoCo simulator (the stack's
nodes and parameters, galley_nodes/stack.py, with ``simulator: isaac``): Isaac Sim's bridge
graphs publish the simulator's topics (/clock, /tf, /odom, /scan, /imu/data, /camera/*,
/joint_states) and subscribe to /cmd_vel and /arm/joint_command. Isaac Sim owns time; every node
here uses /clock (use_sim_time: true).
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from galley_nodes import stack

REPO = Path(__file__).resolve().parents[1]


ARGUMENTS = (
    ("use_sim_time", "true", "use Isaac Sim's /clock (keep true)"),
    ("params_file", str(REPO / "config" / "galley.yaml"), "ROS 2 params YAML over the nodes' code defaults"),
    ("namespace", "", "namespace of every node (the bridge's ros.namespace)"),
    ("scene", "kitchen", "scene name (config/scenes/<name>.yaml): zones and objects"),
    ("map", str(REPO / "maps" / "kitchen.yaml"), "nav2 map YAML"),
    ("planner", "galley", "task planner backend: galley (offline), openai, llama_cpp, transformers"),
    ("record", "false", "record every topic to a rosbag2 (mcap) under runs/bags"),
)

#: What this file settles of the mode: Isaac Sim stands in for the MuJoCo simulator, the oracle
#: nodes drive, scene markers and the task planner run, nothing injects failures nor perturbs the
#: oracle; only ``record`` is left to its argument (stack.launch_mode).
BASE = stack.Mode(simulator="isaac", driver="oracle", markers=True, planner=True, inject=False, perturb=False)


def stack_nodes(context: object) -> list[Node]:
    """The stack's nodes of the mode the launch arguments choose, with its parameters."""
    arg = LaunchConfiguration
    declared = {name for name, _, _ in ARGUMENTS}
    choices = {name: arg(name).perform(context) for name in stack.LAUNCH_CHOICES if name in declared}
    mode = stack.launch_mode(BASE, choices)
    # the arguments themselves, not their text: launch_ros reads each value as YAML
    parameters = stack.parameters(mode, {name: arg(name) for name in declared}, host="ros2")
    return [
        Node(
            package="galley_nodes",
            executable=name,
            name=name,
            namespace=arg("namespace"),
            parameters=[
                arg("params_file"),
                {"use_sim_time": arg("use_sim_time"), **{p.name: v for p, v in parameters if p.node == name}},
            ],
            remappings=list(stack.remappings(mode, name).items()),
            output="screen",
        )
        for name in stack.nodes(mode)
    ]


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument(name, default_value=default, description=text)
        for name, default, text in ARGUMENTS
    ]
    return LaunchDescription([*arguments, OpaqueFunction(function=stack_nodes)])
