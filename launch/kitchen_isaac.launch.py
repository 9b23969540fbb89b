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
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from galley_nodes import stack

REPO = Path(__file__).resolve().parents[1]


ARGUMENTS = (
    ("use_sim_time", "true", "use Isaac Sim's /clock (keep true)"),
    ("params_file", str(REPO / "config" / "galley.yaml"), "ROS 2 params YAML with every node's parameters"),
    ("namespace", "", "namespace of every node (the bridge's ros.namespace)"),
    ("scene", "kitchen", "scene name (config/scenes/<name>.yaml): zones and objects"),
    ("map", str(REPO / "maps" / "kitchen.yaml"), "nav2 map YAML"),
    ("planner", "galley", "task planner backend: galley (offline), openai, llama_cpp, transformers"),
    ("record", "false", "record every topic to a rosbag2 (mcap) under runs/bags"),
)

#: The mode's flags this file settles: Isaac Sim stands in for the MuJoCo simulator, the oracle
#: nodes drive, scene markers and the task planner run, nothing injects failures nor perturbs the
#: oracle; only ``record`` is left to its argument.
FIXED = {
    "mujoco": False,
    "oracle": True,
    "policy": False,
    "markers": True,
    "planner": True,
    "inject": False,
    "perturb": False,
}


def generate_launch_description() -> LaunchDescription:
    arg = LaunchConfiguration
    namespace, params_file, use_sim_time = arg("namespace"), arg("params_file"), arg("use_sim_time")
    given = {name: arg(name) for name, _, _ in ARGUMENTS}
    nodes = [
        Node(
            package="galley_nodes",
            executable=name,
            name=name,
            namespace=namespace,
            parameters=[
                params_file,
                {"use_sim_time": use_sim_time, **stack.launch_parameters(name, given, FIXED)},
            ],
            output="screen",
            condition=IfCondition(arg("record")) if flag == "record" else None,
        )
        for name, flag in stack.open_nodes("kitchen", FIXED)
    ]
    arguments = [
        DeclareLaunchArgument(name, default_value=default, description=text)
        for name, default, text in ARGUMENTS
    ]
    return LaunchDescription([*arguments, *nodes])
