"""``monitor``: watches every step of an episode and aborts bad ones early (Kitchen-R Sec. V-E).

Subscribes ``/episode/events`` (galley_msgs/EpisodeEvent from the task executor: STEP_STARTED with
the step's index and text, STEP_SUCCEEDED / STEP_FAILED, EPISODE_DONE), the simulator's
``/sim/preflight`` (latched diagnostic_msgs/DiagnosticArray) and ground truth
``/sim/ground_truth/base_pose``; looks up ``object/<name>`` and the gripper in TF; and subscribes to
every topic of ``rate_rules`` once it appears in the graph (its type is taken from there), whose
rates are counted on the messages' stamps (a TFMessage: its first transform's): a stamp
subscription (``NodeHost.create_stamp_subscription``), for which the embedded host builds no message
that nothing else reads. With
``cameras_enabled`` false (the simulator renders no base or wrist camera) the camera topics
(galley_nodes.stack.CAMERA_TOPICS) leave the rate rules: nothing publishes them, under either host.
The rules themselves are :mod:`galley_core.monitoring`.

Publishes the failure that ends an episode as an ABORT (galley_msgs/EpisodeEvent with ``rule`` and
``reason``) on ``/episode/events``, where the task executor acts on it, and its other verdicts (the
checks at the end of each step, as STEP_SUCCEEDED / STEP_FAILED with ``rule`` and ``reason``) on
``/monitor/events``: on /episode/events they would read like the executor's own reports of the same
kinds. The place goal is the ``target_pose`` of the last PLACE goal on ``/arm/goal``, else the
centre of the zone the base moved to last. ``/diagnostics``
(diagnostic_msgs/DiagnosticArray) carries the state of the episode and of every rule, every
``diagnostics_period_s`` and at each verdict.

The tool centre point is ``tcp_offset_m`` along the x axis of ``gripper_frame`` (galley_mm's
``tcp`` site sits 0.11 m along gripper_link's x, between the fingertips).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from galley_core.config import Config, param, sub_config
from galley_core.monitoring import EpisodeMonitor, Verdict, WorldState, parse_rate_rules
from galley_core.monitoring.monitor import MONITOR_CONFIG_PARTS, combine_configs
from galley_core.tf_tree import TransformError
from galley_nodes.stack import CAMERA_TOPICS
from galley_runtime import messages
from galley_runtime.config_files import find_scene
from galley_runtime.conversions import diagnostic_array_msg, pose2d_from_pose_msg
from galley_runtime.msg_constants import (
    ABORT,
    ARM_PLACE,
    EPISODE_DONE,
    STEP_FAILED,
    STEP_STARTED,
    STEP_SUCCEEDED,
)
from galley_runtime.node import Node, Publishes, Subscribes, Timer
from galley_runtime.qos import QoS

__all__ = ["MonitorNode", "MonitorNodeConfig", "watched_rates"]

_EVENTS_QOS = QoS(depth=100)


@dataclass(frozen=True)
class MonitorSettings(Config):
    scene: str = param("kitchen", "scene name (config/scenes/<name>.yaml) or path: zones and objects")
    check_rate_hz: float = param(10.0, "how often the rules run", unit="Hz", gt=0.0)
    diagnostics_period_s: float = param(1.0, "period of /diagnostics", unit="s", gt=0.0)
    map_frame: str = param("map", "fixed frame of objects and ground truth")
    gripper_frame: str = param("gripper_link", "TF frame of the gripper")
    tcp_offset_m: float = param(0.11, "tool centre point's offset along the gripper frame's x axis", unit="m")
    cameras_enabled: bool = param(
        True, "the simulator renders its base and wrist cameras (false: their topics' rates are not watched)"
    )


MonitorNodeConfig = combine_configs("MonitorNodeConfig", MonitorSettings, *MONITOR_CONFIG_PARTS)


def watched_rates(config: Any) -> dict[str, float]:
    """Topic -> lowest acceptable rate (Hz) the monitor watches with ``config`` (a MonitorNodeConfig)."""
    rules = parse_rate_rules(config.rate_rules)
    off = () if config.cameras_enabled else CAMERA_TOPICS
    return {topic: min_hz for topic, min_hz in rules.items() if topic not in off}


class MonitorNode(Node):
    name = "monitor"
    Config = MonitorNodeConfig
    subscribes = (
        Subscribes("/episode/events", "galley_msgs/msg/EpisodeEvent", "on_event", _EVENTS_QOS),
        Subscribes("/sim/preflight", "diagnostic_msgs/msg/DiagnosticArray", "on_preflight", QoS.latched()),
        Subscribes("/sim/ground_truth/base_pose", "geometry_msgs/msg/PoseStamped", "on_base_pose"),
        Subscribes("/arm/goal", "galley_msgs/msg/ArmGoal", "on_arm_goal", _EVENTS_QOS),
    )
    publishes = (
        Publishes("/episode/events", "galley_msgs/msg/EpisodeEvent", _EVENTS_QOS),
        Publishes("/monitor/events", "galley_msgs/msg/EpisodeEvent", _EVENTS_QOS),
        Publishes("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray"),
    )
    timers = (
        Timer("on_tick", period_s=lambda c: 1.0 / c.check_rate_hz),
        Timer("on_diagnostics", period_s=lambda c: c.diagnostics_period_s),
    )
    uses_tf = True

    def __init__(self, host: Any, config: Any) -> None:
        super().__init__(host, config)
        self.settings = sub_config(MonitorSettings, config)
        self.scene = find_scene(self.settings.scene)
        rules = tuple(f"{topic} {min_hz:g}" for topic, min_hz in watched_rates(config).items())
        self.monitor = EpisodeMonitor.from_config(self.scene, replace(config, rate_rules=rules))
        self._base: Any = None
        self._watching: set[str] = set()
        self._missing_tf: set[str] = set()
        self._subscribe_watched()

    # -- inputs --------------------------------------------------------------------------------

    def on_event(self, msg: Any) -> None:
        now, kind = self.now_ns(), int(msg.kind)
        if kind == STEP_STARTED:
            self._report(self.monitor.step_started(int(msg.step_index), str(msg.step), now))
        elif kind in (STEP_SUCCEEDED, STEP_FAILED):
            succeeded = kind == STEP_SUCCEEDED
            verdicts = self.monitor.step_ended(
                int(msg.step_index), succeeded, now, self._world(), str(msg.reason)
            )
            self._report(verdicts)
        elif kind == EPISODE_DONE:
            self._report(self.monitor.episode_done(now))

    def on_preflight(self, msg: Any) -> None:
        ok = all(messages.byte_value(s.level) == 0 for s in msg.status)
        text = "; ".join(str(s.message) for s in msg.status) or "empty preflight report"
        self._report(self.monitor.preflight(ok, text, self.now_ns()))

    def on_arm_goal(self, msg: Any) -> None:
        if int(msg.action) == ARM_PLACE:
            position = msg.target_pose.pose.position
            self.monitor.set_place_goal(float(position.x), float(position.y))

    def on_base_pose(self, msg: Any) -> None:
        self._base = msg.pose

    def _on_watched(self, topic: str) -> Any:
        def callback(stamp_ns: int) -> None:  # unstamped (0): counted when it arrives
            self.monitor.on_message(topic, stamp_ns if stamp_ns > 0 else self.now_ns())

        return callback

    # -- checks --------------------------------------------------------------------------------

    def on_tick(self) -> None:
        self._subscribe_watched()
        if self.monitor.active:
            self._report(self.monitor.tick(self.now_ns(), self._world()))

    def on_diagnostics(self) -> None:
        self.publish(
            "/diagnostics",
            diagnostic_array_msg(self.monitor.diagnostics(self.now_ns()), self.now_ns(), "monitor"),
        )

    def _subscribe_watched(self) -> None:
        """Subscribe to watched topics that have appeared in the graph since the last tick."""
        missing = set(self.monitor.watched_topics) - self._watching
        if not missing:
            return
        for topic, types in self.host.topic_names_and_types():
            if topic in missing and types:
                self.host.create_stamp_subscription(topic, types[0], self._on_watched(topic), QoS(depth=100))
                self._watching.add(topic)

    def _world(self) -> WorldState:
        s = self.settings
        objects = {}
        for spec in self.scene.objects:
            frame = f"object/{spec.name}"
            try:
                objects[spec.name] = self.lookup(s.map_frame, frame)
            except TransformError:
                continue
        try:
            gripper = self.lookup(s.map_frame, s.gripper_frame)
            tcp = gripper.apply(np.array([s.tcp_offset_m, 0.0, 0.0]))
        except TransformError:
            tcp = None
        base = None if self._base is None else pose2d_from_pose_msg(self._base)
        return WorldState(objects, base, tcp)

    # -- outputs -------------------------------------------------------------------------------

    def _report(self, verdicts: list[Verdict]) -> None:
        for verdict in verdicts:
            if verdict.abort:
                kind = ABORT
                self.log.warning(f"abort ({verdict.rule}): {verdict.reason}")
            else:
                kind = STEP_SUCCEEDED if verdict.passed else STEP_FAILED
                self.log.info(f"{'pass' if verdict.passed else 'FAIL'} ({verdict.rule}): {verdict.reason}")
            self.publish(
                "/episode/events" if verdict.abort else "/monitor/events",
                self.msg(
                    "galley_msgs/msg/EpisodeEvent",
                    header={"stamp": self.stamp()},
                    kind=kind,
                    step_index=verdict.step_index,
                    step=verdict.step,
                    rule=verdict.rule,
                    reason=verdict.reason,
                ),
            )
        if verdicts:
            self.on_diagnostics()
