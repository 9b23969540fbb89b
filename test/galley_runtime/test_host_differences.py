"""Where rclpy differs from the embedded host, nodes get the same values in both hosts.

Three differences stopped nodes under ROS 2 that ran in the embedded host (issue 20): a params file's
``key: []`` reaches rclpy nodes unset (None); a ``byte`` message field is ``bytes`` in rclpy and an
``int`` in rosbags; rclpy's logger forbids one call site at two severities. Each test here feeds the
embedded host what rclpy would and fails on the code before the fix; test_ros2_host.py checks the
same against real rclpy where it is installed.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
import yaml

from galley_core.episode import Episode
from galley_core.geometry import Pose2D
from galley_nodes.registry import NODES, load_node_class
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.node import PerSeverityLogger
from galley_runtime.params_file import ParameterError
from galley_runtime.qos import QoS
from galley_runtime.rosbags_messages import typestore


def rcl_parsed_config(repo, tmp_path):
    """config/galley.yaml plus the empty lists a user writes (``key: []``), as rcl hands them to
    rclpy nodes: unset (YAML null). galley.yaml itself holds no default, so no empty list."""
    params = yaml.safe_load((repo / "config" / "galley.yaml").read_text())
    empty = {"monitor": ["key_objects"], "recorder": ["topics", "exclude_topics"]}  # what this test covers
    for node, names in empty.items():
        params.setdefault(node, {}).setdefault("ros__parameters", {}).update(dict.fromkeys(names))
    path = tmp_path / "galley_as_rcl_parses_it.yaml"
    path.write_text(yaml.safe_dump(params))
    assert path.read_text().count(": null") == 3
    return path


def test_monitor_and_recorder_start_from_the_shipped_config_as_rcl_parses_it(repo, tmp_path):
    host = EmbeddedHost([rcl_parsed_config(repo, tmp_path)])
    monitor = host.add_node(load_node_class("monitor"))
    recorder = host.add_node(load_node_class("recorder"), parameters={"output_dir": str(tmp_path / "bags")})
    assert monitor.config.key_objects == ()
    assert recorder.config.topics == () and recorder.config.exclude_topics == ()
    host.shutdown()


def test_an_unset_scalar_parameter_is_still_rejected(params_file):
    path = params_file("monitor:\n  ros__parameters:\n    check_rate_hz: ~\n")
    with pytest.raises(ParameterError, match=r"node '/monitor': parameter 'check_rate_hz' = None"):
        EmbeddedHost([path]).add_node(load_node_class("monitor"))


# -- byte fields -----------------------------------------------------------------------------


def byte_fields(type_name: str, seen: set[str] | None = None) -> set[str]:
    """``type.field`` of every byte or char field in ``type_name`` and the types it nests."""
    seen = set() if seen is None else seen
    if type_name in seen:
        return set()
    seen.add(type_name)
    found = set()
    for name, (kind, spec) in typestore().fielddefs[type_name][1]:
        element = spec if kind.name in ("BASE", "NAME") else spec[0]
        element_kind, element_spec = (kind, spec) if kind.name in ("BASE", "NAME") else element
        if element_kind.name == "NAME":
            found |= byte_fields(element_spec, seen)
        elif element_spec[0] in ("byte", "char"):
            found.add(f"{type_name}.{name}")
    return found


def test_every_byte_field_of_the_nodes_messages_is_known():
    """Nodes read these with messages.byte_value; a new one needs the same (see messages.py)."""
    found: set[str] = set()
    for name in NODES:
        cls = load_node_class(name)
        for decl in (*cls.publishes, *cls.subscribes):
            found |= byte_fields(decl.type)
    found |= byte_fields("tf2_msgs/msg/TFMessage")
    assert found == {"diagnostic_msgs/msg/DiagnosticStatus.level"}


def test_byte_values_of_both_hosts_read_the_same():
    assert messages.byte_value(b"\x02") == messages.byte_value(2) == 2
    assert messages.new("diagnostic_msgs/msg/DiagnosticStatus", level=b"\x02").level == 2
    for bad in (b"", b"\x01\x02", 256, -1):
        with pytest.raises(messages.MessageError):
            messages.byte_value(bad)


def preflight_status(tmp_path, repo, level_as_rclpy_gives_it: bytes) -> Any:
    """The monitor's preflight diagnostic after a /sim/preflight whose level is rclpy's bytes."""
    host = EmbeddedHost([repo / "config" / "galley.yaml"])
    host.add_node(load_node_class("monitor"), parameters={"diagnostics_period_s": 0.5})
    probe = host.participant("probe")
    diagnostics: list[Any] = []
    probe.create_subscription(
        "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", diagnostics.append, QoS()
    )
    report = messages.new(
        "diagnostic_msgs/msg/DiagnosticArray", status=[{"name": "sim: scene", "message": "scene kitchen"}]
    )
    report.status[0].level = level_as_rclpy_gives_it  # what an rclpy subscription callback receives
    probe.create_publisher("/sim/preflight", "diagnostic_msgs/msg/DiagnosticArray", QoS.latched()).publish(
        report
    )
    host.run_for(0.6)
    host.shutdown()
    return {s.name: s for s in diagnostics[-1].status}["monitor: preflight"]


def test_the_monitor_judges_a_preflight_report_with_rclpy_byte_levels(tmp_path, repo):
    passed = preflight_status(tmp_path, repo, b"\x00")
    assert passed.level == 0 and passed.message == "scene kitchen"
    failed = preflight_status(tmp_path, repo, b"\x02")
    assert failed.level == 2 and failed.message == "scene kitchen"


# -- logger severities -----------------------------------------------------------------------


class RclpyLikeLogger:
    """rclpy's rule: a call site (the first frame outside the logger) keeps its first severity."""

    def __init__(self) -> None:
        self.sites: dict[tuple[str, int, int], str] = {}
        self.lines: list[tuple[str, str]] = []

    def _log(self, severity: str, message: str) -> None:
        frame = inspect.currentframe()
        while (
            frame is not None
            and frame.f_code.co_filename == __file__
            and "self" in frame.f_locals
            and (frame.f_locals["self"] is self)
        ):
            frame = frame.f_back
        assert frame is not None
        site = (frame.f_code.co_filename, frame.f_lineno, frame.f_lasti)
        if self.sites.setdefault(site, severity) != severity:
            raise ValueError("Logger severity cannot be changed between calls.")
        self.lines.append((severity, message))

    def debug(self, message: str) -> None:
        self._log("debug", message)

    def info(self, message: str) -> None:
        self._log("info", message)

    def warning(self, message: str) -> None:
        self._log("warning", message)

    def error(self, message: str) -> None:
        self._log("error", message)


