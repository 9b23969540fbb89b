"""galley on Isaac Sim under ROS 2: every galley node but the MuJoCo simulator, on sim time.

    # 1. in Isaac Sim's directory (see src/galley_isaac/README.md):
    ./python.sh -m galley_isaac.run_isaac --config <galley>/config/isaac/kitchen.yaml
    # 2. in a ROS 2 shell:
    colcon build && source install/setup.bash
    ros2 launch launch/kitchen_isaac.launch.py        # then send goals from rviz2 ("2D Goal Pose")

Every galley node of launch/kitchen_sim.launch.py except the MuJoCo simulator: Isaac Sim's bridge
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


def generate_launch_description() -> LaunchDescription:
    arg = LaunchConfiguration
    namespace, params_file, use_sim_time = arg("namespace"), arg("params_file"), arg("use_sim_time")

    def node(executable: str, extra: dict | None = None, **kwargs: object) -> Node:
        return Node(
            package="galley_nodes",
            executable=executable,
            name=executable,
            namespace=namespace,
            parameters=[params_file, {"use_sim_time": use_sim_time, **(extra or {})}],
            output="screen",
            **kwargs,
        )

    # Every galley node but the MuJoCo simulator, whose topics Isaac Sim's graphs publish.
    nodes = [
        node("scene_markers", {"scene": arg("scene")}),
        node("map_server", {"yaml_filename": arg("map")}),
        node("global_planner"),
        node("diff_drive_controller", {"use_tf": True}),
        node("arm_controller", {"scene": arg("scene")}),
        node("monitor", {"scene": arg("scene")}),
        node("task_planner", {"backend": arg("planner"), "scene": arg("scene")}),
        node("task_executor", {"scene": arg("scene")}),
        node("recorder", condition=IfCondition(arg("record"))),
    ]
    arguments = [
        DeclareLaunchArgument(name, default_value=default, description=text)
        for name, default, text in ARGUMENTS
    ]
    return LaunchDescription([*arguments, *nodes])
