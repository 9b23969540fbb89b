"""``failure_injector``: disturbs an episode once, on purpose, to evaluate replanning (MORE's feedback).

Off by default (``galley run`` / ``galley eval --inject knock|move`` add it). It reads the plan on
/task/plan and the steps on /episode/events, finds objects and the gripper in TF, and teleports one
object through the simulator's /sim/teleport, once per instruction:

* ``knock``: ``after_s`` into a move while the gripper holds an object (its transport), the object
  is knocked out of the gripper and lands on a free spot of the zone nearest to it that is not the
  move's target (typically the zone it was picked from);
* ``move``: ``after_s`` into a move while the gripper holds nothing, the object that the plan picks
  next is moved by "someone else" to a free spot of the zone nearest to it that is neither its zone
  nor its goal, so the robot arrives where it no longer is.

Either way a fresh plan can still succeed: the object rests in a zone the arm reaches. What was done
goes to /failure_injector/injected (std_msgs/String, latched, JSON: kind, object, from, to, step).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from galley_core.config import Config, param
from galley_core.geometry import Pose2D
from galley_core.scene import Scene
from galley_core.tasks.executor import place_target
from galley_core.tasks.grammar import InvalidPlanError, Step, parse_plan, parse_step
from galley_core.tasks.replanning import goal_zones, locate_objects
from galley_nodes.nodes.ground_truth import TfGroundTruth
from galley_runtime.config_files import find_scene
from galley_runtime.conversions import pose_msg
from galley_runtime.msg_constants import STEP_STARTED
from galley_runtime.node import Node, Publishes, Subscribes, Timer
from galley_runtime.qos import QoS

__all__ = ["FailureInjectorConfig", "FailureInjectorNode"]


@dataclass(frozen=True)
class FailureInjectorConfig(Config):
    kind: str = param("knock", "what to inject once per instruction", choices=("knock", "move"))
    after_s: float = param(4.0, "how far into the move step the object is teleported", unit="s", gt=0.0)
    scene: str = param("kitchen", "scene name (config/scenes/<name>.yaml) or path: zones and objects")
    rate_hz: float = param(10.0, "rate of the check", unit="Hz", gt=0.0)
    map_frame: str = param("map", "frame of ground truth and of the teleport")
    base_frame: str = param("base_link", "robot base frame")
    gripper_frame: str = param("gripper_link", "TF frame of the gripper")
    tcp_offset_m: float = param(0.11, "tool centre point along the gripper frame's x", unit="m")
    hold_distance_m: float = param(
        0.05, "an object is held with its grasp point this close to the tool centre point", unit="m", gt=0.0
    )


class FailureInjectorNode(Node):
    name = "failure_injector"
    Config = FailureInjectorConfig
    subscribes = (
        Subscribes("task/plan", "galley_msgs/msg/TaskPlan", "on_plan", QoS.latched()),
        Subscribes("episode/events", "galley_msgs/msg/EpisodeEvent", "on_event", QoS(depth=100)),
    )
    publishes = (
        Publishes("sim/teleport", "geometry_msgs/msg/PoseStamped"),
        Publishes("failure_injector/injected", "std_msgs/msg/String", QoS.latched()),
    )
    timers = (Timer("on_tick", period_s=lambda c: 1.0 / c.rate_hz),)
    uses_tf = True

    def __init__(self, host: Any, config: FailureInjectorConfig) -> None:
        super().__init__(host, config)
        self.scene: Scene = find_scene(config.scene)
        self.truth = TfGroundTruth(self, self.scene)
        self.instruction: str | None = None
        self.plan: list[Step] = []
        self.goals: dict[str, str] = {}
        self.move: tuple[int, Step, float] | None = None  # (index, step, start s) of the running move
        self.done = False

    def on_plan(self, msg: Any) -> None:
        try:
            plan = parse_plan(list(msg.steps))
        except InvalidPlanError:
            return
        if msg.instruction != self.instruction:  # a new instruction (a replan keeps its instruction)
            self.instruction, self.done = str(msg.instruction), False
            self.goals = goal_zones([str(s) for s in plan])
        self.plan = plan

    def on_event(self, msg: Any) -> None:
        self.move = None
        if int(msg.kind) == STEP_STARTED:
            try:
                step = parse_step(str(msg.step))
            except InvalidPlanError:
                return
            if step.action == "move":
                self.move = (int(msg.step_index), step, self.now_s())

    def on_tick(self) -> None:
        if self.done or self.move is None or self.now_s() - self.move[2] < self.config.after_s:
            return
        index, step, _ = self.move
        holding = self.truth.holding(self.config.hold_distance_m)
        if self.config.kind == "knock" and holding:
            self._inject(holding, avoid={step.target}, step=step)
        elif self.config.kind == "move" and not holding:
            nxt = next((s for s in self.plan[index + 1 :] if s.action == "pick"), None)
            if nxt is not None:
                where = dict(locate_objects(self.scene, self._positions()))
                avoid = {where.get(nxt.target, ""), self.goals.get(nxt.target, "")}
                self._inject(nxt.target, avoid=avoid, step=step)

    def _positions(self) -> dict[str, Any]:
        return {n: t.translation for n, t in self.truth.object_poses().items()}

    def _inject(self, obj: str, *, avoid: set[str], step: Step) -> None:
        positions = self._positions()
        if obj not in positions:
            return
        x, y = float(positions[obj][0]), float(positions[obj][1])
        zones = [z for z in self.scene.zones if z.name not in avoid]
        zone = min(zones, key=lambda z: math.hypot(z.center[0] - x, z.center[1] - y))
        others = {n: (float(p[0]), float(p[1])) for n, p in positions.items() if n != obj}
        tx, ty, tz = place_target(self.scene, zone.name, obj, others, zone.center)
        pose = pose_msg(Pose2D(tx, ty, 0.0))
        pose.position.z = tz
        header = {"stamp": self.stamp(), "frame_id": f"object/{obj}"}
        self.publish("sim/teleport", self.msg("geometry_msgs/msg/PoseStamped", header=header, pose=pose))
        self.done = True
        what = {"kind": self.config.kind, "object": obj, "to": zone.name, "step": str(step)}
        source = next(iter(avoid - {self.goals.get(obj)}), "")
        what["from"] = "gripper" if self.config.kind == "knock" else source
        self.publish("failure_injector/injected", self.msg("std_msgs/msg/String", data=json.dumps(what)))
        self.log.warning(f"injected {self.config.kind}: the {obj} to the {zone.name} zone during {step!s}")
