"""galley on Isaac Sim under ROS 2: map_server, global_planner, diff_drive_controller on sim time.

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
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

REPO = Path(__file__).resolve().parents[1]


def generate_launch_description() -> LaunchDescription:
    namespace = LaunchConfiguration("namespace")
    params_file = LaunchConfiguration("params_file")
    use_sim_time = LaunchConfiguration("use_sim_time")
    arguments = [
        DeclareLaunchArgument(
            "namespace", default_value="", description="namespace of every node (the bridge's ros.namespace)"
        ),
        DeclareLaunchArgument(
            "params_file",
            default_value=str(REPO / "config" / "navigation.yaml"),
            description="ROS 2 params YAML for the navigation nodes",
        ),
        DeclareLaunchArgument(
            "use_sim_time", default_value="true", description="use Isaac Sim's /clock (keep true)"
        ),
        DeclareLaunchArgument(
            "map", default_value=str(REPO / "maps" / "kitchen.yaml"), description="nav2 map YAML"
        ),
    ]
    nodes = [
        Node(
            package="galley_nodes",
            executable=name,
            name=name,
            namespace=namespace,
            parameters=[params_file, {"use_sim_time": use_sim_time, **extra}],
            output="screen",
        )
        for name, extra in (
            ("map_server", {"yaml_filename": LaunchConfiguration("map")}),
            ("global_planner", {}),
            ("diff_drive_controller", {"use_tf": True}),
        )
    ]
    return LaunchDescription([*arguments, *nodes])
