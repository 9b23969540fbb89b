"""The ROS 2 host against real rclpy and DDS (and tf2_ros, launch and galley_msgs where installed).

Skipped where rclpy is not importable. Two ways to run them: a sourced ROS 2 Humble or Jazzy
install with this workspace built (everything runs), or PyPI's ROS 2 Jazzy wheels
(requirements-dev.txt's last section: rclpy with Fast DDS and the standard message packages, no
tf2_ros, no launch, no rosbag2_py, no galley_msgs classes), where the tests needing those skip with
the reason. docs/tutorials/ros2.md ("Which tests run where") says which tests run where. rclpy's messages,
logging and clock are test_ros2_messages.py's; the fixtures ``ros`` and ``spin_for`` and the DDS
settings that keep runs apart are in this folder's conftest.py.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not importable: ROS 2 is not installed or not sourced")

from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rosbags.rosbag2 import Reader  # noqa: E402

from galley_core.config import describe_fields  # noqa: E402
from galley_nodes import stack  # noqa: E402
from galley_nodes.nodes.square_driver import SquareDriverNode  # noqa: E402
from galley_nodes.nodes.trajectory_logger import TrajectoryLoggerNode  # noqa: E402
from galley_nodes.nodes.unicycle_base import UnicycleBaseNode  # noqa: E402
from galley_nodes.registry import load_node_class  # noqa: E402
from galley_runtime import messages, rosbags_messages  # noqa: E402
from galley_runtime.node import Node, Publishes, Timer  # noqa: E402
from galley_runtime.params_file import (  # noqa: E402
    ParameterError,
    config_for_node,
    load_params_files,
    parameters_for,
)
from galley_runtime.qos import QoS  # noqa: E402
from galley_runtime.recording.decoding import MessageDecoder  # noqa: E402
from galley_runtime.recording.metadata_file import load_metadata  # noqa: E402
from galley_runtime.ros2.messages import RclpyMessages  # noqa: E402

pytestmark = pytest.mark.ros2
REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "config" / "galley.yaml"
#: Every node kitchen_sim.launch.py starts (rviz2 aside), by executable name.


def _launched() -> list[str]:
    """Every galley node kitchen_sim.launch.py may start: the stack's under its launch arguments."""
    base = stack.Mode(markers=True, record=True)  # kitchen_sim's settled flags (test_launch_files.SETTLED)
    names = {n for driver in ("oracle", "policy") for n in stack.nodes(replace(base, driver=driver))}
    return [n.name for n in stack.NODES if n.name in names]


LAUNCHED = _launched()
NEEDS_TF2 = pytest.mark.skipif(
    importlib.util.find_spec("tf2_ros") is None,
    reason="tf2_ros is not installed (PyPI's rclpy wheels have none; a full ROS 2 install does)",
)


def missing_message_package(node_cls: type[Node]) -> str | None:
    """The first message type a node declares that has no rclpy class here, with why; else None."""
    backend = RclpyMessages()
    for decl in (*node_cls.publishes, *node_cls.subscribes):
        try:
            backend.get_class(decl.type)
        except TypeError as err:
            return f"{decl.type} has no rclpy class here ({err}); galley_msgs needs colcon build"
    return None


@NEEDS_TF2
def test_demo_nodes_talk_over_dds_and_tf(ros, spin_for):
    context, make = ros
    base_ros, base = make(UnicycleBaseNode)
    driver_ros, _ = make(SquareDriverNode, parameter_overrides=[Parameter("speed_mps", value=0.4)])
    logger_ros, logger = make(TrajectoryLoggerNode, parameter_overrides=[Parameter("rate_hz", value=10.0)])
    spin_for(context, [base_ros, driver_ros, logger_ros], 2.5)
    assert base.pose.x > 0.3  # driven by /cmd_vel from square_driver
    assert len(logger.samples) >= 5  # TF odom -> base_link through tf2_ros
    assert logger.samples[-1][1].x == pytest.approx(base.pose.x, abs=0.1)


