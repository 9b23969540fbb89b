"""galley on the built-in MuJoCo simulator under ROS 2: sim, map_server, global_planner, controller.

    colcon build && source install/setup.bash
    ros2 launch launch/kitchen_sim.launch.py            # then send goals from rviz2 ("2D Goal Pose")

The sim node owns time: it runs on the wall clock at ``real_time_factor`` and publishes /clock;
every other node uses simulated time. Parameters come from config/navigation.yaml and the
launch arguments; the same files configure the embedded host (``galley demo``).
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
    arguments = [
        DeclareLaunchArgument("namespace", default_value="", description="namespace of every node"),
        DeclareLaunchArgument(
            "params_file",
            default_value=str(REPO / "config" / "navigation.yaml"),
            description="ROS 2 params YAML for the navigation nodes",
        ),
        DeclareLaunchArgument(
            "scene", default_value="kitchen", description="scene name (config/scenes/<name>.yaml)"
        ),
        DeclareLaunchArgument("seed", default_value="0", description="episode seed"),
        DeclareLaunchArgument(
            "map", default_value=str(REPO / "maps" / "kitchen.yaml"), description="nav2 map YAML"
        ),
        DeclareLaunchArgument("cameras", default_value="true", description="render the robot's cameras"),
        DeclareLaunchArgument(
            "real_time_factor", default_value="1.0", description="simulated seconds per wall second"
        ),
    ]
    sim = Node(
        package="galley_nodes",
        executable="sim",
        name="sim",
        namespace=namespace,
        parameters=[
            {
                "use_sim_time": False,
                "publish_clock": True,
                "scene": LaunchConfiguration("scene"),
                "seed": LaunchConfiguration("seed"),
                "cameras_enabled": LaunchConfiguration("cameras"),
                "real_time_factor": LaunchConfiguration("real_time_factor"),
            }
        ],
        output="screen",
    )
    navigation = [
        Node(
            package="galley_nodes",
            executable=name,
            name=name,
            namespace=namespace,
            parameters=[params_file, {"use_sim_time": True, **extra}],
            output="screen",
        )
        for name, extra in (
            ("map_server", {"yaml_filename": LaunchConfiguration("map")}),
            ("global_planner", {}),
            ("diff_drive_controller", {"use_tf": True}),
        )
    ]
    return LaunchDescription([*arguments, sim, *navigation])