def log_outcome(log: Any, ok: bool) -> None:
    (log.info if ok else log.warning)("step done")  # one call site, two severities


def test_the_hosts_logger_wrapper_survives_one_call_site_at_two_severities():
    raw = RclpyLikeLogger()
    log_outcome(raw, True)
    with pytest.raises(ValueError, match="severity cannot be changed"):
        log_outcome(raw, False)  # the fake reproduces rclpy's rule
    wrapped_inner = RclpyLikeLogger()
    wrapped = PerSeverityLogger(wrapped_inner)
    for ok in (True, False, True):
        log_outcome(wrapped, ok)
    assert [s for s, _ in wrapped_inner.lines] == ["info", "warning", "info"]


def test_the_task_executor_logs_a_success_and_a_failure_under_rclpys_rule(repo, tmp_path):
    """A step that succeeds, then one that fails, with the executor's logger held to rclpy's rule."""
    episode = tmp_path / "episode.json"
    episode.write_text(json.dumps(Episode("kitchen", 0, Pose2D(-1.0, 0.8, 0.0), (), {}).to_dict()))
    host = EmbeddedHost([repo / "config" / "galley.yaml"])
    host.add_node(load_node_class("sim"), parameters={"episode_file": str(episode), "cameras_enabled": False})
    host.add_node(
        load_node_class("map_server"), parameters={"yaml_filename": str(repo / "maps" / "kitchen.yaml")}
    )
    host.add_node(load_node_class("global_planner"))
    host.add_node(load_node_class("diff_drive_controller"), parameters={"use_tf": True})
    executor = host.add_node(load_node_class("task_executor"), parameters={"step_time_limit_s": 15.0})
    executor.log = strict = RclpyLikeLogger()  # the bare rule, without the ROS 2 host's wrapper
    results: list[Any] = []
    probe = host.participant("probe")
    probe.create_subscription("/task/result", "galley_msgs/msg/EpisodeResult", results.append, QoS.latched())
    probe.create_publisher("/task/plan", "galley_msgs/msg/TaskPlan", QoS.latched()).publish(
        messages.new("galley_msgs/msg/TaskPlan", steps=["move to the blue zone", "move to the purple zone"])
    )
    assert host.run_until(lambda: bool(results), 40.0)
    host.shutdown()
    assert list(results[-1].step_success) == [True, False]  # blue takes about 10 s, purple 26 s
    assert "exceeded the 15 s step time limit" in results[-1].step_reason[1]
    severities = [s for s, m in strict.lines if m.startswith("step ")]
    assert severities == ["info", "warning"]


def test_a_joint_state_as_fast_dds_pads_it_reads_back() -> None:
    """rclpy's Fast DDS pads a JointState without efforts 4 bytes past what rosbags accepts.

    A policy's /arm/joint_command recorded under ros2 launch (the diffusion_policy node, seed 464197)
    had every message so padded: 268 bytes where rosbags' own serialisation has 264, and rosbags
    refused all 14,149 of them ("CDR message size mismatch"), so the bag could not be trained on.
    """
    from rosbags.serde import SerdeError

    from galley_runtime.rosbags_messages import deserialize, serialize

    msg = messages.new(
        "sensor_msgs/msg/JointState",
        name=["waist", "gripper"],
        position=[0.5, 1.0],
        velocity=[0.1, 0.0],
    )
    raw = serialize(msg)
    read = deserialize(raw + bytes([0xF0, 0xD8, 0x0D, 0x8E]), "sensor_msgs/msg/JointState")  # as recorded
    assert list(read.name) == ["waist", "gripper"] and list(read.position) == [0.5, 1.0]
    assert len(read.effort) == 0
    with pytest.raises(SerdeError, match="size mismatch"):  # more than padding: still refused
        deserialize(raw + bytes(8), "sensor_msgs/msg/JointState")
    with pytest.raises(SerdeError):  # shorter than its fields: refused
        deserialize(raw[:-8], "sensor_msgs/msg/JointState")