def test_parameters_are_declared_with_descriptions_and_validated_on_update(ros):
    _, make = ros
    ros_node, driver = make(SquareDriverNode, parameter_overrides=[Parameter("side_m", value=2)])
    assert driver.config.side_m == 2.0  # an integer override is accepted for a float, as in the embedded host
    descriptor = ros_node.describe_parameter("speed_mps")
    assert "forward speed on the edges" in descriptor.description and "m/s" in descriptor.description
    rejected = ros_node.set_parameters([Parameter("speed_mps", value=-1.0)])[0]
    assert not rejected.successful and "speed_mps" in rejected.reason and "> 0" in rejected.reason
    assert driver.config.speed_mps == 0.2
    accepted = ros_node.set_parameters([Parameter("laps", value=3)])[0]
    assert accepted.successful and driver.config.laps == 3


def test_a_bad_override_names_the_node_and_the_parameter(ros):
    _, make = ros
    with pytest.raises(
        ParameterError, match=r"node '/square_driver': parameter 'laps' = 0 is not allowed: >= 1"
    ):
        make(SquareDriverNode, parameter_overrides=[Parameter("laps", value=0)])


def test_the_demo_launch_file_declares_its_arguments_and_nodes():
    # launch.actions, not launch: this repository's launch/ folder imports as a namespace package.
    pytest.importorskip(
        "launch.actions", reason="ROS 2's launch is not installed (PyPI's rclpy wheels have none)"
    )
    from launch.actions import DeclareLaunchArgument
    from launch.launch_description_sources import get_launch_description_from_python_launch_file
    from launch_ros.actions import Node as LaunchNode

    description = get_launch_description_from_python_launch_file(str(REPO / "launch" / "demo.launch.py"))
    arguments = {a.name for a in description.entities if isinstance(a, DeclareLaunchArgument)}
    assert arguments == {"use_sim_time", "namespace", "params_file"}
    executables = sorted(e.node_executable for e in description.entities if isinstance(e, LaunchNode))
    assert executables == ["square_driver", "trajectory_logger", "unicycle_base"]


# -- the shipped config and the nodes of kitchen_sim.launch.py under rclpy ----------------------


def with_shipped_config(**overrides: Any) -> dict[str, Any]:
    """Node keyword arguments: config/galley.yaml read by rcl, as ``ros2 launch`` passes it."""
    extra = [a for k, v in overrides.items() for a in ("-p", f"{k}:={v}")]
    return {"cli_args": ["--ros-args", "--params-file", str(SHIPPED), *extra]}


@pytest.mark.parametrize("name", LAUNCHED)
def test_every_launched_nodes_parameters_are_the_embedded_hosts_from_the_shipped_config(ros, name):
    """Both hosts read config/galley.yaml into the same configuration (``key_objects: []`` included)."""
    _, make = ros
    node_cls = load_node_class(name)
    # The node's name and Config without its topics: parameters are checked for every node, even
    # those whose message types the PyPI wheels lack.
    parameters_only = type(
        f"{node_cls.__name__}Parameters", (Node,), {"name": name, "Config": node_cls.Config}
    )
    ros_node, node = make(parameters_only, **with_shipped_config())
    fqn = "/" + name
    declared = [info.name for info in describe_fields(node_cls.Config)]
    expected = config_for_node(
        node_cls.Config, fqn, parameters_for(load_params_files([SHIPPED]), fqn, declared)
    )
    assert node.config == expected
    for info_name, value in vars(expected).items():
        if isinstance(value, tuple) and not value:  # declared typed, not as rclpy's byte array
            assert ros_node.get_parameter(info_name).type_ != Parameter.Type.BYTE_ARRAY, info_name


@pytest.mark.parametrize("name", [n for n in LAUNCHED if n != "diffusion_policy"])  # only with policy:=
def test_every_launched_node_whose_messages_exist_starts_with_the_shipped_config(ros, name, tmp_path):
    _, make = ros
    node_cls = load_node_class(name)
    if (missing := missing_message_package(node_cls)) is not None:
        pytest.skip(missing)
    overrides = {"output_dir": str(tmp_path), "yaml_filename": str(REPO / "maps" / "kitchen.yaml")}
    declared = {info.name for info in describe_fields(node_cls.Config)}
    try:
        ros_node, node = make(
            node_cls, **with_shipped_config(**{k: v for k, v in overrides.items() if k in declared})
        )
    except RuntimeError as err:
        if "tf2_ros is not installed" not in str(err):
            raise
        pytest.skip(str(err))  # the simulator broadcasts static transforms as it starts
    assert ros_node.get_name() == name and isinstance(node, node_cls)
    node.on_shutdown()


