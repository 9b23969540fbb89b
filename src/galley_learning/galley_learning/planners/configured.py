"""The task planner's parameters and the planner they configure, for the node and the command alike.

:class:`TaskPlannerConfig` is the ``task_planner`` node's parameter set (a params file's
``task_planner`` section); :func:`planner_from_params` builds the planner that a parameter file
configures, as the node does, for ``galley plan``, ``galley eval`` and ``galley eval-planner``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from galley_core.config import param, sub_config
from galley_core.language.planning import Planner, PromptConfig
from galley_core.scene import Scene
from galley_core.tasks.suite import SuiteEntry, load_suite
from galley_learning.planners import BACKENDS, WORKER_MODES, make_planner
from galley_runtime.config_files import config_dirs, default_params_files, find_scene
from galley_runtime.params_file import config_for_node, load_params_files, parameters_for

__all__ = [
    "TaskPlannerConfig",
    "backend_options",
    "load_suite_entries",
    "planner_from_params",
]


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
    fresh_image_timeout_s: float = param(
        2.0,
        "replanning: how long to wait for the fresh top-down image asked of the simulator on "
        "/sim/render_top_down before planning on the last one (Isaac Sim's graphs do not answer it)",
        unit="s",
        gt=0.0,
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


def planner_from_params(
    backend: str | None, params_file: Path | None, overrides: dict[str, Any] | None = None
) -> tuple[Planner, Scene, TaskPlannerConfig]:
    """(planner, scene, config) built from the ``task_planner`` parameters; ``backend``, ``overrides`` win."""
    files = [params_file] if params_file else default_params_files()
    entries = load_params_files([f for f in files if f.is_file() or f == params_file])
    declared = TaskPlannerConfig.__dataclass_fields__
    values = parameters_for(entries, "/task_planner", declared)
    if backend:
        values["backend"] = (backend, "--planner")
    for name, value in (overrides or {}).items():
        values[name] = (value, f"--{name.replace('_', '-')}")
    config = config_for_node(TaskPlannerConfig, "task_planner", values)
    assert isinstance(config, TaskPlannerConfig)
    scene = find_scene(config.scene)
    suite = load_suite_entries(config.suite) if config.backend != "galley" and config.examples else []
    planner = make_planner(
        config.backend, prompt=sub_config(PromptConfig, config), suite=suite, options=backend_options(config)
    )
    return planner, scene, config
