"""galley on the built-in MuJoCo simulator under ROS 2: every node of the stack.

    colcon build && source install/setup.bash
    ros2 launch launch/kitchen_sim.launch.py rviz:=true
    ros2 topic pub --once /task/instruction std_msgs/msg/String "{data: 'Move the bowl to the green zone'}"

The sim node owns time: it runs on the wall clock at ``real_time_factor`` and publishes /clock;
every other node uses simulated time. Every node's parameters come from ``params_file``
(config/galley.yaml, the same file the embedded host reads); the launch arguments override a few.
The task planner turns an instruction on /task/instruction into a plan on /task/plan, which the
task executor runs; rviz2's "2D Goal Pose" drives the base directly. With ``policy:=RUN`` (a
``galley train`` run folder) the diffusion_policy node drives base and arm instead of the global
planner, the controller and the arm controller, and the executor judges steps as they go.
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration, PythonExpression
from launch_ros.actions import Node

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
    ("record", "false", "record every topic to a rosbag2 (mcap) under runs/bags"),
    ("rviz", "false", "start rviz2 with config/galley.rviz"),
)


def generate_launch_description() -> LaunchDescription:
    arg = LaunchConfiguration
    namespace, params_file, use_sim_time = arg("namespace"), arg("params_file"), arg("use_sim_time")

    def node(executable: str, extra: dict | None = None, **kwargs: object) -> Node:
        parameters = [params_file, {"use_sim_time": use_sim_time, **(extra or {})}]
        return Node(
            package="galley_nodes",
            executable=executable,
            name=executable,
            namespace=namespace,
            parameters=parameters,
            output="screen",
            **kwargs,
        )

    sim = Node(
        package="galley_nodes",
        executable="sim",
        name="sim",
        namespace=namespace,
        parameters=[
            params_file,
            {
                "use_sim_time": False,
                "publish_clock": True,
                "scene": arg("scene"),
                "seed": arg("seed"),
                "cameras_enabled": arg("cameras"),
                "real_time_factor": arg("real_time_factor"),
            },
        ],
        output="screen",
    )
    learned = PythonExpression(["'", arg("policy"), "' != ''"])
    oracle = {"condition": UnlessCondition(learned)}
    nodes = [
        sim,
        node("scene_markers", {"scene": arg("scene")}),
        node("map_server", {"yaml_filename": arg("map")}),
        node("global_planner", **oracle),
        node("diff_drive_controller", {"use_tf": True}, **oracle),
        node("arm_controller", {"scene": arg("scene")}, **oracle),
        node("diffusion_policy", {"run": arg("policy")}, condition=IfCondition(learned)),
        node("monitor", {"scene": arg("scene")}),
        node("task_planner", {"backend": arg("planner"), "scene": arg("scene")}),
        node(
            "task_executor",
            {
                "scene": arg("scene"),
                "completion": PythonExpression(["'criteria' if '", arg("policy"), "' else 'status'"]),
            },
        ),
        node("recorder", condition=IfCondition(arg("record"))),
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            arguments=["-d", str(REPO / "config" / "galley.rviz")],
            parameters=[{"use_sim_time": use_sim_time}],
            condition=IfCondition(arg("rviz")),
        ),
    ]
    arguments = [
        DeclareLaunchArgument(name, default_value=default, description=text)
        for name, default, text in ARGUMENTS
    ]
    return LaunchDescription([*arguments, *nodes])