@pytest.mark.parametrize("writer", ["auto", "rosbag2_py"])
def test_the_recorder_records_other_nodes_over_dds_with_the_shipped_config(ros, spin_for, tmp_path, writer):
    """map_server and scene_markers publish (latched), the recorder (``topics: []``) records both."""
    if writer == "rosbag2_py" and importlib.util.find_spec("rosbag2_py") is None:
        pytest.skip("rosbag2_py is not importable (rosbag2 is C++: not in PyPI's wheels)")
    context, make = ros
    map_ros, _ = make(
        load_node_class("map_server"),
        **with_shipped_config(yaml_filename=str(REPO / "maps" / "kitchen.yaml")),
    )
    markers_ros, _ = make(load_node_class("scene_markers"), **with_shipped_config())
    # /markers is latched but not among the recorder's default latched_topics: subscribed volatile,
    # a recorder started after scene_markers would miss it (as DDS does; reported in issue 20's notes).
    recorder_ros, recorder = make(
        load_node_class("recorder"),
        **with_shipped_config(
            output_dir=str(tmp_path), bag_name="bag", latched_topics="[/map, /markers]", writer=writer
        ),
    )
    assert recorder.config.topics == () and recorder.config.exclude_topics == ()
    spin_for(context, [map_ros, markers_ros, recorder_ros], 1.5)
    recorder.on_shutdown()
    decoder = MessageDecoder()
    with Reader(tmp_path / "bag") as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
        types = {c.topic: c.msgtype for c in reader.connections}
        # every message, as rclpy's Fast DDS typesupport serialised it for the recorder, reads back
        # (/parameter_events' ParameterEvent among them: the type a fixed-padding retry refused)
        decoded = [decoder.decode(c.topic, raw, c.msgtype) for c, _, raw in reader.messages()]
    assert decoder.unreadable == [] and len(decoded) == sum(counts.values()) and "/parameter_events" in counts
    assert counts["/map"] == 1 and types["/map"] == "nav_msgs/msg/OccupancyGrid"
    assert counts["/markers"] == 1 and types["/markers"] == "visualization_msgs/msg/MarkerArray"
    # The type hash the publishers advertise (rosbag2_py's writer takes it from the graph; rosbags
    # computes it) and the offered QoS ``ros2 bag play`` republishes with, whichever writer wrote it.
    info = load_metadata(tmp_path / "bag")
    topics = {t["topic_metadata"]["name"]: t["topic_metadata"] for t in info["topics_with_message_count"]}
    store = rosbags_messages.typestore()
    for topic in ("/map", "/markers"):
        assert topics[topic]["type_description_hash"] == store.hash_rihs01(types[topic])
    assert topics["/map"]["offered_qos_profiles"][0]["durability"] == "transient_local"
    assert recorder.host.topic_type_hash("/map", "nav_msgs/msg/OccupancyGrid").startswith("RIHS01_")


def test_a_recorders_parameters_are_set_and_an_invalid_set_is_rejected(ros, tmp_path):
    _, make = ros
    ros_node, recorder = make(load_node_class("recorder"), **with_shipped_config(output_dir=str(tmp_path)))
    assert ros_node.get_parameter("topics").type_ == Parameter.Type.STRING_ARRAY
    accepted = ros_node.set_parameters([Parameter("exclude_topics", value=["/clock"])])[0]
    assert accepted.successful and recorder.config.exclude_topics == ("/clock",)
    rejected = ros_node.set_parameters([Parameter("storage", value="zip")])[0]
    assert not rejected.successful and "storage" in rejected.reason and "mcap" in rejected.reason
    assert recorder.config.storage == "mcap"
    recorder.on_shutdown()


