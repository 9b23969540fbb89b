"""Replaying a recorded episode through the monitor reproduces the live verdicts, on the bag's clock."""

from __future__ import annotations

import json
from typing import Any

from galley_cli.main import main
from galley_cli.replay import replay
from galley_core.episode import Episode, ObjectPlacement
from galley_core.geometry import Pose2D
from galley_nodes.nodes.monitor import STEP_STARTED, STEP_SUCCEEDED, MonitorNode
from galley_nodes.nodes.recorder import RecorderNode
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_sim.sim_node import SimNode

MONITOR_PARAMS = """
monitor:
  ros__parameters:
    rate_rules: [/odom 40, /scan 8]
"""


def key(v: Any) -> tuple[Any, ...]:
    return (v.header.stamp.sec, v.header.stamp.nanosec, v.kind, v.rule, v.step_index, v.step, v.reason)


def record_live_episode(tmp_path, params) -> list[Any]:
    """An episode whose apple rolls off the table edge, recorded; returns the monitor's verdicts."""
    blue = (-0.5, 0.09, -1.5708)
    objects = (
        ObjectPlacement("apple", "blue", -0.2, -0.33, 0.0, "green", 0.0, 2.6),
        ObjectPlacement("cup", "blue", -0.6, -0.7, 0.0, "green", -0.3, 2.6),
    )
    episode = tmp_path / "episode.json"
    episode.write_text(json.dumps(Episode("kitchen", 7, Pose2D(*blue), objects, {}).to_dict()))
    host = EmbeddedHost(params_files=[params])
    host.add_node(SimNode, parameters={"episode_file": str(episode), "cameras_enabled": False})
    host.add_node(MonitorNode)
    me = host.participant("test_executor")
    events = me.create_publisher("/episode/events", "galley_msgs/msg/EpisodeEvent", QoS(depth=100))
    verdicts: list[Any] = []
    for topic in ("/episode/events", "/monitor/events"):
        me.create_subscription(
            topic,
            "galley_msgs/msg/EpisodeEvent",
            lambda m: verdicts.append(m) if m.rule else None,
            QoS(depth=100),
        )
    host.add_node(
        RecorderNode, parameters={"output_dir": str(tmp_path), "bag_name": "live", "split_period_s": 1.0}
    )

    def send(kind: int, index: int, step: str) -> None:
        events.publish(messages.new("galley_msgs/msg/EpisodeEvent", kind=kind, step_index=index, step=step))

    host.run_for(0.05)  # events between the monitor's 10 Hz ticks
    send(STEP_STARTED, 0, "move to the blue zone")
    host.run_for(0.2)
    send(STEP_SUCCEEDED, 0, "move to the blue zone")
    send(STEP_STARTED, 1, "pick the cup")
    host.run_for(3.0)
    host.shutdown()
    return verdicts


def test_replaying_the_bag_through_the_monitor_reproduces_the_live_verdicts(tmp_path, params_file, capsys):
    params = params_file(MONITOR_PARAMS, "monitor.yaml")
    live = record_live_episode(tmp_path, params)
    assert [v.rule for v in live] == ["move_goal", "fallen_object"]  # a pass, then the abort
    assert live[-1].kind == 3 and live[-1].reason.startswith("apple fell")
    replayed = replay(tmp_path / "live", nodes=["monitor"], params_files=[params], quiet=True)
    assert [key(v) for v in replayed] == [key(v) for v in live]
    # The command prints the same, on a bag a user names.
    assert main(["replay", str(tmp_path / "live"), "--params", str(params), "--rate", "1000"]) == 0
    out = capsys.readouterr().out
    assert "ABORT fallen_object: apple fell to the floor" in out and "pass  move_goal" in out


def test_replay_names_a_missing_bag(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nothing")]) == 2
    assert "is not a bag" in capsys.readouterr().err
