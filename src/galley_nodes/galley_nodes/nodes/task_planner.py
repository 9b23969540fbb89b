"""``task_planner``: instruction + latched top-down image -> plan (Kitchen-R's VLM planner as a node).

Subscribes /task/instruction (std_msgs/String) and /camera/top_down/image_raw (sensor_msgs/Image,
latched, rgb8); publishes the plan on /task/plan (galley_msgs/TaskPlan, latched, read by the task
executor) and its progress on /task_planner/status (galley_msgs/ActionStatus: ACTIVE while
planning, SUCCEEDED with a plan, FAILED with the reason and no plan). The backend is chosen by
the ``backend`` parameter and imported lazily (``galley`` by default: offline, CPU). An
instruction that arrives before the image waits for it when the backend reads images.
The ``llama_cpp`` and ``transformers`` backends run in a worker process (``worker``): if their native
code crashes or hangs, the instruction fails with ``unavailable`` (how the worker died, the library
and the fix) or ``timeout``, and the host, the simulator and the recorder go on.
A replan request on /task/replan (std_msgs/String: the task executor's
:class:`~galley_core.tasks.replanning.PlanContext` as JSON, after a failed step) asks the simulator
for a fresh top-down image (/sim/render_top_down, std_msgs/Empty; after ``fresh_image_timeout_s``
without one, as under Isaac Sim, it goes on with the last image), then plans again with the
context: what remains of the instruction from where the objects are now, published on /task/plan
like any plan (with no steps when nothing remains).
Failure reasons start with the kind (``empty_instruction``, ``unknown_name``, ``off_grammar``,
``unavailable``, ``timeout``, ...) of :class:`galley_core.language.planning.PlanningError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from galley_core.config import sub_config
from galley_core.language.planning import Planner, PlanningError, PromptConfig
from galley_core.scene import Scene
from galley_core.tasks.replanning import PlanContext
from galley_core.tasks.suite import SuiteError
from galley_learning.planners import make_planner
from galley_learning.planners.configured import TaskPlannerConfig, backend_options, load_suite_entries
from galley_runtime.config_files import find_scene
from galley_runtime.conversions import RGB_ENCODINGS, image_from_msg
from galley_runtime.msg_constants import ACTION_ACTIVE, ACTION_FAILED, ACTION_IDLE, ACTION_SUCCEEDED
from galley_runtime.node import Node, Publishes, Subscribes, Timer
from galley_runtime.qos import QoS


def top_down_image(msg: Any) -> np.ndarray[Any, Any]:
    """(H, W, 3) uint8 RGB of the top-down sensor_msgs/Image.

    Raises:
        ValueError: not a colour encoding, naming it.
    """
    if msg.encoding not in RGB_ENCODINGS:
        raise ValueError(f"top-down image encoding {msg.encoding!r}; publish {', '.join(RGB_ENCODINGS)}")
    return image_from_msg(msg)


class TaskPlannerNode(Node):
    name = "task_planner"
    Config = TaskPlannerConfig
    subscribes = (
        Subscribes("task/instruction", "std_msgs/msg/String", "on_instruction", QoS(depth=10)),
        Subscribes("camera/top_down/image_raw", "sensor_msgs/msg/Image", "on_image", QoS.latched()),
        Subscribes("task/replan", "std_msgs/msg/String", "on_replan", QoS(depth=10)),
    )
    timers = (Timer("on_image_wait", period_s=lambda c: c.fresh_image_timeout_s / 4),)
    publishes = (
        Publishes("task/plan", "galley_msgs/msg/TaskPlan", QoS.latched()),
        Publishes("task_planner/status", "galley_msgs/msg/ActionStatus", QoS.latched()),
        Publishes("sim/render_top_down", "std_msgs/msg/Empty"),
    )

    def __init__(self, host: Any, config: TaskPlannerConfig) -> None:
        super().__init__(host, config)
        self.scene: Scene = find_scene(config.scene)
        self.image: np.ndarray[Any, Any] | None = None
        self.pending: str | None = None
        self.replan: PlanContext | None = None
        self.replan_asked_s = 0.0
        self.planner: Planner | None = None
        self._error = ""
        try:
            suite = (
                load_suite_entries(config.suite) if config.examples > 0 and config.backend != "galley" else []
            )
            self.planner = make_planner(
                config.backend,
                prompt=sub_config(PromptConfig, config),
                suite=suite,
                options=backend_options(config),
                worker=config.worker,
                timeout_s=config.worker_timeout_s,
            )
        except (PlanningError, SuiteError, FileNotFoundError, ValueError) as err:
            self._error = f"backend {config.backend!r} could not start: {err}"
            self.log.error(self._error)
        self._status(ACTION_IDLE, "", self._error or "waiting for an instruction on /task/instruction")

    def on_image(self, msg: Any) -> None:
        try:
            self.image = top_down_image(msg)
        except ValueError as err:
            self._status(ACTION_FAILED, "", str(err))
            return
        if self.pending is not None:
            instruction, self.pending = self.pending, None
            self._plan(instruction)
        if self.replan is not None:
            context, self.replan = self.replan, None
            self._plan(context.instruction, context)

    def on_replan(self, msg: Any) -> None:
        try:
            context = PlanContext.from_json(msg.data)
        except ValueError as err:
            self._status(ACTION_FAILED, "", str(err))
            return
        planner = self.planner
        if planner is not None and planner.accepts_image:  # plan on the world as it is now
            self.replan, self.replan_asked_s = context, self.now_s()
            self.publish("sim/render_top_down", self.msg("std_msgs/msg/Empty"))
            self._status(ACTION_ACTIVE, context.instruction, "replanning: waiting for a fresh top-down image")
            return
        self._plan(context.instruction, context)

    def on_image_wait(self) -> None:
        """A replan whose fresh image has not come in ``fresh_image_timeout_s`` plans on the last image."""
        waited = self.now_s() - self.replan_asked_s
        if self.replan is None or waited < self.config.fresh_image_timeout_s:
            return
        context, self.replan = self.replan, None
        self.log.warning(
            f"no fresh top-down image {waited:.1f} s after asking on /sim/render_top_down: "
            "replanning on the last image (the simulator does not render on request)"
        )
        self._plan(context.instruction, context)

    def on_instruction(self, msg: Any) -> None:
        planner = self.planner
        if planner is not None and planner.accepts_image and self.image is None and msg.data.strip():
            self.pending = msg.data
            self._status(
                ACTION_ACTIVE, msg.data, "waiting for the top-down image on /camera/top_down/image_raw"
            )
            return
        self._plan(msg.data)

    def _plan(self, instruction: str, context: PlanContext | None = None) -> None:
        if self.planner is None:
            self._status(ACTION_FAILED, instruction, self._error)
            return
        self._status(ACTION_ACTIVE, instruction, "")
        try:
            plan = self.planner.plan(instruction, self.image, self.scene, context)
        except PlanningError as err:
            self.log.warning(f"no plan for {instruction!r}: {err}")
            self._status(ACTION_FAILED, instruction, str(err))
            return
        self.log.info(f"plan for {instruction!r}: {'; '.join(plan.steps)}")
        self.publish(
            "task/plan",
            self.msg(
                "galley_msgs/msg/TaskPlan",
                header={"stamp": self.stamp(), "frame_id": ""},
                instruction=plan.instruction,
                steps=list(plan.steps),
            ),
        )
        self._status(ACTION_SUCCEEDED, instruction, "")

    def _status(self, state: int, instruction: str, reason: str) -> None:
        self.publish(
            "task_planner/status",
            self.msg(
                "galley_msgs/msg/ActionStatus",
                header={"stamp": self.stamp(), "frame_id": ""},
                state=state,
                goal_id=instruction,
                phase=self.config.backend,
                reason=reason,
            ),
        )
