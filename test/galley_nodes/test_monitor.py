"""Fault injection: the monitor node with the real simulator in the embedded host aborts bad episodes.

A participant plays the task executor (STEP_STARTED / STEP_SUCCEEDED on /episode/events).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from galley_core.episode import Episode, ObjectPlacement
from galley_core.geometry import Pose2D
from galley_core.scene import load_scene
from galley_nodes.nodes.monitor import ABORT, STEP_STARTED, STEP_SUCCEEDED, MonitorNode
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_sim.sim_node import SimNode


@pytest.fixture(scope="module")
def kitchen(request):
    return load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")


class Executor:
    """Publishes the task executor's episode events and collects the monitor's."""

    def __init__(self, host: EmbeddedHost) -> None:
        self.host = host
        me = host.participant("test_executor")
        self._events = me.create_publisher("/episode/events", "galley_msgs/msg/EpisodeEvent", QoS(depth=100))
        self.verdicts: list[Any] = []
        self.diagnostics: list[Any] = []
        for topic in ("/monitor/events", "/episode/events"):
            me.create_subscription(topic, "galley_msgs/msg/EpisodeEvent", self._on_event, QoS(depth=100))
        me.create_subscription(
            "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", self.diagnostics.append, QoS()
        )

    def _on_event(self, msg: Any) -> None:
        if msg.rule:  # the monitor's, not this executor's own events
            self.verdicts.append(msg)

    def event(self, kind: int, index: int, step: str) -> None:
        self._events.publish(
            messages.new("galley_msgs/msg/EpisodeEvent", kind=kind, step_index=index, step=step)
        )
        self.host.bus.deliver_pending()

    @property
    def aborts(self) -> list[Any]:
        return [v for v in self.verdicts if v.kind == ABORT]


def start(tmp_path, episode: Episode, **monitor_params: Any) -> tuple[EmbeddedHost, Executor]:
    path = tmp_path / "episode.json"
    path.write_text(json.dumps(episode.to_dict()))
    host = EmbeddedHost()
    executor = Executor(host)
    host.add_node(SimNode, parameters={"episode_file": str(path), "cameras_enabled": False})
    host.add_node(MonitorNode, parameters=monitor_params)
    return host, executor


def quiet_episode(kitchen, objects: tuple[ObjectPlacement, ...] = ()) -> Episode:
    return Episode("kitchen", 0, Pose2D(*kitchen.zone("blue").approach), objects, {})


def test_a_throttled_topic_aborts_the_episode_naming_the_topic(kitchen, tmp_path):
    host, executor = start(
        tmp_path,
        quiet_episode(kitchen),
        rate_rules=["/odom 40", "/scan_relay 8"],
    )
    relay = host.participant("relay")
    out = relay.create_publisher("/scan_relay", "sensor_msgs/msg/LaserScan", QoS())
    throttle = {"every": 1, "seen": 0}

    def forward(msg: Any) -> None:  # a logging pipeline that starts to drop scans
        throttle["seen"] += 1
        if throttle["seen"] % throttle["every"] == 0:
            out.publish(msg)

    relay.create_subscription("/scan", "sensor_msgs/msg/LaserScan", forward, QoS())
    host.run_for(0.55)
    executor.event(STEP_STARTED, 0, "move to the blue zone")
    host.run_for(2.0)
    assert executor.aborts == [], "healthy 10 Hz relay and 50 Hz odometry must pass"
    throttle["every"] = 4  # 2.5 Hz from now on
    host.run_for(2.0)
    [abort] = executor.aborts
    assert abort.rule == "topic_rate" and "/scan_relay" in abort.reason and "/odom" not in abort.reason
    assert abort.step_index == 0 and abort.step == "move to the blue zone"
    status = {s.name: s for s in executor.diagnostics[-1].status}
    assert status["monitor: episode"].level == 2 and "/scan_relay" in status["monitor: episode"].message


def test_an_object_falling_off_the_table_aborts_naming_it(kitchen, tmp_path):
    table_edge_y = -0.35  # the table's north edge (kitchen.yaml: centre y -0.8, depth 0.9)
    overhanging = ObjectPlacement("apple", "blue", -0.2, table_edge_y + 0.02, 0.0, "green", 0.0, 2.6)
    resting = ObjectPlacement("cup", "blue", -0.6, -0.7, 0.0, "green", -0.3, 2.6)
    host, executor = start(tmp_path, quiet_episode(kitchen, (overhanging, resting)))
    executor.event(STEP_STARTED, 0, "pick the cup")
    assert host.tf.lookup("map", "object/apple")[0].translation[2] > 0.7  # starts on the table
    host.run_for(3.0)
    [abort] = executor.aborts
    assert abort.rule == "fallen_object" and abort.reason.startswith("apple fell to the floor")
    assert "cup" not in abort.reason and abort.step == "pick the cup"


def test_a_step_past_its_time_limit_aborts_naming_the_step(kitchen, tmp_path):
    host, executor = start(tmp_path, quiet_episode(kitchen), move_time_limit_s=1.5)
    executor.event(STEP_STARTED, 0, "move to the blue zone")
    host.run_for(1.0)
    executor.event(STEP_SUCCEEDED, 0, "move to the blue zone")  # the robot starts at the approach pose
    executor.event(STEP_STARTED, 1, "move to the red zone")
    host.run_for(1.4)
    assert executor.aborts == []
    host.run_for(0.3)
    [passed, abort] = executor.verdicts
    assert passed.kind == STEP_SUCCEEDED and passed.rule == "move_goal"
    assert abort.kind == ABORT and abort.rule == "time_limit"
    assert "step 1 'move to the red zone' exceeded its time limit" in abort.reason
    assert (abort.step_index, abort.step) == (1, "move to the red zone")


def test_a_move_that_ends_far_from_its_goal_fails_and_preflight_is_reported(kitchen, tmp_path):
    host, executor = start(tmp_path, quiet_episode(kitchen), diagnostics_period_s=0.5)
    host.run_for(0.6)
    status = {s.name: s for s in executor.diagnostics[-1].status}
    assert (
        status["monitor: preflight"].level == 0 and "preflight passed" in status["monitor: preflight"].message
    )
    executor.event(STEP_STARTED, 0, "move to the green zone")
    host.run_for(0.5)
    executor.event(STEP_SUCCEEDED, 0, "move to the green zone")
    [abort] = executor.aborts
    assert abort.rule == "move_goal" and "> 0.1 m" in abort.reason
