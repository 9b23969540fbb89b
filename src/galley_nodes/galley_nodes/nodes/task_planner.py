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
Failure reasons start with the kind (``empty_instruction``, ``unknown_name``, ``off_grammar``,
``unavailable``, ``timeout``, ...) of :class:`galley_core.tasks.planning.PlanningError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from galley_core.config import Config, param
from galley_core.scene import Scene, load_scene, scene_path
from galley_core.tasks.planning import Planner, PlanningError, PromptConfig
from galley_core.tasks.suite import SuiteEntry, SuiteError, load_suite
from galley_learning.planners import BACKENDS, WORKER_MODES
from galley_nodes.config_files import config_dirs
from galley_nodes.msg_constants import ACTION_ACTIVE, ACTION_FAILED, ACTION_IDLE, ACTION_SUCCEEDED
from galley_nodes.node import Node, Publishes, Subscribes
from galley_nodes.qos import QoS


@dataclass(frozen=True)
class TaskPlannerConfig(PromptConfig):
    backend: str = param("galley", "planner backend", choices=BACKENDS)
    scene: str = param("kitchen", "scene name (config/scenes/<name>.yaml) or path; zones and objects")
    suite: str = param("kitchen_v1", "instruction suite (config/suites/<name>.yaml) or path; examples")
    weights: str = param("", "galley: weights file (.pt, its .json beside it); empty: the shipped weights")
    base_url: str = param(
        "", "openai: server URL ending in /v1; empty: $GALLEY_OPENAI_BASE_URL / $OPENAI_BASE_URL"
    )
    model: str = param("", "openai: model name; empty: from the environment or the server")
    api_key_env: str = param("OPENAI_API_KEY", "openai: environment variable holding the API key")
    timeout_s: float = param(60.0, "openai: time limit of one request", unit="s", gt=0.0)
    http_retries: int = param(2, "openai: extra tries after a connection error, timeout, 429 or 5xx", ge=0)
    structured: str = param(
        "auto",
        "openai: how the constraint is sent",
        choices=("auto", "json_schema", "json_object", "vllm", "llama_cpp", "none"),
    )
    vision: bool = param(True, "openai, transformers: send the top-down image (off for text-only models)")
    model_path: str = param("", "llama_cpp: GGUF model file; transformers: model directory or hub id")
    device: str = param(
        "auto",
        "transformers: where the model runs (auto: cuda if there is one)",
        choices=("auto", "cpu", "cuda"),
    )
    dtype: str = param(
        "auto",
        "transformers: weights' dtype (auto: bfloat16 on cuda, float32 on cpu)",
        choices=("auto", "float32", "bfloat16", "float16"),
    )
    worker: str = param(
        "auto",
        "where the backend runs: a worker process, so that a crash or hang in native model code fails "
        "the plan and not the host (auto: for llama_cpp and transformers), or inline",
        choices=WORKER_MODES,
    )
    worker_timeout_s: float = param(
        300.0, "in a worker process: the longest the backend may take to load or to plan", unit="s", gt=0.0
    )


def backend_options(config: TaskPlannerConfig) -> dict[str, Any]:
    """The options of ``make_planner`` for the configured backend."""
    if config.backend == "galley":
        return {"weights": config.weights}
    if config.backend == "openai":
        return {
            "base_url": config.base_url,
            "model": config.model,
            "api_key_env": config.api_key_env,
            "timeout_s": config.timeout_s,
            "retries": config.http_retries,
            "structured": config.structured,
            "vision": config.vision,
        }
    if config.backend == "transformers":
        return {
            "model_path": config.model_path,
            "device": config.device,
            "dtype": config.dtype,
            "vision": config.vision,
        }
    return {"model_path": config.model_path}


def prompt_config(config: Config) -> PromptConfig:
    """The prompt part of a configuration that extends :class:`PromptConfig`."""
    return PromptConfig(**{name: getattr(config, name) for name in PromptConfig.__dataclass_fields__})


def load_suite_entries(name: str) -> list[SuiteEntry]:
    """The entries of suite ``name`` (config/suites/<name>.yaml) or of the file ``name``; none if empty."""
    if not name:
        return []
    path = Path(name)
    if not path.suffix:
        found = [
            d / "suites" / f"{name}.yaml" for d in config_dirs() if (d / "suites" / f"{name}.yaml").is_file()
        ]
        path = found[0] if found else path
    return load_suite(path)[1]


def image_from_msg(msg: Any) -> np.ndarray[Any, Any]:
    """(H, W, 3) uint8 RGB of a sensor_msgs/Image in rgb8, bgr8, rgba8 or bgra8.

    Raises:
        ValueError: another encoding, naming it.
    """
    channels = {"rgb8": 3, "bgr8": 3, "rgba8": 4, "bgra8": 4}
    if msg.encoding not in channels:
        raise ValueError(f"top-down image encoding {msg.encoding!r}; publish rgb8, bgr8, rgba8 or bgra8")
    data = np.asarray(msg.data, dtype=np.uint8).reshape(msg.height, msg.width, -1)[..., :3]
    return data[..., ::-1].copy() if msg.encoding.startswith("bgr") else data.copy()


class TaskPlannerNode(Node):
    name = "task_planner"
    Config = TaskPlannerConfig
    subscribes = (
        Subscribes("task/instruction", "std_msgs/msg/String", "on_instruction", QoS(depth=10)),
        Subscribes("camera/top_down/image_raw", "sensor_msgs/msg/Image", "on_image", QoS.latched()),
    )
    publishes = (
        Publishes("task/plan", "galley_msgs/msg/TaskPlan", QoS.latched()),
        Publishes("task_planner/status", "galley_msgs/msg/ActionStatus", QoS.latched()),
    )

    def __init__(self, host: Any, config: TaskPlannerConfig) -> None:
        super().__init__(host, config)
        from galley_learning.planners import make_planner

        self.scene: Scene = load_scene(scene_path(config.scene, [d / "scenes" for d in config_dirs()]))
        self.image: np.ndarray[Any, Any] | None = None
        self.pending: str | None = None
        self.planner: Planner | None = None
        self._error = ""
        try:
            suite = (
                load_suite_entries(config.suite) if config.examples > 0 and config.backend != "galley" else []
            )
            self.planner = make_planner(
                config.backend,
                prompt=prompt_config(config),
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
            self.image = image_from_msg(msg)
        except ValueError as err:
            self._status(ACTION_FAILED, "", str(err))
            return
        if self.pending is not None:
            instruction, self.pending = self.pending, None
            self._plan(instruction)

    def on_instruction(self, msg: Any) -> None:
        planner = self.planner
        if planner is not None and planner.accepts_image and self.image is None and msg.data.strip():
            self.pending = msg.data
            self._status(
                ACTION_ACTIVE, msg.data, "waiting for the top-down image on /camera/top_down/image_raw"
            )
            return
        self._plan(msg.data)

    def _plan(self, instruction: str) -> None:
        if self.planner is None:
            self._status(ACTION_FAILED, instruction, self._error)
            return
        self._status(ACTION_ACTIVE, instruction, "")
        try:
            plan = self.planner.plan(instruction, self.image, self.scene)
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