def test_the_task_executor_publishes_a_failed_result_for_a_failed_step(ros):
    """The failure path over DDS (the success path needs TF: a full ROS 2, the launch test)."""
    context, make = ros
    node_cls = load_node_class("task_executor")
    if (missing := missing_message_package(node_cls)) is not None:
        pytest.skip(missing)
    executor_ros, _ = make(node_cls, **with_shipped_config(step_time_limit_s=1.0))
    probe = rclpy.node.Node("probe", context=context)
    latched = QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
    )
    results: list[Any] = []
    backend = messages.backend()
    probe.create_subscription(
        backend.get_class("galley_msgs/msg/EpisodeResult"), "/task/result", results.append, latched
    )
    plans = probe.create_publisher(backend.get_class("galley_msgs/msg/TaskPlan"), "/task/plan", latched)
    plans.publish(messages.new("galley_msgs/msg/TaskPlan", instruction="go", steps=["move to the blue zone"]))
    executor = SingleThreadedExecutor(context=context)
    for n in (executor_ros, probe):
        executor.add_node(n)
    end = time.monotonic() + 10.0
    while time.monotonic() < end and not results:
        executor.spin_once(timeout_sec=0.05)
    executor.shutdown()
    probe.destroy_node()
    assert results, "no /task/result"
    assert not results[-1].success and list(results[-1].step_success) == [False]
    assert "exceeded the 1 s step time limit" in results[-1].step_reason[0]


# -- the launch file under a full ROS 2 ----------------------------------------------------------


def test_kitchen_sim_launches_records_and_reports_a_failed_step():
    """launch_kitchen_sim.py through the launch_testing runner (minutes; a full ROS 2 only)."""
    launch_test = shutil.which("launch_test")
    if launch_test is None:
        pytest.skip("launch_test is not installed (ros-<distro>-launch-testing-ros; not in PyPI's wheels)")
    for module in ("launch_testing_ros", "tf2_ros", "galley_msgs.msg"):
        pytest.importorskip(module, reason=f"{module} is not importable (a full ROS 2 and colcon build)")
    try:
        get_package_prefix = importlib.import_module("ament_index_python.packages").get_package_prefix
        get_package_prefix("galley_nodes")
    except (ImportError, LookupError) as err:
        pytest.skip(f"galley_nodes is not installed in a sourced colcon workspace ({err})")
    run = subprocess.run(
        [launch_test, str(REPO / "test" / "galley_nodes" / "launch_kitchen_sim.py")],
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-6000:]


def test_a_node_whose_message_package_is_not_built_stops_in_one_line():
    """On PyPI's wheels alone galley_msgs has no rclpy classes: the node says so, exit 2, no traceback."""
    try:
        importlib.import_module("galley_msgs.msg")
        pytest.skip("galley_msgs is built here: the node starts")
    except ModuleNotFoundError:
        pass
    code = "import sys\nfrom galley_nodes.executables import monitor\nsys.argv = ['m']\nsys.exit(monitor())\n"
    env = {**os.environ, "ROS_DOMAIN_ID": "91", "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "[ERROR] monitor: unknown message type 'galley_msgs/msg/" in proc.stderr
    assert "build it (colcon build)" in proc.stderr


class _LazyStamper(Node):
    name = "lazy_stamper"
    publishes = (Publishes("point", "geometry_msgs/msg/PointStamped"),)
    timers = (Timer("on_tick", period_s=0.05),)

    def __init__(self, host: Any, config: Any) -> None:
        super().__init__(host, config)
        self.built: list[int] = []

    def on_tick(self) -> None:
        self.publish_lazily("point", self.now_ns(), self.build)

    def build(self) -> Any:
        self.built.append(self.now_ns())
        return self.msg("geometry_msgs/msg/PointStamped", header={"stamp": messages.time_msg(self.built[-1])})


class _RateWatcher(Node):
    name = "rate_watcher"

    def __init__(self, host: Any, config: Any) -> None:
        super().__init__(host, config)
        self.stamps: list[int] = []
        host.create_stamp_subscription(
            "/point", "geometry_msgs/msg/PointStamped", self.stamps.append, QoS(depth=100)
        )


def test_a_stamp_subscription_reads_stamps_and_a_lazy_message_waits_for_a_subscriber(ros, spin_for):
    """Under rclpy every subscription reads: a stamp subscription is a plain one whose callback
    gets the header stamp, and a lazy message is built whenever any subscription matches."""
    context, make = ros
    stamper_ros, stamper = make(_LazyStamper)
    spin_for(context, [stamper_ros], 0.3)
    assert stamper.built == []  # nobody subscribes: nothing built, nothing sent
    watcher_ros, watcher = make(_RateWatcher)
    spin_for(context, [stamper_ros, watcher_ros], 1.0)
    assert len(watcher.stamps) >= 5 and set(watcher.stamps) <= set(stamper.built)
