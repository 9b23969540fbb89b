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
planner, the controller and the arm controller, and the executor judges steps as they go.
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition, UnlessCondition
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
    ("record", "false", "record every topic to a rosbag2 (mcap) under runs/bags"),
    ("rviz", "false", "start rviz2 with config/galley.rviz"),
)

#: The mode's flags this file settles: the MuJoCo simulator, scene markers and the task planner run;
#: no failure is injected (galley eval --inject does that), nor the oracle perturbed (galley collect).
FIXED = {"mujoco": True, "markers": True, "planner": True, "inject": False, "perturb": False}


def generate_launch_description() -> LaunchDescription:
    arg = LaunchConfiguration
    namespace, params_file, use_sim_time = arg("namespace"), arg("params_file"), arg("use_sim_time")
    learned = ["'", arg("policy"), "' != ''"]  # policy:=RUN drives instead of the oracle nodes
    conditions = {
        "oracle": UnlessCondition(PythonExpression(learned)),
        "policy": IfCondition(PythonExpression(learned)),
        "record": IfCondition(arg("record")),
    }
    given = {name: arg(name) for name, _, _ in ARGUMENTS}

    def value(v: object) -> object:
        if isinstance(v, stack.Choice):  # the only open flag is "policy"
            return PythonExpression([f"{v.yes!r} if ", *learned, f" else {v.no!r}"])
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
    return LaunchDescription([*arguments, *nodes, rviz])
