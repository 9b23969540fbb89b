"""Run the demo graph under ROS 2: square_driver -> unicycle_base -> trajectory_logger.

    colcon build && source install/setup.bash
    ros2 launch launch/demo.launch.py            # then: rviz2, fixed frame 'odom', add /trajectory

The nodes are the stack's ``square`` graph (galley_nodes/stack.py). The same nodes and the same
parameter file run without ROS 2 in `galley demo`. Nothing here
publishes /clock, so use_sim_time defaults to false.
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from galley_nodes import stack

DEMO_NODES = tuple(stack.nodes(stack.Mode(graph="square")))  # unicycle_base, square_driver, trajectory_logger


def generate_launch_description() -> LaunchDescription:
    use_sim_time = LaunchConfiguration("use_sim_time")
    namespace = LaunchConfiguration("namespace")
    params_file = LaunchConfiguration("params_file")
    default_params = Path(__file__).resolve().parents[1] / "config" / "demo.yaml"

    arguments = [
        DeclareLaunchArgument(
            "use_sim_time", default_value="false", description="use /clock (true) or the system clock (false)"
        ),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of every node"),
        DeclareLaunchArgument(
            "params_file", default_value=str(default_params), description="ROS 2 params YAML for the nodes"
        ),
    ]
    nodes = [
        Node(
            package="galley_nodes",
            executable=name,
            name=name,
            namespace=namespace,
            parameters=[params_file, {"use_sim_time": use_sim_time}],
            output="screen",
        )
        for name in DEMO_NODES
    ]
    return LaunchDescription([*arguments, *nodes])
