"""``task_executor``: Kitchen-R's policy evaluator. Runs a plan step by step and judges each step.

Subscribes /task/plan (galley_msgs/TaskPlan). For ``move to the <zone> zone`` it sends the zone's
approach pose as a goal of Nav2's navigate_to_pose action and waits for its result (``move_with``
``navigate_to_pose``, which the oracle stack sets: the step time limit or an abort cancels the
goal), or publishes it on /goal_pose and waits for /navigation/status (or a planner failure on
/planner/status) (``goal_pose``: a learned policy follows /goal_pose); see
:mod:`galley_nodes.nodes.base_mover`. For ``pick`` / ``place`` it publishes a galley_msgs/ArmGoal on
/arm/goal and waits for /arm/status. Each step is judged on ground truth from TF (``map ->
base_link``, ``map -> object/<name>``) by :mod:`galley_core.tasks.judging`'s criteria, within
``step_time_limit_s`` of simulated time. Episode events (STEP_STARTED / STEP_SUCCEEDED / STEP_FAILED
/ EPISODE_DONE) go to /episode/events, where an ABORT from the monitor ends the episode;
/task/status tells the state and /task/result (latched) the outcome. The same runs as an action:
``task/execute`` (galley_msgs/ExecuteInstruction: an instruction in, feedback per step, a result;
cancel stops the robot), see :mod:`galley_nodes.nodes.task_action`.

With ``max_replans`` > 0, a failed or aborted step does not end the episode while replans are left:
the executor publishes the world state on /task/replan (std_msgs/String, a
:class:`~galley_core.tasks.replanning.PlanContext` as JSON: where each object is, what the gripper
holds, the steps done and why the last failed) and runs the plan the task planner answers with on
/task/plan (an empty plan: the goal holds already). The monitor's ABORT of the failed step is
then not the episode's end. /task/result lists the steps of every plan in order.

This module runs the steps and judges them; :mod:`galley_nodes.nodes.step_goals` sends each step's
goal to the node that executes it and teleports after a failed step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from galley_core.config import param
from galley_core.scene import Scene
from galley_core.tasks.executor import ExecutorConfig, PlanRunner, move_goal
from galley_core.tasks.grammar import Action, InvalidPlanError, Step, parse_plan, validate_plan
from galley_core.tasks.judging import PickRetreat, judge_step, move_succeeded, robot_zone, settled
from galley_core.tasks.replanning import EpisodeReplans
from galley_nodes.nodes.base_mover import NAVIGATE_CALL, BaseMover
from galley_nodes.nodes.ground_truth import TfGroundTruth
from galley_nodes.nodes.step_goals import StepGoals
from galley_nodes.nodes.task_action import EXECUTE_SERVES, TaskAction
from galley_runtime import messages
from galley_runtime.config_files import find_scene
from galley_runtime.msg_constants import (
    ABORT,
    ACTION_ACTIVE,
    ACTION_FAILED,
    ACTION_IDLE,
    ACTION_SUCCEEDED,
    ARM_STOP,
    EPISODE_DONE,
    STEP_FAILED,
    STEP_STARTED,
    STEP_SUCCEEDED,
)
from galley_runtime.node import Node, Publishes, ServerGoal, Subscribes, Timer
from galley_runtime.qos import QoS


@dataclass(frozen=True)
class TaskExecutorConfig(ExecutorConfig):
    scene: str = param("kitchen", "scene name (config/scenes/<name>.yaml) or path; zones and objects")
    rate_hz: float = param(10.0, "rate of the time-limit check", unit="Hz", gt=0.0)
    map_frame: str = param("map", "frame of goals and ground truth")
    base_frame: str = param("base_link", "robot base frame")
    completion: str = param(
        "status",
        "how a step ends: 'status' (the executing node's terminal status on /navigation/status or "
        "/arm/status, then judged) or 'criteria' (as soon as ground truth meets the step's success "
        "criterion, checked at rate_hz, a move also facing its goal within nav_heading_tolerance_rad, "
        "a pick also carrying its object at pick_carry_height_m, drawn back pick_retreat_m; for learned "
        "policies, which report no status)",
        choices=("status", "criteria"),
    )
    pick_hold_distance_m: float = param(
        0.05,
        "with completion 'criteria', a pick also needs the tool centre point this close to the "
        "object's grasp point (a knocked object rises too), and a place needs it farther (let go)",
        unit="m",
        gt=0.0,
    )
    gripper_frame: str = param("gripper_link", "TF frame of the gripper (completion 'criteria')")
    move_with: str = param(
        "goal_pose",
        "how a move step drives: 'navigate_to_pose' (Nav2's action; canceled when the step ends "
        "otherwise) or 'goal_pose' (the topic, which a learned policy follows)",
        choices=("navigate_to_pose", "goal_pose"),
    )
    tcp_offset_m: float = param(0.11, "tool centre point along the gripper frame's x", unit="m")
    max_replans: int = param(
        0,
        "replans per episode after a failed or aborted step: the task planner plans what remains "
        "from the world state (/task/replan); 0: the first failure ends the episode",
        ge=0,
    )


#: The steps whose end /navigation/status and /arm/status report.
_NAVIGATION_ACTIONS: frozenset[Action] = frozenset({"move"})
_ARM_ACTIONS: frozenset[Action] = frozenset({"pick", "place"})


class TaskExecutorNode(Node):
    name = "task_executor"
    Config = TaskExecutorConfig
    subscribes = (
        Subscribes("task/plan", "galley_msgs/msg/TaskPlan", "on_plan", QoS.latched()),
        Subscribes(
            "navigation/status", "galley_msgs/msg/ActionStatus", "on_navigation_status", QoS.latched(10)
        ),
        Subscribes("planner/status", "galley_msgs/msg/ActionStatus", "on_planner_status", QoS.latched(10)),
        Subscribes("arm/status", "galley_msgs/msg/ActionStatus", "on_arm_status", QoS.latched(10)),
        Subscribes("episode/events", "galley_msgs/msg/EpisodeEvent", "on_episode_event", QoS(depth=100)),
        Subscribes(
            "task_planner/status", "galley_msgs/msg/ActionStatus", "on_task_planner_status", QoS.latched(10)
        ),
    )
    publishes = (
        Publishes("goal_pose", "geometry_msgs/msg/PoseStamped"),
        Publishes("arm/goal", "galley_msgs/msg/ArmGoal"),
        Publishes("episode/events", "galley_msgs/msg/EpisodeEvent", QoS(depth=100)),
        Publishes("task/status", "galley_msgs/msg/ActionStatus", QoS.latched()),
        Publishes("task/result", "galley_msgs/msg/EpisodeResult", QoS.latched()),
        Publishes("sim/teleport", "geometry_msgs/msg/PoseStamped"),
        Publishes("task/replan", "std_msgs/msg/String"),
        Publishes("task/instruction", "std_msgs/msg/String", QoS(depth=10)),
    )
    timers = (Timer("on_tick", period_s=lambda c: 1.0 / c.rate_hz),)
    calls = (NAVIGATE_CALL,)
    serves = (EXECUTE_SERVES,)
    uses_tf = True

    def __init__(self, host: Any, config: TaskExecutorConfig) -> None:
        super().__init__(host, config)
        self.scene: Scene = find_scene(config.scene)
        self.runner: PlanRunner | None = None
        self.instruction = ""
        self._step_start_ns = 0
        self._plan_start_ns = 0
        self._active_seen = False
        self.truth = TfGroundTruth(self, self.scene)
        self.replans = EpisodeReplans(config.max_replans)
        self._replan_ns = 0
        self.mover = BaseMover(self, use_action=config.move_with == "navigate_to_pose", on_end=self._moved)
        self.goals = StepGoals(self, self.scene, self.truth, self.mover)
        self.retreat = PickRetreat(config, 1.0 / config.rate_hz)
        self.task = TaskAction(self)
        self._status(ACTION_IDLE, "", "waiting for a plan on /task/plan")

    # -- plan ----------------------------------------------------------------------------------

    def on_execute(self, handle: ServerGoal) -> str | None:
        return self.task.accept(handle)

    def on_execute_cancel(self, handle: ServerGoal) -> None:
        """Cancel /task/execute: stop the base and the arm, end the plan and the goal."""
        if handle is not self.task.goal or self.task.planning or self._running() is None:
            self.task.cancel_idle(handle)
            return
        step = self._running()
        self.mover.stop()
        if step is not None and step.action in _ARM_ACTIONS:
            self.publish("arm/goal", self.msg("galley_msgs/msg/ArmGoal", action=ARM_STOP))
        assert self.runner is not None
        self.runner.abort("canceled by the /task/execute client", self.now_s())
        self._finish_episode()

    def on_plan(self, msg: Any) -> None:
        steps = list(msg.steps)
        replan = self.replans.pending
        if not replan and self.task.ignores_plan(msg.instruction):
            self.log.info(f"ignored the plan for {msg.instruction!r}: its /task/execute goal was canceled")
            return
        try:
            plan = parse_plan(steps)
            validate_plan(plan, self.scene)
            if not plan and not replan:  # an empty replan: nothing remains to do
                raise InvalidPlanError("the plan has no steps")
        except InvalidPlanError as err:
            self._status(ACTION_FAILED, msg.instruction, f"plan rejected, nothing executed: {err}")
            if not replan and self.task.goal is not None:
                self.task.end(False, f"plan {steps} rejected, nothing executed: {err}")
            if replan:
                self._replan_failed(f"the replan was rejected: {err}")
            return
        if replan:
            self.replans.answered(steps)
            self.log.info(f"replan {self.replans.count}: {'; '.join(steps) or 'nothing remains'}")
        else:
            self.instruction = msg.instruction
            self.replans.start(steps)
        self.runner = PlanRunner(plan, self.config)
        self.task.on_plan(msg.instruction, steps, replan=replan)
        self._plan_start_ns = self.now_ns()
        self.log.info(f"executing {len(self.runner.plan)} steps for {msg.instruction!r}")
        self._begin()

    def _begin(self) -> None:
        runner = self.runner
        if runner is None or runner.done:
            self._finish_episode()
            return
        step = runner.begin(self.now_s())
        self._step_start_ns = self.now_ns()
        self._active_seen = False
        self.retreat.reset()
        self._event(STEP_STARTED, step)
        self._status(ACTION_ACTIVE, self.instruction, "", phase=str(step))
        self.goals.send(step)

    # -- status from the executing nodes -------------------------------------------------------

    def _accept(self, msg: Any, actions: frozenset[Action]) -> bool:
        """Whether a status ends the running step, if one of ``actions``: terminal, stamped after it began."""
        step = self._running()
        if step is None or step.action not in actions:
            return False
        if messages.time_ns_from_msg(msg.header.stamp) < self._step_start_ns:
            return False
        if msg.state == ACTION_ACTIVE:
            self._active_seen = True
            return False
        return msg.state == ACTION_FAILED or (msg.state == ACTION_SUCCEEDED and self._active_seen)

    def on_navigation_status(self, msg: Any) -> None:
        if not self.mover.use_action and self._accept(msg, _NAVIGATION_ACTIONS):
            self._judge(msg)

    def on_planner_status(self, msg: Any) -> None:
        step = self._running()
        if (
            not self.mover.use_action
            and step is not None
            and step.action == "move"
            and msg.state == ACTION_FAILED
            and messages.time_ns_from_msg(msg.header.stamp) >= self._step_start_ns
        ):
            self._end_step(False, f"no path: {msg.reason}")

    def on_arm_status(self, msg: Any) -> None:
        if self._accept(msg, _ARM_ACTIONS):
            self._judge(msg)

    def on_episode_event(self, msg: Any) -> None:
        if msg.kind != ABORT or self.runner is None or self.runner.done:
            return
        if messages.time_ns_from_msg(msg.header.stamp) < self._plan_start_ns:
            # Under DDS the monitor's abort of a failed plan can arrive after the next plan began.
            self.log.info(f"ignored an abort stamped before the plan began: {msg.reason}")
            return
        reason = f"aborted by {msg.rule or 'the monitor'}: {msg.reason}"
        self.log.warning(reason)
        self.mover.stop()
        self.runner.abort(reason, self.now_s())
        if not self._replan(reason):
            self._finish_episode()

    def on_task_planner_status(self, msg: Any) -> None:
        stamp = messages.time_ns_from_msg(msg.header.stamp)
        if self.task.planning and msg.state == ACTION_FAILED and msg.goal_id.strip() == self.task.instruction:
            self.task.end(False, f"no plan: {msg.reason}")
        if self.replans.pending and msg.state == ACTION_FAILED and stamp >= self._replan_ns:
            self._replan_failed(f"no replan: {msg.reason}")

    def on_tick(self) -> None:
        if self.task.waiting_s > self.config.step_time_limit_s:
            self.task.end(False, f"no plan within the {self.config.step_time_limit_s:.0f} s step time limit")
        if self.replans.pending and self.now_ns() - self._replan_ns > self.config.step_time_limit_s * 1e9:
            self._replan_failed(f"no replan within the {self.config.step_time_limit_s:.0f} s step time limit")
        runner = self.runner
        if runner is None or runner.done:
            return
        step = self._running() if self.config.completion == "criteria" else None
        ok, why = self._criterion() if step is not None else (False, "")
        drawn_back = self.retreat.over(step, self.truth) if step is not None else True
        if ok and settled(runner, self.scene, self.truth, self.config, arm_drawn_back=drawn_back):
            self._end_step(True, "")
        elif runner.timed_out(self.now_s()):  # met but not settled (not turned, not carried): judged (ok)
            reason = f"exceeded the {self.config.step_time_limit_s:.0f} s step time limit"
            self._end_step(ok, "" if ok else reason + (f"; {why}" if why else ""))

    # -- judging -------------------------------------------------------------------------------

    def _moved(self, success: bool, reason: str) -> None:
        """The end of a move step's navigate_to_pose goal: judge the step, or fail it with the reason."""
        step = self._running()
        if step is not None and step.action == "move":
            if success:
                self._end_step(*self._criterion())
            else:
                self._end_step(False, reason)

    def _judge(self, msg: Any) -> None:
        step = self._running()
        assert step is not None
        if msg.state == ACTION_FAILED:
            self._end_step(False, msg.reason or "the executing node reported a failure")
            return
        self._end_step(*self._criterion())

    def _criterion(self) -> tuple[bool, str]:
        """Whether the running step's success criterion holds on ground truth now, and why not."""
        assert self.runner is not None and self._running() is not None
        c = self.config
        return judge_step(
            self.runner,
            self.scene,
            self.truth,
            c,
            place_goal=self.goals.place_goal,
            hold_distance_m=c.pick_hold_distance_m if c.completion == "criteria" else None,
        )

    def _end_step(self, success: bool, reason: str) -> None:
        self.mover.stop()  # a move's goal still in flight: the step ended otherwise (its time limit)
        runner = self.runner
        assert runner is not None
        step = runner.current
        result = runner.finish(success, reason, self.now_s())
        if not success and not runner.stopped and step is not None:
            self.goals.teleport_after(step)
        self._event(STEP_SUCCEEDED if success else STEP_FAILED, step, reason)
        text = (
            f"step {len(runner.results)}/{len(runner.plan)} {result.step!r}: "
            f"{'succeeded' if success else 'failed'} in {result.duration_s:.1f} s"
            + (f" ({reason})" if reason else "")
        )
        self.log.info(text) if success else self.log.warning(text)  # one call site per severity (rclpy)
        if success or not runner.stopped or not self._replan(reason):
            self._begin()

    # -- replanning ----------------------------------------------------------------------------

    def _replan(self, reason: str) -> bool:
        """Ask the task planner for what remains, if a replan is left; whether one was asked for."""
        runner = self.runner
        assert runner is not None
        if not self.replans.request(runner.outcomes(), reason):
            return False
        self._replan_ns = self.now_ns()
        objects = self.truth.locate(self.config.pick_hold_distance_m)
        base = self.truth.base_pose()
        zone = robot_zone(self.scene, base)
        if not move_succeeded(base, move_goal(self.scene, zone), self.config)[0]:
            zone = ""  # between zones (an abort mid-drive): the plan drives first
        context = self.replans.context(self.instruction, objects, zone)
        self.publish("task/replan", self.msg("std_msgs/msg/String", data=context.to_json()))
        count = f"{self.replans.count}/{self.config.max_replans}"
        self._status(ACTION_ACTIVE, self.instruction, f"replanning ({count}): {reason}")
        self.log.warning(f"replan {count} requested: {reason}")
        return True

    def _replan_failed(self, reason: str) -> None:
        """No plan came for the replan: the episode ends with the failure it had."""
        self.replans.pending = False
        self.replans.replans[-1]["error"] = reason
        self.log.warning(reason)
        self._finish_episode()

    def _finish_episode(self) -> None:
        runner = self.runner
        if runner is None:
            return
        earlier = self.replans.earlier
        results = runner.outcomes()
        self._event(EPISODE_DONE, None, "" if runner.success else "a step failed")
        self.publish(
            "task/result",
            self.msg(
                "galley_msgs/msg/EpisodeResult",
                header=self._header(),
                instruction=self.instruction,
                plan=[s[0] for s in earlier] + [str(s) for s in runner.plan],
                step_success=[s[1] for s in earlier + results],
                step_duration_s=[s[2] for s in earlier + results],
                step_reason=[s[3] for s in earlier + results],
                success=runner.success,
            ),
        )
        self._status(
            ACTION_SUCCEEDED if runner.success else ACTION_FAILED,
            self.instruction,
            "" if runner.success else "a step failed",
        )
        self.task.finish(earlier + results, runner.success)
        self.runner = None if runner.done else runner

    # -- helpers -------------------------------------------------------------------------------

    def _running(self) -> Step | None:
        runner = self.runner
        return None if runner is None or runner.done or runner.started_s is None else runner.current

    def _header(self) -> dict[str, Any]:
        return {"stamp": self.stamp(), "frame_id": self.config.map_frame}

    def _event(self, kind: int, step: Step | None, reason: str = "") -> None:
        runner = self.runner
        index = (
            -1
            if step is None or runner is None
            else runner.index
            if kind == STEP_STARTED
            else len(runner.results) - 1
        )
        self.task.on_event(kind, index, "" if step is None else str(step), reason)
        self.publish(
            "episode/events",
            self.msg(
                "galley_msgs/msg/EpisodeEvent",
                header=self._header(),
                kind=kind,
                step_index=index,
                step="" if step is None else str(step),
                rule="task_executor",
                reason=reason,
            ),
        )

    def _status(self, state: int, goal_id: str, reason: str, phase: str = "") -> None:
        self.publish(
            "task/status",
            self.msg(
                "galley_msgs/msg/ActionStatus",
                header=self._header(),
                state=state,
                goal_id=goal_id,
                phase=phase,
                reason=reason,
            ),
        )
