"""A planner backend that dies in native code, in the embedded host: the task_planner reports it with a
reason, the host (simulator, recorder) goes on, and the bag recorded so far stays readable."""

from __future__ import annotations

from rosbags.highlevel import AnyReader

from galley_learning.planners.worker import PlannerProcess
from galley_nodes.registry import load_node_class
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS

FAILED = 3


def test_a_backend_that_segfaults_fails_the_instruction_and_the_host_and_its_bag_go_on(
    repo, tmp_path, misbehaving_backends
):
    host = EmbeddedHost([repo / "config" / "galley.yaml"])
    host.add_node(load_node_class("sim"), parameters={"seed": 4, "cameras_enabled": False})
    host.add_node(load_node_class("task_planner"), parameters={"backend": "llama_cpp", "worker": "inline"})
    host.add_node(load_node_class("recorder"), parameters={"output_dir": str(tmp_path), "bag_name": "bag"})
    # The llama_cpp backend (no model configured) could not start; put one that crashes in its place,
    # in a worker process as the node's default worker mode does for llama_cpp.
    host.node("task_planner").planner = PlannerProcess(misbehaving_backends.Segfaulting, backend="llama_cpp")
    status: list = []
    probe = host.participant("probe")
    probe.create_subscription(
        "/task_planner/status", "galley_msgs/msg/ActionStatus", status.append, QoS.latched(10)
    )
    say = probe.create_publisher("/task/instruction", "std_msgs/msg/String", QoS(depth=10))
    host.run_for(0.5)
    say.publish(messages.new("std_msgs/msg/String", data="Move the bowl to the green zone."))
    assert host.run_until(lambda: any(m.state == FAILED for m in status), 5.0)
    reason = next(m.reason for m in status if m.state == FAILED)
    assert reason.startswith("unavailable") and "SIGSEGV" in reason and "llama-cpp-python" in reason
    failed_at = host.now_s
    host.run_for(1.0)  # the simulator and the recorder go on after the crash
    assert host.now_s >= failed_at + 1.0
    host.shutdown()

    with AnyReader([tmp_path / "bag"]) as reader:
        topics = {c.topic for c in reader.connections}
        assert {"/task_planner/status", "/odom", "/tf"} <= topics
        status_connections = [c for c in reader.connections if c.topic == "/task_planner/status"]
        recorded = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(status_connections)]
        odom = [c for c in reader.connections if c.topic == "/odom"]
        last_odom_s = max(t for _, t, _ in reader.messages(odom)) * 1e-9
    assert any("SIGSEGV" in m.reason for m in recorded)
    assert last_odom_s > failed_at + 0.5
